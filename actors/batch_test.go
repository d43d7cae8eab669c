package actors

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
)

// The batch is driven here without protoactor or a store: what a flush
// would write, what it records once written, and how a conflict or a
// failure rewinds it.

var batchT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func batchSettings() group.Settings { return group.DefaultSettings() }

// createdGroup is a stored group of four shards without members.
func createdGroup(t *testing.T, s group.Settings) *group.Group {
	t.Helper()
	g := group.New()
	four := 4
	if err := g.Create(group.InstantOf(batchT0), s, group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"},
		group.CreateRequest{InitialShardCount: &four, RequestedBy: "test"}).Err; err != nil {
		t.Fatal(err)
	}
	return g
}

// send runs a heartbeat at at on b's working copy and parks it.
func (b *batch) send(at time.Time, req *group.HeartbeatRequest) group.HeartbeatResponse {
	e := entry{now: at, hb: &messages.Heartbeat{Request: req}}
	recs := b.run(&e)
	b.park(e, recs)
	return e.resp
}

// commitAll does what a successful flush does: write, record, apply.
func (b *batch) commitAll(t *testing.T, at time.Time) {
	t.Helper()
	m, ok := b.mutation(at)
	if !ok {
		t.Fatal("nothing to write")
	}
	b.stored(b.rev + 1)
	_ = m
	for _, r := range b.records {
		b.committed.Apply(r)
	}
	b.clear()
}

func TestBatchWritesWhatChangedButNoRenewal(t *testing.T) {
	s := batchSettings()
	b := batch{settings: s}
	b.install(createdGroup(t, s), 1, false, batchT0)

	resp := b.send(batchT0, join("m-1"))
	if len(b.entries) == 0 || !b.needsWrite() {
		t.Fatal("a join must be written")
	}
	if b.committed.Members["m-1"] != nil {
		t.Fatal("committed changed before the write")
	}
	b.commitAll(t, batchT0)
	if b.rev != 2 || b.committed.Members["m-1"] == nil {
		t.Fatalf("after the write: rev %d, member %v", b.rev, b.committed.Members["m-1"])
	}

	// The member acknowledges (a change, written), then only renews.
	at := batchT0.Add(s.HeartbeatInterval)
	resp = b.send(at, next("m-1", resp))
	b.commitAll(t, at)
	at = at.Add(s.HeartbeatInterval)
	b.send(at, next("m-1", resp))
	if b.needsWrite() {
		t.Fatal("a lease renewal is written: liveness lives in the owner's memory")
	}
	// Applied, the renewal moves the lease held in memory.
	lease := b.committed.Members["m-1"].MemberLeaseExpiresAt
	for _, r := range b.records {
		b.committed.Apply(r)
	}
	if got := b.committed.Members["m-1"].MemberLeaseExpiresAt; got <= lease {
		t.Fatalf("renewed lease %v, want after %v", got, lease)
	}
}

func TestBatchReplaysPendingEntriesOnFreshState(t *testing.T) {
	s := batchSettings()
	b := batch{settings: s}
	b.install(createdGroup(t, s), 1, false, batchT0)
	if resp := b.send(batchT0, join("m-2")); len(resp.Assignment.AssignedShards) != 4 {
		t.Fatalf("alone, m-2 gets every shard: %v", resp.Assignment.AssignedShards)
	}

	// Meanwhile another process stored m-1 owning every shard: the commit
	// conflicts, the actor installs what is stored and re-runs the batch.
	other := batch{settings: s}
	other.install(createdGroup(t, s), 1, false, batchT0)
	resp := other.send(batchT0, join("m-1"))
	other.commitAll(t, batchT0)
	other.send(batchT0, next("m-1", resp))
	other.commitAll(t, batchT0)

	b.install(other.committed.Clone(), other.rev, false, batchT0)
	b.rerun()
	if len(b.entries) != 1 {
		t.Fatalf("pending entries after the re-run: %d, want 1", len(b.entries))
	}
	got := b.entries[0].resp
	if len(got.Assignment.AssignedShards) != 0 {
		t.Fatalf("re-run on fresh state: m-2 is assigned %v while m-1 still owns every shard", got.Assignment.AssignedShards)
	}
	if b.rev != other.rev || b.working.Members["m-1"] == nil || b.working.Members["m-2"] == nil {
		t.Fatalf("working after the re-run: rev %d, members %v", b.rev, b.working.LiveMemberIDs())
	}
}

func TestBatchRevertDropsWorkingChanges(t *testing.T) {
	s := batchSettings()
	b := batch{settings: s}
	b.install(createdGroup(t, s), 1, false, batchT0)
	b.send(batchT0, join("m-1"))
	b.revert()
	if b.working.Members["m-1"] != nil {
		t.Fatal("revert kept the unwritten join")
	}
	b.clear()
	if len(b.entries) > 0 || b.needsWrite() {
		t.Fatal("a cleared batch still has work")
	}
}

func TestBatchRewritesALegacyGroupWhole(t *testing.T) {
	s := batchSettings()
	b := batch{settings: s}
	b.install(createdGroup(t, s), 1, true, batchT0)
	b.send(batchT0, join("m-1"))
	m, ok := b.mutation(batchT0)
	if !ok || m.Aggregate == nil || len(m.PutMembers) != 1 {
		t.Fatalf("legacy group: mutation %v (ok %v), want the whole group", m, ok)
	}
	b.stored(2)
	if b.legacy {
		t.Fatal("still legacy after the rewrite")
	}
}

func TestBatchRestartsLeasesWhenItLoads(t *testing.T) {
	s := batchSettings()
	writer := batch{settings: s}
	writer.install(createdGroup(t, s), 1, false, batchT0)
	writer.send(batchT0, join("m-1"))
	writer.commitAll(t, batchT0)

	takeover := batchT0.Add(s.MemberLeaseTTL / 2)
	reader := batch{settings: s}
	reader.install(writer.committed.Clone(), writer.rev, false, takeover)
	if got, want := reader.committed.Members["m-1"].LeaseEnd(), group.InstantOf(takeover.Add(s.MemberLeaseTTL)); got != want {
		t.Fatalf("lease end after a takeover: %v, want takeover + TTL %v", got, want)
	}
}
