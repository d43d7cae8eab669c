package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// grafanaCoord answers the group reads from real groups (GROUP_NOT_FOUND
// for others); every other call goes to the fakeCoord.
type grafanaCoord struct {
	*fakeCoord
	groups map[group.Key]*group.Group
}

func (c *grafanaCoord) get(key group.Key) (*group.Group, error) {
	g, ok := c.groups[key]
	if !ok {
		return nil, group.Errorf(contract.CodeGroupNotFound, "Group not found")
	}
	return g.Clone(), nil
}

func (c *grafanaCoord) Groups(context.Context) ([]contract.GroupView, error) {
	keys := slices.SortedFunc(maps.Keys(c.groups), func(a, b group.Key) int {
		return cmp.Or(cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup))
	})
	views := make([]contract.GroupView, len(keys))
	for i, k := range keys {
		views[i] = c.groups[k].View()
	}
	return views, nil
}

func (c *grafanaCoord) Group(_ context.Context, key group.Key) (contract.GroupView, error) {
	g, err := c.get(key)
	if err != nil {
		return contract.GroupView{}, err
	}
	return g.View(), nil
}

func (c *grafanaCoord) Members(_ context.Context, key group.Key) ([]group.Member, error) {
	g, err := c.get(key)
	if err != nil {
		return nil, err
	}
	return g.MemberList(), nil
}

func (c *grafanaCoord) Snapshot(_ context.Context, key group.Key) (*group.Group, error) {
	return c.get(key)
}

// fakeData is a DataPlane with canned Redis answers that records the
// explorer calls; the /offsets methods are not implemented.
type fakeData struct {
	DataPlane
	// observations are projected by CachedGroupOffsets; a missing key
	// fails with offsetsErr.
	observations map[group.Key]monitoring.Observation
	offsetsErr   error
	page         streams.Page
	found        []streams.Record
	total        int64

	shards   []streams.Shard
	cursor   string
	dir      streams.Direction
	limit    int
	recordID string
}

func (f *fakeData) CachedGroupOffsets(_ context.Context, g *group.Group) (contract.Offsets, error) {
	o, ok := f.observations[g.Meta.Key()]
	if !ok {
		return contract.Offsets{}, f.offsetsErr
	}
	return monitoring.Project(g, o), nil
}

func (f *fakeData) Browse(_ context.Context, shards []streams.Shard, dir streams.Direction, cursor string, limit int) (streams.Page, error) {
	f.shards, f.dir, f.cursor, f.limit = shards, dir, cursor, limit
	return f.page, nil
}

func (f *fakeData) Lookup(_ context.Context, shards []streams.Shard, recordID string) ([]streams.Record, error) {
	f.shards, f.recordID = shards, recordID
	if recordID == "bogus" {
		return nil, fmt.Errorf("%w: %q", streams.ErrInvalidID, recordID)
	}
	return f.found, nil
}

func (f *fakeData) TotalLength(_ context.Context, shards []streams.Shard) (int64, error) {
	return f.total, nil
}

// grafanaGroups builds three groups: orders/audit (2 shards, no members),
// orders/orders-consumer (4 shards: member-a current on 0–2 and revoking
// 3, member-b targeted 2–3 and not yet owning; member-a reported progress
// on shard 0) and payments/orders-consumer (1 shard, no members).
func grafanaGroups(t *testing.T) map[group.Key]*group.Group {
	t.Helper()
	c := grouptest.New(t, 4)
	epoch := c.Join("member-a").MemberEpoch
	c.Heartbeat(c.Member("member-a", epoch, 0, 1, 2, 3))
	c.Join("member-b")
	epoch = c.Heartbeat(c.Member("member-a", epoch, 0, 1, 2, 3)).MemberEpoch
	hb := c.Member("member-a", epoch, 0, 1, 2)
	hb.RevokingShards = grouptest.Draining(3)
	delivered := "7-0"
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 0}, LastDeliveredID: &delivered, PendingCount: 5, UpdatedAt: c.Now}}
	c.Heartbeat(hb)
	out := map[group.Key]*group.Group{c.Group.Meta.Key(): c.Group}
	for _, k := range []struct {
		key    group.Key
		shards int
	}{{group.Key{StreamPrefix: "orders", ConsumerGroup: "audit"}, 2}, {group.Key{StreamPrefix: "payments", ConsumerGroup: "orders-consumer"}, 1}} {
		g := group.New()
		if err := g.Create(grouptest.Start, group.DefaultSettings(), k.key, contract.CreateRequest{InitialShardCount: &k.shards, RequestedBy: "test"}).Err; err != nil {
			t.Fatal(err)
		}
		out[k.key] = g
	}
	return out
}

