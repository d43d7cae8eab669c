package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// HistoryQuery selects entries of a group's assignment history: those of
// one shard when Shard is set, those at or after Since when it is not
// zero.
type HistoryQuery struct {
	Shard *int
	Since time.Time
}

// History reads the assignment history of group g of stream prefix p
// (GET …/history): why each shard's target owner changed, oldest first.
func (c *Coordinator) History(ctx context.Context, p, g string, q HistoryQuery) (contract.HistoryView, error) {
	v := url.Values{}
	if q.Shard != nil {
		v.Set(contract.HistoryShardParam, strconv.Itoa(*q.Shard))
	}
	if !q.Since.IsZero() {
		v.Set(contract.HistorySinceParam, q.Since.UTC().Format(time.RFC3339Nano))
	}
	path := contract.Expand(contract.GroupHistory, p, g)
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out contract.HistoryView
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}
