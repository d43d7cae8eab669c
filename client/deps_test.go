package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The client compiles none of the server: of the module's packages, the
// client and its subpackages depend only on each other and on contract,
// the wire (docs/architecture.md §2).
func TestClientImportsNoServerPackage(t *testing.T) {
	const module = "github.com/redis-stream-coordinator/coordinator/"
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		pkg, ours := strings.CutPrefix(dep, module)
		if ours && pkg != "client" && !strings.HasPrefix(pkg, "client/") && pkg != "contract" {
			t.Errorf("the client depends on the server package %s", dep)
		}
	}
}