func newGrafanaAPI(t *testing.T, data DataPlane) *API {
	t.Helper()
	return newTestAPI(&fakeCoord{}, func(o *Options) {
		o.Runtime = &grafanaCoord{fakeCoord: &fakeCoord{}, groups: grafanaGroups(t)}
		o.DataPlane = data
	})
}

const grafanaPath = "/coord/v1/monitoring/grafana"

func TestGrafanaRowsRequireGroupParameters(t *testing.T) {
	api := newGrafanaAPI(t, nil)
	for _, endpoint := range []string{"groups", "options/shards", "members", "shards", "assignments", "messages"} {
		for _, query := range []string{"", "?streamPrefix=orders", "?consumerGroup=orders-consumer"} {
			rec := do(api, "GET", grafanaPath+"/"+endpoint+query, "")
			errorOf(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
		}
		errorOf(t, do(api, "GET", grafanaPath+"/"+endpoint+"?streamPrefix=a/b&consumerGroup=", ""), http.StatusBadRequest, "INVALID_REQUEST")
	}
	for _, endpoint := range []string{"options/streams", "options/consumer-groups"} {
		if rec := do(api, "GET", grafanaPath+"/"+endpoint, ""); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", endpoint, rec.Code, rec.Body)
		}
	}
}

func TestGrafanaRowsOfOneGroupAreEmptyWhenANameIsBlank(t *testing.T) {
	api := newGrafanaAPI(t, nil) // messages would answer 503 if they read Redis
	for _, endpoint := range []string{"options/shards", "members", "assignments", "messages"} {
		for _, query := range []string{"?streamPrefix=&consumerGroup=", "?streamPrefix=orders&consumerGroup=", "?streamPrefix=%20&consumerGroup=orders-consumer"} {
			wantJSON(t, do(api, "GET", grafanaPath+"/"+endpoint+query, ""), http.StatusOK, `[]`)
		}
	}
	errorOf(t, do(api, "GET", grafanaPath+"/members?streamPrefix=orders&consumerGroup=nope", ""), http.StatusNotFound, "GROUP_NOT_FOUND")
}

func TestGrafanaOptions(t *testing.T) {
	api := newGrafanaAPI(t, nil)
	wantJSON(t, do(api, "GET", grafanaPath+"/options/streams", ""), http.StatusOK,
		`[{"__text":"orders","__value":"orders"},{"__text":"payments","__value":"payments"}]`)
	wantJSON(t, do(api, "GET", grafanaPath+"/options/consumer-groups", ""), http.StatusOK,
		`[{"__text":"orders / audit","__value":"audit"},{"__text":"orders / orders-consumer","__value":"orders-consumer"},
		  {"__text":"payments / orders-consumer","__value":"orders-consumer"}]`)
	wantJSON(t, do(api, "GET", grafanaPath+"/options/consumer-groups?streamPrefix=", ""), http.StatusOK,
		`[{"__text":"orders / audit","__value":"audit"},{"__text":"orders / orders-consumer","__value":"orders-consumer"},
		  {"__text":"payments / orders-consumer","__value":"orders-consumer"}]`)
	wantJSON(t, do(api, "GET", grafanaPath+"/options/consumer-groups?streamPrefix=payments", ""), http.StatusOK,
		`[{"__text":"payments / orders-consumer","__value":"orders-consumer"}]`)
	wantJSON(t, do(api, "GET", grafanaPath+"/options/shards?streamPrefix=orders&consumerGroup=audit", ""), http.StatusOK,
		`[{"__text":":0","__value":"0"},{"__text":":1","__value":"1"}]`)
}

