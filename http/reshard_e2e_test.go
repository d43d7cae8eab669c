package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// Resharding end to end: the real HTTP API and actor system over the
// memory store, with stream provisioning, drain checks and the data-plane
// reads on the shared Redis, real data in the shard streams, and members
// (internal/testkit/membersim) that XREADGROUP and XACK exactly the shards they
// were assigned. Time is a fake clock; ticks are sent by the test.

// reshardEnv is one coordinator over one stream prefix of the shared Redis.
type reshardEnv struct {
	*cluster
	rdb    *redis.Client
	prefix string
	key    group.Key
	oracle *membersim.Oracle
	// produced and delivered count entries per shard: XADDs of the
	// producer, and entries members read (and acknowledged) in the group.
	produced, delivered map[int]int
	seq                 int
	// positions performs live resets on rdb, failing when told to
	// (liveops_e2e_test.go).
	positions *testPositions
}

// newReshardEnv starts a coordinator with provisioning enabled and the
// Redis drain check on a fresh prefix; the group is not created yet.
func newReshardEnv(t *testing.T) *reshardEnv {
	t.Helper()
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	settings := group.DefaultSettings()
	settings.DrainCheck = true
	observer := streams.NewObserver(rdb)
	positions := &testPositions{ResetPositions: streams.NewResetPositions(streams.NewOperator(rdb))}
	clock := newE2EClock()
	c := newClusterWith(t, coordtest.Options{Settings: settings, Clock: clock,
		Actors: func(o *actors.Options) {
			o.Provisioner, o.Drains, o.Positions = streams.NewProvisioner(rdb), observer, positions
		},
		API: func(o *httpapi.Options) {
			o.DataPlane = monitoring.NewReader(observer, clock.Now, offsetCacheTTL)
			o.Streams = streams.NewOperator(rdb)
		},
	})
	return &reshardEnv{
		cluster:   c,
		positions: positions,
		rdb:       rdb,
		prefix:    prefix,
		key:       group.Key{StreamPrefix: prefix, ConsumerGroup: "workers"},
		oracle:    membersim.NewOracle(),
		produced:  map[int]int{}, delivered: map[int]int{},
	}
}

func (e *reshardEnv) groupPath() string {
	return "/streams/" + e.key.StreamPrefix + "/groups/" + e.key.ConsumerGroup
}

func (e *reshardEnv) monitoringPath() string { return "/monitoring" + e.groupPath() }

func (e *reshardEnv) streamKey(i int) string { return contract.StreamKey(e.prefix, i) }

// expect sends a request and fails unless it is answered with status;
// the answer is decoded into out when non-nil.
func (e *reshardEnv) expect(method, path string, body any, status int, out any) {
	e.t.Helper()
	var raw map[string]any
	if out == nil {
		out = &raw
	}
	if st := e.Admin().Call(method, path, body, out); st != status {
		e.t.Fatalf("%s %s: status %d, want %d (%+v)", method, path, st, status, out)
	}
}

// expectError fails unless the request is answered with the docs/protocol.md §0 error.
func (e *reshardEnv) expectError(method, path string, body any, status int, code string) errorReply {
	e.t.Helper()
	var r errorReply
	if st := e.Admin().Call(method, path, body, &r); st != status || r.ErrorCode != code {
		e.t.Fatalf("%s %s: %d %+v, want %d %s", method, path, st, r, status, code)
	}
	return r
}

type errorReply struct{ Status, ErrorCode, Message string }

// create creates the group with n shards.
func (e *reshardEnv) create(n int) {
	e.t.Helper()
	e.expect("POST", e.groupPath(), map[string]any{"initialShardCount": n, "requestedBy": "test"}, http.StatusCreated, nil)
}

// scale scales the whole stream (#3) and returns the group's migration.
func (e *reshardEnv) scale(n int) contract.Migration {
	e.t.Helper()
	var r contract.StreamScaleView
	e.expect("POST", "/streams/"+e.prefix+"/scale", map[string]any{"targetShardCount": n, "requestedBy": "test", "reason": "load"}, http.StatusAccepted, &r)
	if len(r.Migrations) != 1 || len(r.AffectedConsumerGroups) != 1 || r.AffectedConsumerGroups[0] != e.key.ConsumerGroup {
		e.t.Fatalf("stream scale answered %+v", r)
	}
	return r.Migrations[0]
}

