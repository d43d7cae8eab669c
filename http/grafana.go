package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// The Grafana rows (docs/protocol.md §2.7, #23–#30) are flat JSON arrays for the bundled
// dashboard's Infinity datasource. Except options/streams and
// options/consumer-groups, every endpoint requires the streamPrefix and
// consumerGroup query parameters (absent: 400), which may be blank.

// GrafanaDataPlane is what the Grafana rows read from Redis;
// monitoring.Reader implements it. Errors other than streams.ErrInvalidCursor
// and streams.ErrInvalidID are failures to read Redis.
type GrafanaDataPlane interface {
	// CachedGroupOffsets observes g's shards through the offset cache
	// (monitoring.Reader.CachedGroupOffsets).
	CachedGroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error)
	// Browse reads one page of the message explorer over shards
	// (streams.Observer.Browse).
	Browse(ctx context.Context, shards []streams.Shard, dir streams.Direction, cursor string, limit int) (streams.Page, error)
	// Lookup returns the entry recordID of each of shards that has it
	// (streams.Observer.Lookup).
	Lookup(ctx context.Context, shards []streams.Shard, recordID string) ([]streams.Record, error)
	// TotalLength sums the lengths of shards (streams.Observer.TotalLength).
	TotalLength(ctx context.Context, shards []streams.Shard) (int64, error)
}

// grafanaRoutes lists #23–#30, templates relative to the base path.
func (a *API) grafanaRoutes() []route {
	const grafana = "/monitoring/grafana"
	return []route{
		{Route{Method: http.MethodGet, Template: grafana + "/groups"}, rows(a, a.groupRows)},
		{Route{Method: http.MethodGet, Template: grafana + "/options/streams"}, rows(a, a.streamOptions)},
		{Route{Method: http.MethodGet, Template: grafana + "/options/consumer-groups"}, rows(a, a.consumerGroupOptions)},
		{Route{Method: http.MethodGet, Template: grafana + "/options/shards"}, rows(a, a.shardOptions)},
		{Route{Method: http.MethodGet, Template: grafana + "/members"}, rows(a, a.memberRows)},
		{Route{Method: http.MethodGet, Template: grafana + "/shards"}, rows(a, a.shardRows)},
		{Route{Method: http.MethodGet, Template: grafana + "/assignments"}, rows(a, a.assignmentRows)},
		{Route{Method: http.MethodGet, Template: grafana + "/messages"}, a.messageRowsHandle},
	}
}

// rows serves one Grafana rows endpoint: 200 with fetch's rows ([] when
// none), or fetch's error.
func rows[T any](a *API, fetch func(*http.Request) ([]T, error)) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		out, err := fetch(r)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, nonNil(out))
	}
}

// groupQuery reads the streamPrefix and consumerGroup parameters: both must
// be present; values are trimmed, blank ones are kept blank and the others
// must be valid names (docs/protocol.md §3).
func groupQuery(q url.Values) (group.Key, error) {
	var names [2]string
	for i, param := range []string{"streamPrefix", "consumerGroup"} {
		if !q.Has(param) {
			return group.Key{}, invalid("%s: query parameter is required", param)
		}
		names[i] = strings.TrimSpace(q.Get(param))
		if names[i] == "" {
			continue
		}
		if err := group.ValidateName(param, names[i]); err != nil {
			return group.Key{}, err
		}
	}
	return group.Key{StreamPrefix: names[0], ConsumerGroup: names[1]}, nil
}

// namedGroup is groupQuery for the rows of one group; ok is false when
// either name is blank (the answer is then []).
func namedGroup(q url.Values) (key group.Key, ok bool, err error) {
	key, err = groupQuery(q)
	return key, err == nil && key.StreamPrefix != "" && key.ConsumerGroup != "", err
}