// Without Redis the group rows answer with unknown offsets: zero lengths,
// null lag and rates, memory unknown, member-reported pending counts.
func TestGrafanaGroupRowsWithoutRedis(t *testing.T) {
	api := newGrafanaAPI(t, nil)
	wantJSON(t, do(api, "GET", grafanaPath+"/groups?streamPrefix=orders&consumerGroup=orders-consumer", ""), http.StatusOK,
		`[{"streamPrefix":"orders","consumerGroup":"orders-consumer","state":"RECONCILING","groupEpoch":3,"assignmentEpoch":3,
		   "metadataVersion":3,"shardCount":4,"activeMembers":2,"totalMembers":2,"currentShards":3,"targetShards":4,
		   "assignedShardRatio":"3 / 4","revokingShards":1,"totalStreamLength":0,"totalPendingCount":5,"totalLag":null,
		   "producedPerSecond":null,"consumedPerSecond":null,"totalMemoryUsageBytes":0,"memoryUsageKnown":false}]`)
	for query, want := range map[string][]string{
		"?streamPrefix=&consumerGroup=":                    {"orders/audit", "orders/orders-consumer", "payments/orders-consumer"},
		"?streamPrefix=orders&consumerGroup=":              {"orders/audit", "orders/orders-consumer"},
		"?streamPrefix=&consumerGroup=orders-consumer":     {"orders/orders-consumer", "payments/orders-consumer"},
		"?streamPrefix=payments&consumerGroup=audit":       nil,
		"?streamPrefix=payments&consumerGroup=%20audit%20": nil,
	} {
		var rows []contract.GrafanaGroupRow
		decode(t, do(api, "GET", grafanaPath+"/groups"+query, ""), &rows)
		var got []string
		for _, r := range rows {
			got = append(got, r.StreamPrefix+"/"+r.ConsumerGroup)
		}
		if !slices.Equal(got, want) {
			t.Errorf("groups%s: %v, want %v", query, got, want)
		}
	}
}

// decode decodes a 200 JSON body into v.
func decode(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatal(err)
	}
}

func TestGrafanaShardRows(t *testing.T) {
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	endpoint, id := "127.0.0.1:6379", "7-1"
	lag, pending, memory, produced, consumed := int64(2), int64(1), int64(300), 1.5, 0.25
	obs := monitoring.Unobserved("orders", 4)
	obs.Shards[1].RedisNodeEndpoint, obs.Shards[1].StreamLength, obs.Shards[1].LastRecordID = &endpoint, 9, &id
	obs.Shards[1].Lag, obs.Shards[1].GroupPending, obs.Shards[1].MemoryUsageBytes = &lag, &pending, &memory
	obs.Shards[1].Produced, obs.Shards[1].Consumed = &produced, &consumed
	data := &fakeData{observations: map[group.Key]monitoring.Observation{key: obs}, offsetsErr: errors.New("redis down")}
	api := newGrafanaAPI(t, data)

	rec := do(api, "GET", grafanaPath+"/shards?streamPrefix=orders&consumerGroup=orders-consumer", "")
	unknown := func(i int, target, current, owners, state string, pendingCount int, delivered string) string {
		k := contract.StreamKey("orders", i)
		return fmt.Sprintf(`{"streamPrefix":"orders","consumerGroup":"orders-consumer","shardCount":4,"shardIndex":%d,"shardLabel":":%d",
			"streamKey":%q,"redisSlot":%d,"redisNodeEndpoint":null,"redisNodeId":null,"redisSlotRangeStart":null,"redisSlotRangeEnd":null,
			"streamLength":0,"firstRecordId":null,"lastRecordId":null,"lastGeneratedId":null,"groupLastDeliveredId":null,
			"consumerLastDeliveredId":%s,"consumerLastAckedId":null,"pendingCount":%d,"lag":null,"lagKnown":false,
			"producedPerSecond":null,"consumedPerSecond":null,"memoryUsageBytes":null,"memoryUsageKnown":false,
			"targetOwnerMemberIds":%q,"currentOwnerMemberIds":%q,"ownerMemberIds":%q,"ownerState":%q}`,
			i, i, k, contract.Slot(k), delivered, pendingCount, target, current, owners, state)
	}
	k1 := contract.StreamKey("orders", 1)
	observed := fmt.Sprintf(`{"streamPrefix":"orders","consumerGroup":"orders-consumer","shardCount":4,"shardIndex":1,"shardLabel":":1",
		"streamKey":%q,"redisSlot":%d,"redisNodeEndpoint":"127.0.0.1:6379","redisNodeId":null,"redisSlotRangeStart":null,"redisSlotRangeEnd":null,
		"streamLength":9,"firstRecordId":null,"lastRecordId":"7-1","lastGeneratedId":null,"groupLastDeliveredId":null,
		"consumerLastDeliveredId":null,"consumerLastAckedId":null,"pendingCount":1,"lag":2,"lagKnown":true,
		"producedPerSecond":1.5,"consumedPerSecond":0.25,"memoryUsageBytes":300,"memoryUsageKnown":true,
		"targetOwnerMemberIds":"member-a","currentOwnerMemberIds":"member-a","ownerMemberIds":"member-a","ownerState":"CURRENT"}`,
		k1, contract.Slot(k1))
	wantJSON(t, rec, http.StatusOK, "["+
		unknown(0, "member-a", "member-a", "member-a", "CURRENT", 5, `"7-0"`)+","+observed+","+
		unknown(2, "member-b", "member-a", "member-a", "TRANSITIONING", 0, "null")+","+
		unknown(3, "member-b", "", "", "PENDING_ACK", 0, "null")+"]")

	// Every group: the other two fail to read (their rows are unknown,
	// not an error) and have no members.
	var rows []contract.GrafanaShardRow
	decode(t, do(api, "GET", grafanaPath+"/shards?streamPrefix=&consumerGroup=", ""), &rows)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%s%s %s", r.StreamPrefix, r.ConsumerGroup, r.ShardLabel, r.OwnerState))
	}
	want := []string{"orders/audit:0 UNASSIGNED", "orders/audit:1 UNASSIGNED", "orders/orders-consumer:0 CURRENT",
		"orders/orders-consumer:1 CURRENT", "orders/orders-consumer:2 TRANSITIONING", "orders/orders-consumer:3 PENDING_ACK",
		"payments/orders-consumer:0 UNASSIGNED"}
	if !slices.Equal(got, want) {
		t.Errorf("all shards: %v, want %v", got, want)
	}
}

