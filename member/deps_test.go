package member_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The member state machine stays pure: no actors, Redis, Prometheus or
// network, even indirectly, and no clock reads or goroutines in its code.
func TestMemberIsPure(t *testing.T) {
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{"github.com/asynkron/protoactor-go", "github.com/redis/go-redis", "github.com/prometheus/", "net"}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("member depends on %s", dep)
			}
		}
	}
}

func TestMemberReadsNoClock(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After", "\tgo ", "sync."} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s uses %q", f, bad)
			}
		}
	}
}
