package purity

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Deps fails t when a package matched by pattern (go list, relative to the
// test's directory) depends on a forbidden package: one whose import path
// is a forbidden entry or lies below it.
func Deps(t testing.TB, pattern string, forbidden ...string) {
	t.Helper()
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", pattern).CombinedOutput() // #nosec G204 -- tests only: go list of the pattern the test names
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if f = strings.TrimSuffix(f, "/"); dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("%s depends on %s", pattern, dep)
			}
		}
	}
}

// Source fails t when a Go file of the test's directory, tests aside,
// contains one of the forbidden texts (a clock read, a goroutine start).
func Source(t testing.TB, forbidden ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f) // #nosec G304 -- tests only: a Go file of the test's own directory
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range forbidden {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s uses %q", f, bad)
			}
		}
	}
}

// Clock lists the texts of clock reads, timers and goroutine starts.
var Clock = []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After", "time.NewTimer(",
	"time.NewTicker(", "\tgo "}
