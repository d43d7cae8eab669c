package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// history serves GET GroupHistory: the group's assignment history
// (docs/observability.md, "Assignment history"), filtered by the shard
// and since query parameters.
func (a *API) history(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	read(a, func(ctx context.Context, key group.Key) (contract.HistoryView, error) {
		q, err := historyQuery(r.URL.Query())
		if err != nil {
			return contract.HistoryView{}, err
		}
		g, err := a.runtime.Snapshot(ctx, key)
		if err != nil {
			return contract.HistoryView{}, err
		}
		return g.HistoryView(q), nil
	}, asIs[contract.HistoryView])(w, r, ps)
}

// historyQuery reads the history's query parameters: shard, a shard
// index, and since, an RFC 3339 time or Unix epoch milliseconds.
func historyQuery(v url.Values) (group.HistoryQuery, error) {
	var q group.HistoryQuery
	if s := v.Get(contract.HistoryShardParam); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, invalid("%s: must be a shard index (an integer ≥ 0), got %q", contract.HistoryShardParam, s)
		}
		q.Shard = &n
	}
	if s := v.Get(contract.HistorySinceParam); s != "" {
		at, err := parseSince(s)
		if err != nil {
			return q, invalid("%s: must be an RFC 3339 time (2006-01-02T15:04:05Z) or Unix epoch milliseconds, got %q", contract.HistorySinceParam, s)
		}
		q.Since = at
	}
	return q, nil
}

// parseSince reads Unix epoch milliseconds (digits only) or an RFC 3339
// time.
func parseSince(s string) (contract.Instant, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 {
		return contract.Instant(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return contract.InstantOf(t), nil
}