func TestGrafanaMemberAndAssignmentRows(t *testing.T) {
	api := newGrafanaAPI(t, nil)
	rec := do(api, "GET", grafanaPath+"/members?streamPrefix=orders&consumerGroup=orders-consumer", "")
	wantJSON(t, rec, http.StatusOK, `[
	  {"streamPrefix":"orders","consumerGroup":"orders-consumer","memberId":"member-a","memberName":"member-a","state":"ACTIVE","memberEpoch":3,
	   "metadataVersion":3,"currentShardCount":3,"revokingShardCount":1,"runtimeMaxConcurrency":1,"activeConsumerWorkers":0,
	   "lastHeartbeatAt":"2026-05-21T00:00:00.000Z","memberLeaseExpiresAt":"2026-05-21T00:00:10.000Z"},
	  {"streamPrefix":"orders","consumerGroup":"orders-consumer","memberId":"member-b","memberName":"member-b","state":"ACTIVE","memberEpoch":3,
	   "metadataVersion":3,"currentShardCount":0,"revokingShardCount":0,"runtimeMaxConcurrency":1,"activeConsumerWorkers":0,
	   "lastHeartbeatAt":"2026-05-21T00:00:00.000Z","memberLeaseExpiresAt":"2026-05-21T00:00:10.000Z"}]`)
	rec = do(api, "GET", grafanaPath+"/assignments?streamPrefix=orders&consumerGroup=orders-consumer", "")
	row := func(i int, target, current, revoking string) string {
		return fmt.Sprintf(`{"streamPrefix":"orders","consumerGroup":"orders-consumer","shardIndex":%d,"targetOwners":%q,"currentOwners":%q,"revokingOwners":%q}`,
			i, target, current, revoking)
	}
	wantJSON(t, rec, http.StatusOK, "["+row(0, "member-a", "member-a", "")+","+row(1, "member-a", "member-a", "")+","+
		row(2, "member-b", "member-a", "")+","+row(3, "member-b", "", "member-a")+"]")
}

