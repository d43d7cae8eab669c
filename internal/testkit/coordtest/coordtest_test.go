package coordtest_test

import (
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
)

// On each store, two clustered coordinators serve one group: it is
// created through one, a member settles on it through the other (which
// forwards), and each reads it.
func TestClusterOnEachStore(t *testing.T) {
	for name, backend := range map[string]func(t *testing.T) *coordtest.Backend{
		"memory": func(*testing.T) *coordtest.Backend { return coordtest.Memory() },
		"redis":  func(t *testing.T) *coordtest.Backend { return coordtest.Redis(t) },
		"sql":    func(t *testing.T) *coordtest.Backend { return coordtest.SQL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			cs := coordtest.StartCluster(t, 2, coordtest.Options{Backend: backend(t)})
			key := group.Key{StreamPrefix: cs[0].PlacedOn("orders", cs...), ConsumerGroup: "g"}
			if v := cs[1].Admin().Create(key, 2); v.ShardCount != 2 {
				t.Fatalf("created %+v", v)
			}
			m := cs[1].Member(key, "m-1")
			cs[1].WaitFor(func() bool { return m.Heartbeat().Status == contract.StatusOK && len(m.Owned()) == 2 }, "m-1 owns both shards")
			if owner := m.Header.Get("X-Coordinator-Owner"); owner != cs[0].URL {
				t.Errorf("answered by %q, want the owner %s", owner, cs[0].URL)
			}
			for _, c := range cs {
				if v := c.Admin().Group(key); v.ShardCount != 2 {
					t.Errorf("%s reads %+v", c.ID, v)
				}
			}
		})
	}
}

// A held write holds the group's actor until released; a failed one is
// the store's failure.
func TestFaults(t *testing.T) {
	c := coordtest.Start(t, coordtest.Options{Wrap: coordtest.NewFaults})
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "g"}
	entered, release := c.Faults().Hold(faultstore.CallCreate)
	created := make(chan int, 1)
	go func() {
		st, _, _ := c.Admin().Do(http.MethodPost, coordtest.GroupPath(key), `{"initialShardCount":1,"requestedBy":"t"}`)
		created <- st
	}()
	<-entered
	select {
	case st := <-created:
		t.Fatalf("create answered %d while its write is held", st)
	default:
	}
	release()
	if st := <-created; st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
}
