package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// TestLiveResetSurvivesHandover: a live reset left APPLYING by the
// coordinator that owns the group (its SETID failing) is finished by the
// coordinator the group moves to when the first one leaves the cluster;
// the shard stays paused in between and is read again once DONE.
func TestLiveResetSurvivesHandover(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	positions := &testPositions{ResetPositions: streams.NewResetPositions(streams.NewOperator(rdb))}
	cs := coordtest.StartCluster(t, 2, coordtest.Options{
		Actors: func(o *actors.Options) { o.Provisioner, o.Positions = streams.NewProvisioner(rdb), positions },
		API:    func(o *httpapi.Options) { o.Streams = streams.NewOperator(rdb) },
	})
	a, b := cs[0], cs[1]
	key := group.Key{StreamPrefix: a.PlacedOn(prefix, cs...), ConsumerGroup: "g"}
	b.Admin().Create(key, 2)
	m := b.Member(key, "m-1")
	b.WaitFor(func() bool { return m.Heartbeat().Status == contract.StatusOK && len(m.Owned()) == 2 }, "m-1 reads both shards")

	positions.failWith(errors.New("redis is down"))
	var r contract.LiveReset
	if code := b.Admin().Call(http.MethodPost, coordtest.GroupPath(key)+"/offsets/reset",
		map[string]any{"to": "LATEST", "shards": []int{1}, "requestedBy": "ops"}, &r); code != http.StatusOK {
		t.Fatalf("reset: HTTP %d", code)
	}
	read := func(c *coordtest.Server) contract.LiveReset {
		var cur contract.LiveReset
		c.Admin().Call(http.MethodGet, "/monitoring"+coordtest.GroupPath(key)+"/offsets/resets/"+r.ResetID, nil, &cur)
		return cur
	}
	b.WaitFor(func() bool { m.Heartbeat(); return read(b).State == contract.ResetApplying }, "the reset APPLYING")
	if m.Owned().Contains(1) {
		t.Fatal("shard 1 read while APPLYING")
	}

	// a leaves the cluster as on SIGTERM: it hands its groups over. b,
	// the new owner, cannot finish the reset while SETID fails: shard 1
	// stays paused in every answer until b answers as the owner with the
	// reset still APPLYING.
	a.Node.Leave()
	a.Actors.HandOver()
	if err := a.Node.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	readWhileApplying := 0
	b.WaitFor(func() bool {
		st := m.Heartbeat().Status
		if m.Owned().Contains(1) {
			readWhileApplying++
		}
		return st == contract.StatusOK && m.Header.Get("X-Coordinator-Owner") == b.URL && read(b).State == contract.ResetApplying
	}, "b owns the group with the reset APPLYING")
	if readWhileApplying > 0 || m.Owned().Contains(1) {
		t.Fatalf("shard 1 read after the handover while APPLYING (%d answers)", readWhileApplying)
	}
	positions.failWith(nil)
	b.WaitFor(func() bool { m.Heartbeat(); return read(b).State == contract.ResetDone }, "the reset DONE on the next owner")
	// The header checked is an OK answer's: a RETRY (b briefly not serving
	// on a loaded machine) names no owner.
	b.WaitFor(func() bool { return m.Heartbeat().Status == contract.StatusOK && m.Owned().Contains(1) }, "shard 1 read again")
	if owner := m.Header.Get("X-Coordinator-Owner"); owner != b.URL {
		t.Errorf("answered by %q, want %s (the group moved)", owner, b.URL)
	}
}