// routing is the producer-routing answer (#7).
type routing struct {
	MetadataVersion int64
	ShardCount      int
	Shards          []struct {
		ShardIndex int
		StreamKey  string
	}
}

func (e *reshardEnv) routing() routing {
	e.t.Helper()
	var r routing
	e.expect("GET", e.groupPath()+"/producer-routing", nil, http.StatusOK, &r)
	if len(r.Shards) != r.ShardCount {
		e.t.Fatalf("routing lists %d shards of %d", len(r.Shards), r.ShardCount)
	}
	for i, s := range r.Shards {
		if s.ShardIndex != i || s.StreamKey != e.streamKey(i) {
			e.t.Fatalf("routing shard %d is %+v", i, s)
		}
	}
	return r
}

func (e *reshardEnv) migration(id string) contract.Migration {
	e.t.Helper()
	var m contract.Migration
	e.expect("GET", e.groupPath()+"/migrations/"+id, nil, http.StatusOK, &m)
	return m
}

// produce XADDs n entries routed like a producer holding rt: partition
// keys hashed onto rt's shards, NOMKSTREAM (an unprovisioned shard would
// fail the publish).
func (e *reshardEnv) produce(rt routing, n int) {
	e.t.Helper()
	for range n {
		e.seq++
		pk := "order-" + strconv.Itoa(e.seq)
		e.add(contract.ShardFor(pk, rt.ShardCount), pk)
	}
}

// add XADDs one entry to shard i (NOMKSTREAM).
func (e *reshardEnv) add(i int, payload string) {
	e.t.Helper()
	err := e.rdb.XAdd(e.t.Context(), &redis.XAddArgs{Stream: e.streamKey(i), NoMkStream: true, Values: []any{"payload", payload}}).Err()
	if err != nil {
		e.t.Fatalf("XADD NOMKSTREAM %s: %v", e.streamKey(i), err)
	}
	e.produced[i]++
}

// consume lets m read (XREADGROUP as consumer m.ID) and acknowledge
// everything new on the shards it reads.
func (e *reshardEnv) consume(m *membersim.Member) {
	e.t.Helper()
	for _, s := range m.Owned() {
		e.delivered[s] += e.readAll(e.streamKey(s), e.key.ConsumerGroup, m.ID, true)
	}
}

// readAll reads key as consumer of group until nothing new is left,
// acknowledging what it read when ack is set; it returns the count.
func (e *reshardEnv) readAll(key, grp, consumer string, ack bool) int {
	e.t.Helper()
	n := 0
	for {
		res, err := e.rdb.XReadGroup(e.t.Context(), &redis.XReadGroupArgs{Group: grp, Consumer: consumer, Streams: []string{key, ">"}, Count: 500, Block: -1}).Result()
		if errors.Is(err, redis.Nil) {
			return n
		}
		if err != nil {
			e.t.Fatalf("XREADGROUP %s %s: %v", key, grp, err)
		}
		var ids []string
		for _, msg := range res[0].Messages {
			ids = append(ids, msg.ID)
		}
		if ack {
			if err := e.rdb.XAck(e.t.Context(), key, grp, ids...).Err(); err != nil {
				e.t.Fatalf("XACK %s: %v", key, err)
			}
		}
		n += len(ids)
	}
}

// sampleTraffic adds 50 entries on shard 0 and 30 on shard 1; consumer c
// reads and acknowledges 20 of shard 0 and all of shard 1.
func (e *reshardEnv) sampleTraffic() {
	e.t.Helper()
	for range 50 {
		e.add(0, "x")
	}
	for range 30 {
		e.add(1, "y")
	}
	res, err := e.rdb.XReadGroup(e.t.Context(), &redis.XReadGroupArgs{Group: e.key.ConsumerGroup, Consumer: "c", Streams: []string{e.streamKey(0), ">"}, Count: 20, Block: -1}).Result()
	if err != nil || len(res[0].Messages) != 20 {
		e.t.Fatalf("XREADGROUP: %v", err)
	}
	var ids []string
	for _, msg := range res[0].Messages {
		ids = append(ids, msg.ID)
	}
	if err := e.rdb.XAck(e.t.Context(), e.streamKey(0), e.key.ConsumerGroup, ids...).Err(); err != nil {
		e.t.Fatal(err)
	}
	e.readAll(e.streamKey(1), e.key.ConsumerGroup, "c", true)
}

