package purity

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// raceFreeLine is the Makefile's list of the packages make test runs
// without -race.
var raceFreeLine = regexp.MustCompile(`(?m)^RACE_FREE :=(.*)$`)

// goroutineStarts are the texts that start goroutines or run tests at
// once: a go statement, and t.Parallel.
var goroutineStarts = []string{"\tgo ", " go func", "(go func", ".Parallel()"}

// TestRaceFreePackages: in the test binary of every package that make test
// runs without -race (RACE_FREE in the Makefile), the module's code starts
// no goroutine: not the package's files or tests, nor the files of the
// module's packages the binary holds. With one goroutine there is nothing
// for the race detector to find.
func TestRaceFreePackages(t *testing.T) {
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := raceFreeLine.FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no RACE_FREE := line")
	}
	pkgs := strings.Fields(string(m[1]))
	if len(pkgs) == 0 {
		t.Fatal("RACE_FREE lists no package")
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(mod))
	for _, pkg := range pkgs {
		self, err := exec.Command("go", "list", "../../../"+pkg).Output() // #nosec G204 -- tests only: go list of a package the Makefile names
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		tested := strings.TrimSpace(string(self))
		cmd := exec.Command("go", "list", "-deps", "-test", "-json=ImportPath,Dir,GoFiles,TestGoFiles,XTestGoFiles", pkg) // #nosec G204 -- tests only: go list of a package the Makefile names
		cmd.Dir = "../../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var p struct {
				ImportPath, Dir                    string
				GoFiles, TestGoFiles, XTestGoFiles []string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.ImportPath, module) || strings.HasSuffix(p.ImportPath, ".test") {
				continue
			}
			// The binary holds the tests of the tested package only (its
			// variant "p [p.test]" and "p_test [p.test]").
			files := p.GoFiles
			if path, _, _ := strings.Cut(p.ImportPath, " "); strings.TrimSuffix(path, "_test") == tested {
				files = append(append(files, p.TestGoFiles...), p.XTestGoFiles...)
			}
			for _, f := range files {
				src, err := os.ReadFile(filepath.Join(p.Dir, f)) // #nosec G304 -- tests only: a file go list names
				if err != nil {
					t.Fatal(err)
				}
				for _, start := range goroutineStarts {
					if strings.Contains(string(src), start) {
						t.Errorf("%s (in %s's test binary, run without -race by make test): %s has %q", p.ImportPath, pkg, f, strings.TrimSpace(start))
					}
				}
			}
		}
	}
}
