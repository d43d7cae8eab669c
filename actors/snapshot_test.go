package actors

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// memberIDs reads key's members through c.
func memberIDs(t *testing.T, c *System, key group.Key) []string {
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
	g := newGate()
	store := newTestStore()
	store.Before(g.before)
	c := start(t, Options{Store: store, GroupCommit: true})
	createGroup(t, c, orders) // publishes
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Heartbeat(context.Background(), orders, join("m-a"))
	}()
	<-g.entered // the actor is busy committing m-a
	if _, err := c.Group(testCtx(t), orders); err != nil {
		t.Fatalf("group read while the actor is blocked: %v", err)
	}
	if ids := memberIDs(t, c, orders); len(ids) != 0 {
		t.Fatalf("members %v before the heartbeat was handled", ids)
	}
	if _, err := c.Migrations(testCtx(t), orders); err != nil {
		t.Fatalf("migrations read while the actor is blocked: %v", err)
	}
	close(g.release)
	<-done
}

// Every read after an answer sees its change (read your writes), and a
// read of an unchanged group reuses the published snapshot.
func TestReadsSeeOwnWrites(t *testing.T) {
	c := start(t, Options{Store: newTestStore(), GroupCommit: true})
	createGroup(t, c, orders)
	var want []string
	for _, id := range []string{"m-a", "m-b", "m-c"} {
		heartbeat(t, c, orders, join(id))
		want = append(want, id)
		if got := memberIDs(t, c, orders); !slices.Equal(got, want) {
			t.Fatalf("members %v after %s's join, want %v", got, id, want)
		}
	}
	published := publishedSnapshot(t, c, orders)
	memberIDs(t, c, orders)
	if _, err := c.Assignments(testCtx(t), orders); err != nil {
		t.Fatal(err)
	}
	if publishedSnapshot(t, c, orders) != published {
		t.Error("a read of an unchanged group built a new snapshot")
	}
	if _, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "t", Reason: "r", Force: true}); err != nil {
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
	if publishedSnapshot(t, c, orders) == nil {
		t.Fatal("create published no snapshot")
	}
	heartbeat(t, c, orders, join("m-a"))
	if publishedSnapshot(t, c, orders) != nil {
		t.Fatal("the snapshot outdated by a commit is still published")
	}
	memberIDs(t, c, orders)
	if s := publishedSnapshot(t, c, orders); s == nil || s.g.Members["m-a"] == nil {
		t.Fatal("a read published no current snapshot")
	}
}

// publishedSnapshot returns the snapshot key's live actor has published
// (nil: none is current).
func publishedSnapshot(t *testing.T, c *System, key group.Key) *snapshot {
	t.Helper()
	v, ok := c.snapshots.Load(key)
	if !ok {
		t.Fatal("no snapshot cell for a live actor")
	}
	return v.(*snapshotCell).cur.Load()
}

// inCommitted counts the goroutines waiting in System.committed for a
// snapshot flight.
func inCommitted() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "[select") && strings.Contains(g, "actors.(*System).committed(") {
			n++
		}
	}
	return n
}

// Concurrent readers of one outdated version share one snapshot build,
// queued behind the actor's next commit.
func TestConcurrentReadsShareOneBuild(t *testing.T) {
	g := newGateAt(2)
	store := newTestStore()
	store.Before(g.before)
	obs := newMessages()
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)
	heartbeat(t, c, orders, join("m-a")) // commit 1 outdates the snapshot
	held := make(chan result, 1)
	goHeartbeat(c, store, orders, "m-b", held)
	<-g.entered // the actor is busy with commit 2
	const readers = 20
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			_, err := c.Members(context.Background(), orders)
			errs <- err
		})
	}
	eventually.True(t, "every reader waiting on the flight", func() bool { return inCommitted() == readers })
	close(g.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r := <-held; r.err != nil {
		t.Fatal(r.err)
	}
	// A heartbeat's answer comes after every earlier message was handled
	// and counted.
	heartbeat(t, c, orders, join("m-c"))
	if got := obs.handled(MsgGetSnapshot); got != 1 {
		t.Errorf("%d snapshot builds for %d concurrent readers, want 1", got, readers)
	}
}
