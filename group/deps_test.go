package group_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The domain stays pure: nothing under group/ may depend, even indirectly,
// on the actor system, Redis, Prometheus or HTTP (docs/architecture.md §2).
func TestDomainImportsNoRuntime(t *testing.T) {
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/asynkron/protoactor-go",
		"github.com/redis/go-redis",
		"github.com/prometheus/",
		"net/http",
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("group/... depends on %s", dep)
			}
		}
	}
}
