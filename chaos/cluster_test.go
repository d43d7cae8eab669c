package chaos

import (
	"math/rand/v2"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// TestClusterRoute: a member following an owner is sent to it while its
// process is up, and to its root when it is gone (the heartbeat fails
// there); one following none goes to a live coordinator.
func TestClusterRoute(t *testing.T) {
	const a, b = "http://127.0.0.1:1001", "http://127.0.0.1:1002"
	c := &cluster{slots: []*slot{
		{name: "c0", srv: &coordproc.Server{Root: a, Base: a + contract.BasePath}},
		{name: "c1"}, // down
	}}
	rng := rand.New(rand.NewPCG(1, 1))
	if name, root, ok := c.route(a, rng); !ok || name != "c0" || root != a {
		t.Fatalf("owner a: %s %s %v, want c0 %s", name, root, ok, a)
	}
	if name, root, ok := c.route(b, rng); !ok || name != b || root != b {
		t.Fatalf("owner gone: %s %s %v, want its root", name, root, ok)
	}
	if name, root, ok := c.route("", rng); !ok || name != "c0" || root != a {
		t.Fatalf("no owner: %s %s %v, want the live c0", name, root, ok)
	}
	c.slots[0].srv = nil
	if _, _, ok := c.route("", rng); ok {
		t.Fatal("no owner and nothing up: routed")
	}
}
