package purity

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is the module's layer order (docs/architecture.md §2.1), bottom
// first. A package belongs to the entry naming it or, failing that, its
// nearest listed ancestor (persistence/redis is listed; a new
// persistence/x would sit with persistence). The non-test files of a
// runtime package import only packages of lower layers.
var layers = [][]string{
	// The wire and the leaves: no import of the module.
	{"contract", "placement", "group/assignor", "ratelimit", "netlimit", "console",
		"internal/batchwire", "internal/workers", "internal/tlsfiles"},
	// Pure logic over the wire.
	{"group", "client/member", "security", "health"},
	// What the domain is stored, served and observed through.
	{"persistence", "streams", "audit", "config", "observe"},
	// The stores, the cluster, the read models, the group's pure core.
	{"persistence/memory", "persistence/redis", "persistence/sql", "persistence/breaker",
		"cluster", "monitoring", "actors/core"},
	// The runtime and its edges: the actors, the HTTP edge and the
	// metrics it reports to (through observe), side by side.
	{"actors", "http", "metrics"},
	// The Go client library.
	{"client"},
	// What the fenced sinks share; the sinks.
	{"client/sink"},
	{"client/sink/redissink", "client/sink/pgsink"},
	// The commands and the deployment's tests.
	{"cmd", "deploy"},
}

// Beside the layers: the test kit, which tests, the harnesses and the kit
// itself import, and the load and fault harnesses, which may import the
// kit. No runtime package imports either.
var (
	testKit   = []string{"internal/testkit"}
	harnesses = []string{"bench", "chaos", "cmd/coord-bench", "cmd/coord-chaos"}
)

// place is where a package of the module sits.
type place struct {
	kind  string // "runtime", "test kit", "harness" or "" (unplaced)
	layer int    // runtime only
}

// placeOf places rel (an import path relative to the module) by its
// longest listed prefix.
func placeOf(rel string) place {
	best, at := -1, place{}
	try := func(entry string, p place) {
		if (rel == entry || strings.HasPrefix(rel, entry+"/")) && len(entry) > best {
			best, at = len(entry), p
		}
	}
	for i, l := range layers {
		for _, e := range l {
			try(e, place{"runtime", i})
		}
	}
	for _, e := range testKit {
		try(e, place{kind: "test kit"})
	}
	for _, e := range harnesses {
		try(e, place{kind: "harness"})
	}
	return at
}

// violations returns the arrows of graph (package → the module packages
// its non-test files import, paths relative to the module) that break the
// layering: a runtime package importing the test kit, a harness or a
// package of its own layer or above; the test kit importing a harness; a
// package placed nowhere.
func violations(graph map[string][]string) []string {
	var out []string
	for from, imports := range graph {
		pf := placeOf(from)
		if pf.kind == "" {
			out = append(out, from+" is in no layer: place it in layers_test.go and docs/architecture.md §2.1")
			continue
		}
		for _, to := range imports {
			pt := placeOf(to)
			switch {
			case pt.kind == "":
				// reported as its own package
			case pf.kind == "runtime" && pt.kind != "runtime":
				out = append(out, from+" (runtime) imports "+to+" ("+pt.kind+")")
			case pf.kind == "runtime" && pt.layer >= pf.layer:
				out = append(out, from+" imports "+to+", which is not in a lower layer")
			case pf.kind == "test kit" && pt.kind == "harness":
				out = append(out, from+" (test kit) imports "+to+" (harness)")
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayers: the import graph of the module's non-test files
// (go list -f '{{.ImportPath}} {{.Imports}}' ./..., which also fails on a
// cycle) follows the layers.
func TestLayers(t *testing.T) {
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(mod))
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").CombinedOutput() // #nosec G204 -- tests only: go list of this module
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rel := func(p string) (string, bool) {
			if p == module {
				return ".", true
			}
			r, ok := strings.CutPrefix(p, module+"/")
			return r, ok
		}
		from, ok := rel(fields[0])
		if !ok {
			continue
		}
		graph[from] = nil
		for _, imp := range fields[1:] {
			if to, ok := rel(imp); ok {
				graph[from] = append(graph[from], to)
			}
		}
	}
	if len(graph) == 0 {
		t.Fatal("go list listed no package")
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
	if !slices.Contains(graph["metrics"], "observe") {
		t.Error("metrics does not import observe: the layering this test keeps has changed, update it and docs/architecture.md §2.1")
	}
}

// TestLayersRefuse: the check refuses what it is for.
func TestLayersRefuse(t *testing.T) {
	for _, c := range []struct {
		graph map[string][]string
		want  string
	}{
		{map[string][]string{"actors": {"internal/testkit/eventually"}}, "actors (runtime) imports internal/testkit/eventually (test kit)"},
		{map[string][]string{"persistence": {"internal/testkit/storetest"}}, "persistence (runtime) imports internal/testkit/storetest (test kit)"},
		{map[string][]string{"http": {"bench"}}, "http (runtime) imports bench (harness)"},
		{map[string][]string{"metrics": {"http"}}, "metrics imports http, which is not in a lower layer"},
		{map[string][]string{"http": {"metrics"}}, "http imports metrics, which is not in a lower layer"},
		{map[string][]string{"group": {"persistence"}}, "group imports persistence, which is not in a lower layer"},
		{map[string][]string{"contract": {"group"}}, "contract imports group, which is not in a lower layer"},
		{map[string][]string{"internal/testkit/coordtest": {"chaos"}}, "internal/testkit/coordtest (test kit) imports chaos (harness)"},
		{map[string][]string{"newpkg": nil}, "newpkg is in no layer: place it in layers_test.go and docs/architecture.md §2.1"},
	} {
		if got := violations(c.graph); !slices.Equal(got, []string{c.want}) {
			t.Errorf("violations(%v) = %q, want %q", c.graph, got, c.want)
		}
	}
	for _, ok := range []map[string][]string{
		{"internal/testkit/coordtest": {"http", "actors", "internal/testkit/eventually"}},
		{"cmd/coord-chaos": {"chaos", "internal/testkit/membersim", "client"}},
		{"persistence/redis": {"persistence", "group"}},
		{"cmd/coordinator": {"http", "metrics", "internal/tlsfiles"}},
	} {
		if got := violations(ok); len(got) != 0 {
			t.Errorf("violations(%v) = %q, want none", ok, got)
		}
	}
}