// offsets GETs the group's /offsets (docs/protocol.md §2.6).
func (e *reshardEnv) offsets() contract.Offsets {
	e.t.Helper()
	var o contract.Offsets
	e.expect("GET", e.monitoringPath()+"/offsets", nil, http.StatusOK, &o)
	return o
}

// wantRate fails the test unless the rate got is known and equal to v.
func wantRate(t *testing.T, what string, got *float64, v float64) {
	t.Helper()
	if got == nil || *got != v {
		t.Errorf("%s = %s, want %v", what, fmtRate(got), v)
	}
}

// drain is the operator's drain job for removed shards: every consumer
// group of each shard's stream reads to the end, and everything pending is
// acknowledged.
func (e *reshardEnv) drain(shards ...int) {
	e.t.Helper()
	ctx := e.t.Context()
	for _, s := range shards {
		key := e.streamKey(s)
		groups, err := e.rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			e.t.Fatalf("XINFO GROUPS %s: %v", key, err)
		}
		for _, g := range groups {
			read := e.readAll(key, g.Name, "drainer", true)
			if g.Name == e.key.ConsumerGroup {
				e.delivered[s] += read
			}
			pending, err := e.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 10000}).Result()
			if err != nil {
				e.t.Fatalf("XPENDING %s %s: %v", key, g.Name, err)
			}
			for _, p := range pending {
				if err := e.rdb.XAck(ctx, key, g.Name, p.ID).Err(); err != nil {
					e.t.Fatalf("XACK %s: %v", key, err)
				}
			}
		}
	}
}

// round is one beat of the system: the producer publishes n entries with
// the routing it reads now, then every member heartbeats and consumes.
func (e *reshardEnv) round(n int, members ...*membersim.Member) {
	e.t.Helper()
	e.produce(e.routing(), n)
	for _, m := range members {
		e.Heartbeat(e.key, m)
		e.consume(m)
	}
	if ov := e.oracle.Overlaps(); len(ov) > 0 {
		e.t.Fatalf("a shard was read by two live members: %v", ov)
	}
}

// until runs rounds of n entries until cond holds, failing after a
// generous number of rounds.
func (e *reshardEnv) until(what string, n int, cond func() bool, members ...*membersim.Member) {
	e.t.Helper()
	for range 30 {
		if cond() {
			return
		}
		e.round(n, members...)
	}
	e.t.Fatalf("not %s after 30 rounds: %+v", what, e.group())
}

// tick sends a tick to the group and waits until it is handled and its
// changes are stored (actors.System.Settle).
func (e *reshardEnv) tick() contract.GroupView {
	e.t.Helper()
	e.Actors.TickNow()
	if err := e.Actors.Settle(e.t.Context(), e.key); err != nil {
		e.t.Fatal(err)
	}
	return e.group()
}

// expectState ticks and checks the migration's state.
func (e *reshardEnv) expectState(id string, want contract.MigrationState) {
	e.t.Helper()
	e.tick()
	if m := e.migration(id); m.State != want {
		e.t.Fatalf("migration %s is %s, want %s", id, m.State, want)
	}
}

// groupInfo is the XINFO GROUPS entry of grp on shard i.
func (e *reshardEnv) groupInfo(i int, grp string) redis.XInfoGroup {
	e.t.Helper()
	groups, err := e.rdb.XInfoGroups(e.t.Context(), e.streamKey(i)).Result()
	if err != nil {
		e.t.Fatalf("XINFO GROUPS %s: %v", e.streamKey(i), err)
	}
	for _, g := range groups {
		if g.Name == grp {
			return g
		}
	}
	e.t.Fatalf("no group %s on %s", grp, e.streamKey(i))
	return redis.XInfoGroup{}
}

// settledGroup creates the group with n shards and lets k members
// heartbeat and consume until they settle on it.
func (e *reshardEnv) settledGroup(n, k int) []*membersim.Member {
	e.t.Helper()
	e.create(n)
	ms := e.members(k)
	e.until(fmt.Sprintf("settled on %d shards", n), 20, e.settled(ms), ms...)
	return ms
}