func TestGrafanaMessageRows(t *testing.T) {
	payload, next := "hello", "all:0=5-0,1=6-0"
	data := &fakeData{total: 42, page: streams.Page{Direction: streams.Forward, Limit: 2, NextCursor: &next, Records: []streams.Record{
		{Shard: 0, StreamKey: "orders:0", ID: "5-0", Fields: map[string]string{"payload": payload, "b": "2"}, Payload: &payload, TimestampMs: 5},
		{Shard: 1, StreamKey: "orders:1", ID: "1779321600000-0", Fields: map[string]string{"k": "v"}, TimestampMs: 1779321600000},
	}}}
	api := newGrafanaAPI(t, data)
	base := grafanaPath + "/messages?streamPrefix=orders&consumerGroup=orders-consumer"
	rec := do(api, "GET", base+"&shardIndex=All&direction=forward&limit=2&cursor=all:0=4-0", "")
	wantJSON(t, rec, http.StatusOK, `[
	  {"streamPrefix":"orders","consumerGroup":"orders-consumer","shardIndex":0,"shardSelector":"all","shardLabel":":0","streamKey":"orders:0",
	   "recordId":"5-0","payload":"hello","fieldsJson":"{\"b\":\"2\",\"payload\":\"hello\"}","pageDirection":"FORWARD","pageLimit":2,
	   "pageNextCursor":"all:0=5-0,1=6-0","pageTotalMessages":42,"recordTimestampMs":5,"recordTime":"1970-01-01T00:00:00.005Z"},
	  {"streamPrefix":"orders","consumerGroup":"orders-consumer","shardIndex":1,"shardSelector":"all","shardLabel":":1","streamKey":"orders:1",
	   "recordId":"1779321600000-0","payload":null,"fieldsJson":"{\"k\":\"v\"}","pageDirection":"FORWARD","pageLimit":2,
	   "pageNextCursor":"all:0=5-0,1=6-0","pageTotalMessages":42,"recordTimestampMs":1779321600000,"recordTime":"2026-05-21T00:00:00.000Z"}]`)
	if len(data.shards) != 4 || data.dir != streams.Forward || data.limit != 2 || data.cursor != "all:0=4-0" {
		t.Errorf("browsed %v %s limit %d cursor %q", data.shards, data.dir, data.limit, data.cursor)
	}
	for _, selector := range []string{"", "all", "ALL", ".*", "__all", "$__all", "%24__ALL"} {
		data.shards = nil
		if rec := do(api, "GET", base+"&shardIndex="+selector, ""); rec.Code != http.StatusOK || len(data.shards) != 4 {
			t.Errorf("selector %q: %d, browsed %v", selector, rec.Code, data.shards)
		}
	}
	var rows []contract.GrafanaMessageRow
	decode(t, do(api, "GET", base+"&shardIndex=2", ""), &rows)
	if len(data.shards) != 1 || data.shards[0] != (streams.Shard{Index: 2, Key: "orders:2"}) || data.dir != streams.Backward ||
		data.limit != streams.DefaultPageLimit || rows[0].ShardSelector != "2" {
		t.Errorf("shard 2: browsed %v %s limit %d, rows %+v", data.shards, data.dir, data.limit, rows)
	}
	for _, selector := range []string{"4", "-1", "x"} {
		errorOf(t, do(api, "GET", base+"&shardIndex="+selector, ""), http.StatusBadRequest, "INVALID_REQUEST")
	}

	// A record id is looked up on every shard whatever the selector.
	data.found = data.page.Records[:1]
	rows = nil
	decode(t, do(api, "GET", base+"&shardIndex=2&recordId=5-0&cursor=all:0=1-0&limit=5000", ""), &rows)
	if len(data.shards) != 4 || data.recordID != "5-0" || len(rows) != 1 || rows[0].ShardSelector != "all" ||
		rows[0].PageNextCursor != nil || rows[0].PageLimit != streams.MaxPageLimit || rows[0].PageDirection != contract.DirectionBackward {
		t.Errorf("lookup on %v of %q: %+v", data.shards, data.recordID, rows)
	}
	errorOf(t, do(api, "GET", base+"&recordId=bogus", ""), http.StatusBadRequest, "INVALID_REQUEST")
	errorOf(t, do(api, "GET", base+"&direction=up", ""), http.StatusBadRequest, "INVALID_REQUEST")
	errorOf(t, do(api, "GET", grafanaPath+"/messages?streamPrefix=orders&consumerGroup=nope", ""), http.StatusNotFound, "GROUP_NOT_FOUND")

	noRedis := newGrafanaAPI(t, nil)
	errorOf(t, do(noRedis, "GET", base, ""), http.StatusServiceUnavailable, "REDIS_NOT_CONFIGURED")
}
