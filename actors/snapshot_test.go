package actors

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
)

// snapshotBuilds counts the GetSnapshot messages group actors handle.
type snapshotBuilds struct{ n atomic.Int64 }

func (b *snapshotBuilds) before(_ group.Key, msg any) {
	if _, ok := msg.(*snapshotMsg); ok {
		b.n.Add(1)
	}
}

// memberIDs reads key's members through c.
func memberIDs(t *testing.T, c *Coordinator, key group.Key) []string {
	t.Helper()
	ms, err := c.Members(testCtx(t), key)
	if err != nil {
		t.Fatalf("members of %s: %v", key, err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.MemberID)
	}
	return ids
}

// A read with a current snapshot does not enter the mailbox: it answers
// while the actor is blocked handling a heartbeat.
func TestReadsDoNotEnterTheMailbox(t *testing.T) {
	var block atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, BeforeHandle: func(_ group.Key, msg any) {
		if _, ok := msg.(*heartbeatMsg); ok && block.Load() {
			close(entered)
			<-release
		}
	}})
	createGroup(t, c, orders) // publishes
	block.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Heartbeat(context.Background(), orders, join("m-a"))
	}()
	<-entered
	if _, err := c.Group(testCtx(t), orders); err != nil {
		t.Fatalf("group read while the actor is blocked: %v", err)
	}
	if ids := memberIDs(t, c, orders); len(ids) != 0 {
		t.Fatalf("members %v before the heartbeat was handled", ids)
	}
	if _, err := c.Migrations(testCtx(t), orders); err != nil {
		t.Fatalf("migrations read while the actor is blocked: %v", err)
	}
	close(release)
	<-done
}

// Every read after an answer sees its change (read your writes), and a
// read of an unchanged group reuses the published snapshot.
func TestReadsSeeOwnWrites(t *testing.T) {
	builds := new(snapshotBuilds)
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, BeforeHandle: builds.before})
	createGroup(t, c, orders)
	var want []string
	for _, id := range []string{"m-a", "m-b", "m-c"} {
		heartbeat(t, c, orders, join(id))
		want = append(want, id)
		if got := memberIDs(t, c, orders); !slices.Equal(got, want) {
			t.Fatalf("members %v after %s's join, want %v", got, id, want)
		}
	}
	n := builds.n.Load()
	memberIDs(t, c, orders)
	if _, err := c.Assignments(testCtx(t), orders); err != nil {
		t.Fatal(err)
	}
	if got := builds.n.Load(); got != n {
		t.Errorf("reads of an unchanged group built %d snapshots", got-n)
	}
	if _, err := c.DeleteGroup(testCtx(t), orders, group.DeleteRequest{RequestedBy: "t", Reason: "r", Force: true}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Group(testCtx(t), orders)
	wantCode(t, err, contract.CodeGroupNotFound)
}

// A commit drops the published snapshot: a group that is written but not
// read holds no copy beyond committed and working.
func TestCommitDropsThePublishedSnapshot(t *testing.T) {
	c := start(t, Options{Store: newTestStore(), GroupCommit: true})
	createGroup(t, c, orders)
	cell := func() *snapshotCell {
		v, ok := c.snapshots.Load(orders)
		if !ok {
			t.Fatal("no snapshot cell for a live actor")
		}
		return v.(*snapshotCell)
	}
	if cell().cur.Load() == nil {
		t.Fatal("create published no snapshot")
	}
	heartbeat(t, c, orders, join("m-a"))
	if cell().cur.Load() != nil {
		t.Fatal("the snapshot outdated by a commit is still published")
	}
	memberIDs(t, c, orders)
	if s := cell().cur.Load(); s == nil || s.g.Members["m-a"] == nil {
		t.Fatal("a read published no current snapshot")
	}
}

// inCommitted counts the goroutines waiting in Coordinator.committed for a
// snapshot flight.
func inCommitted() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "[select") && strings.Contains(g, "actors.(*Coordinator).committed(") {
			n++
		}
	}
	return n
}

// Concurrent readers of one outdated version share one snapshot build.
func TestConcurrentReadsShareOneBuild(t *testing.T) {
	builds := new(snapshotBuilds)
	var block atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, BeforeHandle: func(k group.Key, msg any) {
		builds.before(k, msg)
		if _, ok := msg.(*snapshotMsg); ok && block.Load() {
			close(entered)
			<-release
		}
	}})
	createGroup(t, c, orders)
	heartbeat(t, c, orders, join("m-a")) // outdates the snapshot
	block.Store(true)
	const readers = 20
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			_, err := c.Members(context.Background(), orders)
			errs <- err
		})
	}
	<-entered
	eventually.True(t, "every reader waiting on the flight", func() bool { return inCommitted() == readers })
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := builds.n.Load(); got != 1 {
		t.Errorf("%d snapshot builds for %d concurrent readers, want 1", got, readers)
	}
}