// members returns n simulated members reporting to the env's oracle.
func (e *reshardEnv) members(n int) []*membersim.Member {
	ms := make([]*membersim.Member, n)
	for i := range ms {
		ms[i] = membersim.New(fmt.Sprintf("member-%d", i), e.oracle)
	}
	return ms
}

// settled reports whether ms read each shard of the group exactly once,
// balanced, and the group is STABLE.
func (e *reshardEnv) settled(ms []*membersim.Member) func() bool {
	return func() bool {
		v := e.group()
		return membersim.Settled(v.ShardCount, ms) && v.State == contract.GroupStable
	}
}

// group reads the GroupResponse (#5).
func (e *reshardEnv) group() contract.GroupView {
	e.t.Helper()
	var v contract.GroupView
	e.expect("GET", e.groupPath(), nil, http.StatusOK, &v)
	return v
}

// wantAllConsumed lets ms consume what is left on their shards, then
// checks that every entry produced to shards 0..n-1 was delivered (to
// members or drain jobs) and Redis reports nothing pending or unread for
// the group.
func (e *reshardEnv) wantAllConsumed(n int, ms []*membersim.Member) {
	e.t.Helper()
	for _, m := range ms {
		e.consume(m)
	}
	for i := range n {
		g := e.groupInfo(i, e.key.ConsumerGroup)
		if e.delivered[i] != e.produced[i] || g.Pending != 0 || g.Lag != 0 {
			e.t.Errorf("shard %d: produced %d, delivered %d; Redis pending %d lag %d", i, e.produced[i], e.delivered[i], g.Pending, g.Lag)
		}
	}
}

func TestReshardScaleOutUnderTraffic(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(4, 3)
	before := e.routing()

	m := e.scale(8)
	if m.State != contract.MigrationActive || m.FromShardCount != 4 || m.ToShardCount != 8 || len(m.ReshardingID) != len("reshard-")+36 {
		t.Fatalf("scale answered %+v", m)
	}
	after := e.routing()
	if after.ShardCount != 8 || after.MetadataVersion <= before.MetadataVersion {
		t.Fatalf("routing after scale: %d shards, version %d (before %d)", after.ShardCount, after.MetadataVersion, before.MetadataVersion)
	}
	for i := 4; i < 8; i++ {
		if g := e.groupInfo(i, e.key.ConsumerGroup); g.Lag != 0 || g.Pending != 0 {
			t.Errorf("new shard %d provisioned with lag %d, pending %d", i, g.Lag, g.Pending)
		}
	}
	// A producer still holding the old routing keeps publishing to 0..3.
	e.produce(before, 50)
	e.until("settled on 8 shards", 20, e.settled(ms), ms...)
	e.until("migration deprecated", 20, func() bool { return e.migration(m.ReshardingID).State == contract.MigrationDeprecated }, ms...)
	if v := e.group(); v.ActiveMigration != nil || v.ShardCount != 8 {
		t.Fatalf("after the migration: %+v", v)
	}
	e.wantAllConsumed(8, ms)
}

func TestReshardScaleInWaitsForDrain(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(8, 2)
	old := e.routing()
	// Entries nobody has read yet, on every shard, and entries another
	// consumer group read but has not acknowledged.
	e.produce(old, 200)
	if err := e.rdb.XGroupCreate(t.Context(), e.streamKey(5), "analytics", "0").Err(); err != nil {
		t.Fatal(err)
	}
	e.readAll(e.streamKey(5), "analytics", "analyst", false)

	m := e.scale(4)
	if r := e.routing(); r.ShardCount != 4 {
		t.Fatalf("routing after scale-in lists %d shards", r.ShardCount)
	}
	e.until("settled on 4 shards", 10, e.settled(ms), ms...)
	e.until("migration draining", 10, func() bool { return e.migration(m.ReshardingID).State == contract.MigrationDraining }, ms...)
	for _, mem := range ms {
		if mem.Owned().Contains(4) || mem.Owned().Contains(7) {
			t.Fatalf("%s still reads a removed shard: %v", mem.ID, mem.Owned())
		}
	}
	e.expectState(m.ReshardingID, contract.MigrationDraining)

	// Drain the unread entries of the coordinator's group; the other group
	// still holds pending entries on shard 5.
	for i := 4; i < 8; i++ {
		e.delivered[i] += e.readAll(e.streamKey(i), e.key.ConsumerGroup, "drainer", true)
	}
	e.expectState(m.ReshardingID, contract.MigrationDraining)
	e.drain(4, 5, 6, 7)
	// A producer with stale routing adds to a removed shard after the scale.
	e.add(6, "late")
	e.expectState(m.ReshardingID, contract.MigrationDraining)

	e.drain(6)
	v := e.tick()
	if got := e.migration(m.ReshardingID); got.State != contract.MigrationDeprecated || v.ActiveMigration != nil {
		t.Fatalf("after draining: migration %+v, group %+v", got, v)
	}
	e.wantAllConsumed(8, ms)
}