// selectedGroups returns snapshots of the groups sel selects, sorted by
// stream prefix then consumer group: every group when both names are
// blank, those with the set name when one is, the named group when both
// are (none when it does not exist). Groups deleted meanwhile are skipped.
func (a *API) selectedGroups(ctx context.Context, sel group.Key) ([]*group.Group, error) {
	keys := []group.Key{sel}
	if sel.StreamPrefix == "" || sel.ConsumerGroup == "" {
		views, err := a.groups(ctx)
		if err != nil {
			return nil, err
		}
		keys = keys[:0]
		for _, v := range views {
			if (sel.StreamPrefix == "" || v.StreamPrefix == sel.StreamPrefix) && (sel.ConsumerGroup == "" || v.ConsumerGroup == sel.ConsumerGroup) {
				keys = append(keys, group.Key{StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup})
			}
		}
	}
	groups := make([]*group.Group, 0, len(keys))
	for _, k := range keys {
		g, err := a.runtime.Snapshot(ctx, k)
		if ge, ok := errors.AsType[*group.Error](err); ok && ge.Code == contract.CodeGroupNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// cachedOffsets projects the offset cache's observation of g's shards onto
// g. Without Redis, or when reading it fails (logged; counted by the
// metrics' data-plane wrapper), the Redis-observed fields are unknown
// (monitoring.Unobserved) rather than failing the rows.
func (a *API) cachedOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	if a.data != nil {
		o, err := a.data.CachedGroupOffsets(ctx, g)
		if err == nil {
			return o, nil
		}
		if ctx.Err() != nil {
			return contract.Offsets{}, ctx.Err()
		}
		a.log.Warn("grafana rows: offsets unknown, reading Redis failed", "stream", g.StreamPrefix, "group", g.ConsumerGroup, "err", err)
	}
	return monitoring.Project(g, monitoring.Unobserved(g.StreamPrefix, g.ShardCount)), nil
}

// eachSelected calls add, in order, for every group the query of r selects
// (groupQuery, selectedGroups) with its cached offsets (cachedOffsets); it
// stops at the first error.
func (a *API) eachSelected(r *http.Request, add func(*group.Group, contract.Offsets)) error {
	sel, err := groupQuery(r.URL.Query())
	if err != nil {
		return err
	}
	groups, err := a.selectedGroups(r.Context(), sel)
	if err != nil {
		return err
	}
	for _, g := range groups {
		o, err := a.cachedOffsets(r.Context(), g)
		if err != nil {
			return err
		}
		add(g, o)
	}
	return nil
}

// groupRows serves #23 for the groups the query selects (selectedGroups).
func (a *API) groupRows(r *http.Request) ([]contract.GrafanaGroupRow, error) {
	var out []contract.GrafanaGroupRow
	err := a.eachSelected(r, func(g *group.Group, o contract.Offsets) {
		row := contract.GrafanaGroupRow{
			StreamPrefix: g.StreamPrefix, ConsumerGroup: g.ConsumerGroup, State: contract.GroupState(g.State),
			GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch, MetadataVersion: g.MetadataVersion,
			ShardCount: g.ShardCount, ActiveMembers: len(g.LiveMemberIDs()), TotalMembers: len(g.Members),
			TotalStreamLength: o.TotalStreamLength, TotalPendingCount: o.TotalPendingCount, TotalLag: o.TotalLag,
			ProducedPerSecond: o.ProducedPerSecond, ConsumedPerSecond: o.ConsumedPerSecond,
			TotalMemoryUsageBytes: o.TotalMemoryUsageBytes, MemoryUsageKnown: o.MemoryUsageKnown,
		}
		for _, id := range g.LiveMemberIDs() {
			row.CurrentShards += len(g.Members[id].CurrentAssignment)
		}
		for _, t := range g.Targets {
			row.TargetShards += len(t)
		}
		for _, m := range g.Members {
			if m.Holds() {
				row.RevokingShards += len(m.Revoking)
			}
		}
		row.AssignedShardRatio = fmt.Sprintf("%d / %d", row.CurrentShards, g.ShardCount)
		out = append(out, row)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// streamOptions serves #24: every stream prefix with a group, sorted.
func (a *API) streamOptions(r *http.Request) ([]contract.GrafanaOption, error) {
	views, err := a.groups(r.Context())
	if err != nil {
		return nil, err
	}
	var out []contract.GrafanaOption
	for _, v := range views { // sorted by prefix, then group
		if len(out) == 0 || out[len(out)-1].Value != v.StreamPrefix {
			out = append(out, contract.GrafanaOption{Text: v.StreamPrefix, Value: v.StreamPrefix})
		}
	}
	return out, nil
}

// consumerGroupOptions serves #25: every group ("P / G", value G), sorted by
// prefix then group; a non-blank streamPrefix parameter keeps that
// prefix's groups only.
func (a *API) consumerGroupOptions(r *http.Request) ([]contract.GrafanaOption, error) {
	prefix := strings.TrimSpace(r.URL.Query().Get("streamPrefix"))
	views, err := a.groups(r.Context())
	if err != nil {
		return nil, err
	}
	var out []contract.GrafanaOption
	for _, v := range views {
		if prefix == "" || v.StreamPrefix == prefix {
			out = append(out, contract.GrafanaOption{Text: v.StreamPrefix + " / " + v.ConsumerGroup, Value: v.ConsumerGroup})
		}
	}
	return out, nil
}

// shardOptions serves #26: the named group's shards {":i", "i"}.
func (a *API) shardOptions(r *http.Request) ([]contract.GrafanaOption, error) {
	key, ok, err := namedGroup(r.URL.Query())
	if !ok {
		return nil, err
	}
	v, err := a.runtime.Group(r.Context(), key)
	if err != nil {
		return nil, err
	}
	out := make([]contract.GrafanaOption, v.ShardCount)
	for i := range out {
		out[i] = contract.GrafanaOption{Text: shardLabel(i), Value: strconv.Itoa(i)}
	}
	return out, nil
}

// shardLabel is a shard's display label ":i".
func shardLabel(i int) string { return ":" + strconv.Itoa(i) }

// memberRows serves #27: every member record of the named group, by id.
func (a *API) memberRows(r *http.Request) ([]contract.GrafanaMemberRow, error) {
	key, ok, err := namedGroup(r.URL.Query())
	if !ok {
		return nil, err
	}
	members, err := a.runtime.Members(r.Context(), key)
	if err != nil {
		return nil, err
	}
	out := make([]contract.GrafanaMemberRow, len(members))
	for i, m := range members {
		out[i] = contract.GrafanaMemberRow{
			StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup,
			MemberID: m.MemberID, MemberName: m.MemberName, State: contract.MemberState(m.State),
			MemberEpoch: m.MemberEpoch, MetadataVersion: m.MetadataVersion,
			CurrentShardCount: len(m.CurrentAssignment), RevokingShardCount: len(m.Revoking),
			RuntimeMaxConcurrency: m.RuntimeMaxConcurrency, ActiveConsumerWorkers: m.ActiveConsumerWorkers,
			LastHeartbeatAt: m.LastHeartbeatAt, MemberLeaseExpiresAt: m.MemberLeaseExpiresAt,
		}
	}
	return out, nil
}

// idList joins sorted member ids with commas ("" when none).
func idList(ids []string) string { return strings.Join(ids, ",") }

// shardRows serves #28 for the shards of the groups the query selects
// (selectedGroups), by group then shard index.
func (a *API) shardRows(r *http.Request) ([]contract.GrafanaShardRow, error) {
	var out []contract.GrafanaShardRow
	err := a.eachSelected(r, func(g *group.Group, o contract.Offsets) {
		owners := g.Owners()
		for _, s := range o.Shards {
			i := s.Shard.ShardIndex
			own := owners[i]
			out = append(out, contract.GrafanaShardRow{
				StreamPrefix: s.StreamPrefix, ConsumerGroup: s.ConsumerGroup, ShardCount: g.ShardCount,
				ShardIndex: i, ShardLabel: shardLabel(i), StreamPosition: s.StreamPosition,
				LagKnown:          s.Lag != nil,
				ProducedPerSecond: s.ProducedPerSecond, ConsumedPerSecond: s.ConsumedPerSecond,
				MemoryUsageKnown:     s.MemoryUsageBytes != nil,
				TargetOwnerMemberIDs: idList(own.Target), CurrentOwnerMemberIDs: idList(own.Current),
				OwnerMemberIDs: idList(s.OwnerMemberIDs), OwnerState: own.State(),
			})
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// assignmentRows serves #29: one row per readable shard 0..shardCount-1 of
// the named group.
func (a *API) assignmentRows(r *http.Request) ([]contract.GrafanaAssignmentRow, error) {
	key, ok, err := namedGroup(r.URL.Query())
	if !ok {
		return nil, err
	}
	g, err := a.runtime.Snapshot(r.Context(), key)
	if err != nil {
		return nil, err
	}
	owners := g.Owners()
	out := make([]contract.GrafanaAssignmentRow, g.ShardCount)
	for i := range out {
		own := owners[i]
		out[i] = contract.GrafanaAssignmentRow{
			StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, ShardIndex: i,
			TargetOwners: idList(own.Target), CurrentOwners: idList(own.Current), RevokingOwners: idList(own.Revoking),
		}
	}
	return out, nil
}

// allShards is the shardSelector of message rows read from every shard.
const allShards = "all"

// shardSelector parses the messages' shardIndex parameter: "all", ".*",
// "__all" or "$__all" (any case), blank or absent select every shard;
// otherwise it must be an integer (range-checked by the caller).
func shardSelector(s string) (index int, all bool, err error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", allShards, ".*", "__all", "$__all":
		return 0, true, nil
	}
	if index, err = strconv.Atoi(s); err != nil {
		return 0, false, invalid("shardIndex: must be a shard index or all")
	}
	return index, false, nil
}

// messageRowsHandle serves #30 as rows does, setting HeaderReadTruncated
// when the read budget ended the page early.
func (a *API) messageRowsHandle(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	out, truncated, err := a.messageRows(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	markTruncated(w, truncated)
	writeJSON(w, http.StatusOK, nonNil(out))
}

// messageRows serves #30 for the named group:
// ?shardIndex=&direction=&cursor=&limit=&recordId=. The shard selector
// (shardSelector) picks one in-range shard (else 400) or every shard; the
// page is streams.Observer.Browse's (plain, merged "all:…" and tail
// cursors). A recordId instead looks the entry up on every shard (selector
// all, cursor ignored, no next cursor). truncated says the read budget
// ended the page early (streams.Page.Truncated).
func (a *API) messageRows(r *http.Request) (_ []contract.GrafanaMessageRow, truncated bool, _ error) {
	q := r.URL.Query()
	key, ok, err := namedGroup(q)
	if !ok {
		return nil, false, err
	}
	dir, limit, err := pageQuery(q)
	if err != nil {
		return nil, false, err
	}
	index, all, err := shardSelector(q.Get("shardIndex"))
	if err != nil {
		return nil, false, err
	}
	view, err := a.runtime.Group(r.Context(), key)
	if err != nil {
		return nil, false, err
	}
	if !all && (index < 0 || index >= view.ShardCount) {
		return nil, false, invalid("shardIndex must be between 0 and %d", view.ShardCount-1)
	}
	data, err := a.dataPlane()
	if err != nil {
		return nil, false, err
	}
	shards, selector := streams.ShardsOf(key.StreamPrefix, view.ShardCount), allShards
	recordID := strings.TrimSpace(q.Get("recordId"))
	if !all && recordID == "" {
		shards, selector = shards[index:index+1], strconv.Itoa(index)
	}
	page, err := messagePage(r.Context(), data, shards, dir, q.Get("cursor"), limit, recordID)
	if err != nil {
		return nil, false, err
	}
	total, err := data.TotalLength(r.Context(), shards)
	if err != nil {
		return nil, false, dataPlaneError(err)
	}
	out := make([]contract.GrafanaMessageRow, len(page.Records))
	for i, rec := range page.Records {
		fields, _ := json.Marshal(rec.Fields) // a map of strings always encodes
		out[i] = contract.GrafanaMessageRow{
			StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup,
			ShardIndex: rec.Shard, ShardSelector: selector, ShardLabel: shardLabel(rec.Shard), StreamKey: rec.StreamKey,
			RecordID: rec.ID, Payload: rec.Payload, FieldsJSON: string(fields),
			PageDirection: contract.Direction(page.Direction), PageLimit: page.Limit, PageNextCursor: page.NextCursor, PageTotalMessages: total,
			RecordTimestampMs: rec.TimestampMs, RecordTime: contract.Instant(rec.TimestampMs),
		}
	}
	return out, page.Truncated, nil
}

// messagePage reads the page of messageRows: the lookup of recordID when it
// is set, else a Browse page. Malformed ids and cursors are 400.
func messagePage(ctx context.Context, data DataPlane, shards []streams.Shard, dir streams.Direction, cursor string, limit int, recordID string) (streams.Page, error) {
	if recordID == "" {
		page, err := data.Browse(ctx, shards, dir, cursor, limit)
		if err != nil {
			return streams.Page{}, dataPlaneError(err)
		}
		return page, nil
	}
	records, err := data.Lookup(ctx, shards, recordID)
	switch {
	case errors.Is(err, streams.ErrInvalidID), errors.Is(err, streams.ErrOverBudget):
		return streams.Page{}, invalid("recordId: %v", err)
	case err != nil:
		return streams.Page{}, dataPlaneError(err)
	}
	return streams.Page{Direction: dir, Limit: streams.ClampLimit(limit), Records: records}, nil
}
