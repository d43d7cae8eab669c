package placement_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The package stays pure (doc.go): it imports only these packages, so it
// can do no I/O, read no clock and start no goroutines of its own.
func TestImportsArePure(t *testing.T) {
	// go test puts its own GOROOT/bin first on the test's PATH.
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := []string{
		"cmp",
		"github.com/cespare/xxhash/v2",
		"math",
		"math/rand/v2",
		"slices",
		"strconv",
	}
	for imp := range strings.FieldsSeq(string(out)) {
		if !slices.Contains(allowed, imp) {
			t.Errorf("placement imports %s; only %v are allowed", imp, allowed)
		}
	}
}