func TestReshardUnknownLagKeepsDraining(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(8, 2)
	// Shard 6 gets a consumer group whose lag Redis cannot compute: it
	// starts at 0 on a stream with a deleted entry.
	e.add(6, "a")
	e.add(6, "b")
	e.add(6, "c")
	entries, err := e.rdb.XRange(t.Context(), e.streamKey(6), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.XDel(t.Context(), e.streamKey(6), entries[len(entries)-2].ID).Err(); err != nil {
		t.Fatal(err)
	}
	e.produced[6]--
	if err := e.rdb.XGroupCreate(t.Context(), e.streamKey(6), "replay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if g := e.groupInfo(6, "replay"); g.Lag >= 0 || g.Pending != 0 {
		t.Fatalf("replay group: lag %d pending %d, want unknown lag and nothing pending", g.Lag, g.Pending)
	}

	m := e.scale(4)
	e.until("migration draining", 10, func() bool { return e.migration(m.ReshardingID).State == contract.MigrationDraining }, ms...)
	for i := 4; i < 8; i++ {
		e.delivered[i] += e.readAll(e.streamKey(i), e.key.ConsumerGroup, "drainer", true)
	}
	e.expectState(m.ReshardingID, contract.MigrationDraining)
	e.drain(6)
	e.expectState(m.ReshardingID, contract.MigrationDeprecated)
}

func TestReshardScaleInCompletesWithEveryMemberGone(t *testing.T) {
	e := newReshardEnv(t)
	e.settledGroup(8, 2)
	e.produce(e.routing(), 100)

	m := e.scale(4)
	// Nobody heartbeats any more: the leases run out.
	e.Clock.Advance(e.Settings.MemberLeaseTTL + time.Second)
	v := e.tick()
	if len(v.TargetAssignmentSummary) != 0 {
		t.Fatalf("members still live after their leases: %+v", v)
	}
	if got := e.migration(m.ReshardingID); got.State != contract.MigrationDraining {
		t.Fatalf("with every member expired the migration is %s, want DRAINING", got.State)
	}
	e.expectState(m.ReshardingID, contract.MigrationDraining)
	e.drain(4, 5, 6, 7)
	e.expectState(m.ReshardingID, contract.MigrationDeprecated)
}

func TestReshardRollback(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(4, 2)
	before := e.routing()

	m := e.scale(8)
	e.expectError("POST", e.groupPath()+"/scale", map[string]any{"targetShardCount": 6, "requestedBy": "test"}, http.StatusConflict, "ACTIVE_MIGRATION_EXISTS")
	e.expectError("POST", "/streams/"+e.prefix+"/scale", map[string]any{"targetShardCount": 6, "requestedBy": "test"}, http.StatusConflict, "ACTIVE_MIGRATION_EXISTS")
	rollback := map[string]any{"requestedBy": "test", "reason": "too many shards"}
	var rolled contract.Migration
	e.expect("POST", e.groupPath()+"/migrations/"+m.ReshardingID+"/rollback", rollback, http.StatusAccepted, &rolled)
	if rolled.State != contract.MigrationRolledBack || rolled.ReshardingID != m.ReshardingID {
		t.Fatalf("rollback answered %+v", rolled)
	}
	after := e.routing()
	if v := e.group(); v.ShardCount != 4 || v.ActiveMigration != nil || after.ShardCount != 4 || after.MetadataVersion <= before.MetadataVersion {
		t.Fatalf("after rollback: group %+v, routing %+v", v, after)
	}
	// Rolling back again answers the rolled-back migration as is.
	e.expect("POST", e.groupPath()+"/migrations/"+m.ReshardingID+"/rollback", rollback, http.StatusAccepted, &rolled)
	e.until("settled on 4 shards", 10, e.settled(ms), ms...)

	// A completed migration cannot be rolled back.
	e.Clock.Advance(time.Second)
	done := e.scale(6)
	e.until("migration deprecated", 20, func() bool { return e.migration(done.ReshardingID).State == contract.MigrationDeprecated }, ms...)
	e.expectError("POST", e.groupPath()+"/migrations/"+done.ReshardingID+"/rollback", rollback, http.StatusUnprocessableEntity, "ROLLBACK_NOT_ALLOWED")
	e.expectError("POST", e.groupPath()+"/migrations/reshard-unknown/rollback", rollback, http.StatusNotFound, "MIGRATION_NOT_FOUND")
	e.expectError("GET", e.groupPath()+"/migrations/reshard-unknown", nil, http.StatusNotFound, "MIGRATION_NOT_FOUND")

	var noop contract.Migration
	e.expect("POST", e.groupPath()+"/scale", map[string]any{"targetShardCount": 6, "requestedBy": "test"}, http.StatusAccepted, &noop)
	if noop.ReshardingID != group.NoopMigrationID || noop.State != contract.MigrationDeprecated || noop.FromShardCount != 6 || noop.ToShardCount != 6 {
		t.Fatalf("same-count scale answered %+v", noop)
	}
	var list struct {
		Migrations         []contract.Migration
		ActiveReshardingID *string
	}
	e.expect("GET", e.monitoringPath()+"/migrations", nil, http.StatusOK, &list)
	if len(list.Migrations) != 2 || list.Migrations[0].ReshardingID != m.ReshardingID || list.Migrations[1].State != contract.MigrationDeprecated || list.ActiveReshardingID != nil {
		t.Fatalf("migrations %+v", list)
	}
	e.expectError("POST", "/streams/nobody-"+e.prefix+"/scale", map[string]any{"targetShardCount": 2, "requestedBy": "test"}, http.StatusNotFound, "STREAM_NOT_FOUND")
}

func TestReshardScaleToZeroRoutesNowhere(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(2, 1)
	m := e.scale(0)
	if r := e.routing(); r.ShardCount != 0 || len(r.Shards) != 0 {
		t.Fatalf("routing after scale to 0: %+v", r)
	}
	e.until("migration draining", 0, func() bool { return e.migration(m.ReshardingID).State == contract.MigrationDraining }, ms...)
	if len(ms[0].Owned()) != 0 {
		t.Fatalf("member still reads %v", ms[0].Owned())
	}
	e.expectState(m.ReshardingID, contract.MigrationDeprecated)
}

func TestReshardProvisioningFailureLeavesStateConsistent(t *testing.T) {
	e := newReshardEnv(t)
	ctx := t.Context()
	// A key of P's shard range that is not a stream: a stream-level create
	// of P is refused before anything is stored.
	if err := e.rdb.Set(ctx, e.streamKey(1), "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r := e.expectError("POST", "/streams/"+e.prefix, map[string]any{"initialShardCount": 4, "requestedBy": "test"}, http.StatusConflict, "STREAM_PREFIX_ALREADY_EXISTS")
	if want := fmt.Sprintf("Stream prefix '%s' already has Redis key(s): %s", e.prefix, e.streamKey(1)); r.Message != want {
		t.Fatalf("message %q, want %q", r.Message, want)
	}
	if err := e.rdb.Del(ctx, e.streamKey(1)).Err(); err != nil {
		t.Fatal(err)
	}
	e.create(4)

	// A second group of P fails to provision on the bad key: nothing is left.
	if err := e.rdb.Del(ctx, e.streamKey(2)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Set(ctx, e.streamKey(2), "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	other := "/streams/" + e.prefix + "/groups/billing"
	e.expectError("POST", other, map[string]any{"initialShardCount": 4, "requestedBy": "test"}, http.StatusServiceUnavailable, "REDIS_STREAM_PROVISIONING_FAILED")
	e.expectError("GET", other, nil, http.StatusNotFound, "GROUP_NOT_FOUND")
	e.expectError("GET", e.groupPath()+"/producer-routing", nil, http.StatusServiceUnavailable, "REDIS_STREAM_PROVISIONING_FAILED")
	if err := e.rdb.Del(ctx, e.streamKey(2)).Err(); err != nil {
		t.Fatal(err)
	}

	// A scale whose new shard cannot be provisioned stays PREPARING.
	if err := e.rdb.Set(ctx, e.streamKey(6), "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	scale := map[string]any{"targetShardCount": 8, "requestedBy": "test"}
	e.expectError("POST", e.groupPath()+"/scale", scale, http.StatusServiceUnavailable, "REDIS_STREAM_PROVISIONING_FAILED")
	v := e.group()
	if v.ShardCount != 4 || v.ActiveMigration == nil || v.ActiveMigration.State != contract.MigrationPreparing || e.routing().ShardCount != 4 {
		t.Fatalf("after a failed scale: %+v", v)
	}
	preparing := v.ActiveMigration.ReshardingID
	e.expectError("POST", e.groupPath()+"/scale", map[string]any{"targetShardCount": 6, "requestedBy": "test"}, http.StatusConflict, "ACTIVE_MIGRATION_EXISTS")
	e.expectError("POST", e.groupPath()+"/migrations/"+preparing+"/rollback", map[string]any{"requestedBy": "test", "reason": "r"}, http.StatusUnprocessableEntity, "ROLLBACK_NOT_ALLOWED")

	// Once the key is gone, the same request resumes the migration.
	if err := e.rdb.Del(ctx, e.streamKey(6)).Err(); err != nil {
		t.Fatal(err)
	}
	var m contract.Migration
	e.expect("POST", e.groupPath()+"/scale", scale, http.StatusAccepted, &m)
	if m.ReshardingID != preparing || m.State != contract.MigrationActive || e.routing().ShardCount != 8 {
		t.Fatalf("resumed scale answered %+v", m)
	}
	e.produce(e.routing(), 100) // NOMKSTREAM: every routed shard exists
}

// pendingTraffic settles 4 shards on 2 members and produces 120 entries:
// member-0's shards are read and acknowledged; on member-1's first shard
// the entries are read and left pending, on its others they stay unread.
func (e *reshardEnv) pendingTraffic() []*membersim.Member {
	e.t.Helper()
	ms := e.settledGroup(4, 2)
	e.produce(e.routing(), 120)
	e.consume(ms[0])
	e.readAll(e.streamKey(ms[1].Owned()[0]), e.key.ConsumerGroup, ms[1].ID, false)
	return ms
}

// redisShard reads shard i as Redis has it: XINFO STREAM, the XINFO GROUPS
// entry of the env's group, and which of the two members of
// pendingTraffic reads it.
func (e *reshardEnv) redisShard(i int, ms []*membersim.Member) (*redis.XInfoStream, redis.XInfoGroup, string) {
	e.t.Helper()
	info, err := e.rdb.XInfoStream(e.t.Context(), e.streamKey(i)).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	owner := ms[0].ID
	if ms[1].Owned().Contains(i) {
		owner = ms[1].ID
	}
	return info, e.groupInfo(i, e.key.ConsumerGroup), owner
}

func TestReshardOffsetsMatchRedis(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.pendingTraffic()

	o := e.offsets()
	if len(o.Shards) != 4 || o.StreamPrefix != e.prefix || o.ConsumerGroup != e.key.ConsumerGroup {
		t.Fatalf("offsets %+v", o)
	}
	var length, pending, lag int64
	for i, s := range o.Shards {
		key := e.streamKey(i)
		info, g, owner := e.redisShard(i, ms)
		if s.Shard.ShardIndex != i || s.StreamKey != key || s.RedisSlot != contract.Slot(key) || s.StreamLength != info.Length ||
			deref(s.FirstRecordID) != info.FirstEntry.ID || deref(s.LastRecordID) != info.LastEntry.ID ||
			deref(s.LastGeneratedID) != info.LastGeneratedID || deref(s.GroupLastDeliveredID) != g.LastDeliveredID ||
			s.PendingCount != g.Pending || s.Lag == nil || *s.Lag != g.Lag || s.MemoryUsageBytes == nil ||
			len(s.OwnerMemberIDs) != 1 || s.OwnerMemberIDs[0] != owner || deref(s.RedisNodeEndpoint) != testredis.SharedAddr {
			t.Errorf("shard %d: %+v\nXINFO STREAM %+v\nXINFO GROUPS %+v", i, s, info, g)
		}
		length, pending, lag = length+info.Length, pending+g.Pending, lag+g.Lag
	}
	if o.TotalStreamLength != length || o.TotalPendingCount != pending || o.TotalLag == nil || *o.TotalLag != lag || !o.MemoryUsageKnown {
		t.Errorf("totals %+v, want length %d pending %d lag %d", o, length, pending, lag)
	}
	if pending == 0 || lag == 0 {
		t.Errorf("the scenario should leave entries pending (%d) and unread (%d)", pending, lag)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestReshardRatesMatchTraffic(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	if o := e.offsets(); o.ProducedPerSecond != nil || o.Shards[0].ConsumedPerSecond != nil {
		t.Fatalf("first sample has rates: %+v", o)
	}
	// In 10 s: the sample traffic (sampleTraffic).
	e.sampleTraffic()
	e.Clock.Advance(10 * time.Second)

	o := e.offsets()
	wantRate(t, "shard 0 produced", o.Shards[0].ProducedPerSecond, 5)
	wantRate(t, "shard 0 consumed", o.Shards[0].ConsumedPerSecond, 2)
	wantRate(t, "shard 1 produced", o.Shards[1].ProducedPerSecond, 3)
	wantRate(t, "shard 1 consumed", o.Shards[1].ConsumedPerSecond, 3)
	wantRate(t, "group produced", o.ProducedPerSecond, 8)
	wantRate(t, "group consumed", o.ConsumedPerSecond, 5)
}

func TestReshardMessageExplorerPagesBothWays(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	for i := range 1000 {
		e.add(1, "m-"+strconv.Itoa(i))
	}
	all, err := e.rdb.XRange(t.Context(), e.streamKey(1), "-", "+").Result()
	if err != nil || len(all) != 1000 {
		t.Fatalf("XRANGE: %d entries, %v", len(all), err)
	}
	type page struct {
		Shard      contract.Shard
		StreamKey  string
		Direction  string
		Limit      int
		NextCursor *string
		Records    []struct {
			RecordID          string
			Payload           *string
			Fields            map[string]string
			RecordTimestampMs int64
		}
	}
	walk := func(direction string) []string {
		var ids []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 1000/37+1 {
				t.Fatalf("%s: more pages than entries allow", direction)
			}
			var p page
			e.expect("GET", e.monitoringPath()+"/shards/1/messages?limit=37&direction="+direction+"&cursor="+cursor, nil, http.StatusOK, &p)
			if p.Shard.ShardIndex != 1 || p.StreamKey != e.streamKey(1) || p.Direction != direction || p.Limit != 37 || len(p.Records) > 37 {
				t.Fatalf("%s page %+v", direction, p)
			}
			for _, r := range p.Records {
				if r.Payload == nil || *r.Payload != r.Fields["payload"] || r.RecordTimestampMs == 0 {
					t.Fatalf("record %+v", r)
				}
				ids = append(ids, r.RecordID)
			}
			if p.NextCursor == nil {
				return ids
			}
			cursor = *p.NextCursor
		}
	}
	forward, backward := walk("FORWARD"), walk("BACKWARD")
	if len(forward) != 1000 || len(backward) != 1000 {
		t.Fatalf("paged %d forward and %d backward, want 1000 each", len(forward), len(backward))
	}
	for i, m := range all {
		if forward[i] != m.ID || backward[len(all)-1-i] != m.ID {
			t.Fatalf("entry %d: forward %s backward %s, want %s", i, forward[i], backward[len(all)-1-i], m.ID)
		}
	}
	var p page
	e.expect("GET", e.monitoringPath()+"/shards/0/messages", nil, http.StatusOK, &p)
	if p.Direction != "BACKWARD" || p.Limit != 25 || len(p.Records) != 0 || p.NextCursor != nil {
		t.Fatalf("empty shard: %+v", p)
	}
	e.expectError("GET", e.monitoringPath()+"/shards/2/messages", nil, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("GET", e.monitoringPath()+"/shards/1/messages?cursor=bogus", nil, http.StatusBadRequest, "INVALID_REQUEST")
}
