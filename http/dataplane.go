package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// DataPlane reads the Redis streams behind the groups for the monitoring
// API (docs/protocol.md §2.6 /offsets and /shards/{i}/messages, and the Grafana rows of §2.7
// through GrafanaDataPlane); monitoring.Reader implements it. Errors other than streams.ErrInvalidCursor are failures
// to read Redis.
type DataPlane interface {
	// GroupOffsets observes g's shards (a live Redis read).
	GroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error)
	// Page reads one page of a shard's entries (streams.Observer.Page).
	Page(ctx context.Context, shard streams.Shard, dir streams.Direction, cursor string, limit int) (streams.Page, error)
	GrafanaDataPlane
}

// errRedisNotConfigured answers the data-plane reads when the API has no
// DataPlane.
var errRedisNotConfigured = errors.New("redis is not configured")

// dataPlane returns the DataPlane, or errRedisNotConfigured.
func (a *API) dataPlane() (DataPlane, error) {
	if a.data == nil {
		return nil, errRedisNotConfigured
	}
	return a.data, nil
}

// dataPlaneError classifies a DataPlane error: a malformed cursor, or one
// whose page cannot be read within the read budget, is the client's
// (400), anything else a Redis failure.
func dataPlaneError(err error) error {
	switch {
	case errors.Is(err, streams.ErrInvalidCursor):
		return invalid("cursor: %v", err)
	case errors.Is(err, streams.ErrOverBudget):
		return invalid("%v", err)
	}
	return fmt.Errorf("%w: %w", contract.ErrDataPlane, err)
}

// offsets fetches #21's body from the committed group and a live Redis
// read.
func (a *API) offsets(ctx context.Context, key group.Key) (contract.Offsets, error) {
	g, err := a.runtime.Snapshot(ctx, key)
	if err != nil {
		return contract.Offsets{}, err
	}
	data, err := a.dataPlane()
	if err != nil {
		return contract.Offsets{}, err
	}
	o, err := data.GroupOffsets(ctx, g)
	if err != nil {
		return contract.Offsets{}, dataPlaneError(err)
	}
	return o, nil
}

// shardMessages serves #22: ?direction=FORWARD|BACKWARD (default)
// &cursor=&limit=25 (clamped to 1..1000). A shard index outside
// [0, shardCount) is 400.
func (a *API) shardMessages(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	body, truncated, err := a.messagesPage(r, ps)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	markTruncated(w, truncated)
	writeJSON(w, http.StatusOK, body)
}

// messagesPage reads #22's body; truncated says the read budget ended the
// page early (streams.Page.Truncated).
func (a *API) messagesPage(r *http.Request, ps httprouter.Params) (_ contract.MessagesPage, truncated bool, _ error) {
	key, err := pathKey(ps)
	if err != nil {
		return contract.MessagesPage{}, false, err
	}
	index, err := strconv.Atoi(ps.ByName("shardIndex"))
	if err != nil {
		return contract.MessagesPage{}, false, invalid("shardIndex: must be an integer")
	}
	q := r.URL.Query()
	dir, limit, err := pageQuery(q)
	if err != nil {
		return contract.MessagesPage{}, false, err
	}
	view, err := a.runtime.Group(r.Context(), key)
	if err != nil {
		return contract.MessagesPage{}, false, err
	}
	if index < 0 || index >= view.ShardCount {
		return contract.MessagesPage{}, false, invalid("shardIndex must be between 0 and %d", view.ShardCount-1)
	}
	data, err := a.dataPlane()
	if err != nil {
		return contract.MessagesPage{}, false, err
	}
	shard := streams.Shard{Index: index, Key: contract.StreamKey(key.StreamPrefix, index)}
	page, err := data.Page(r.Context(), shard, dir, q.Get("cursor"), limit)
	if err != nil {
		return contract.MessagesPage{}, false, dataPlaneError(err)
	}
	out := contract.MessagesPage{
		StreamPrefix:  key.StreamPrefix,
		ConsumerGroup: key.ConsumerGroup,
		Shard:         contract.Shard{ShardIndex: index},
		StreamKey:     shard.Key,
		Direction:     contract.Direction(page.Direction),
		Limit:         page.Limit,
		Records:       make([]contract.MessageRecord, len(page.Records)),
		NextCursor:    page.NextCursor,
	}
	for i, rec := range page.Records {
		out.Records[i] = contract.MessageRecord{
			StreamPrefix:      key.StreamPrefix,
			ConsumerGroup:     key.ConsumerGroup,
			Shard:             out.Shard,
			StreamKey:         rec.StreamKey,
			RecordID:          rec.ID,
			Fields:            rec.Fields,
			Payload:           rec.Payload,
			RecordTimestampMs: rec.TimestampMs,
			RecordTime:        contract.Instant(rec.TimestampMs),
		}
	}
	return out, page.Truncated, nil
}

// pageQuery reads the explorers' page parameters: direction
// (FORWARD|BACKWARD, default BACKWARD) and limit (default 25; clamped by the
// data plane). A malformed value is INVALID_REQUEST.
func pageQuery(q url.Values) (streams.Direction, int, error) {
	dir, err := streams.ParseDirection(q.Get("direction"))
	if err != nil {
		return "", 0, invalid("direction: must be FORWARD or BACKWARD")
	}
	limit := streams.DefaultPageLimit
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil {
			return "", 0, invalid("limit: must be an integer")
		}
	}
	return dir, limit, nil
}
