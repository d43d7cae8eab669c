package contract

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codes returns the Code constants of codes.go, value by name.
func codes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || vs.Type.(*ast.Ident).Name != "Code" {
					t.Fatalf("%s is not a Code string literal", n.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[n.Name] = v
			}
		}
	}
	return out
}

// TestCodesUniqueUpperSnake: every code is UPPER_SNAKE_CASE, its
// constant is Code + its CamelCase words, and no two constants share a
// value.
func TestCodesUniqueUpperSnake(t *testing.T) {
	upperSnake := regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	seen := map[string]string{}
	all := codes(t)
	for name, v := range all {
		if !upperSnake.MatchString(v) {
			t.Errorf("%s = %q is not UPPER_SNAKE_CASE", name, v)
		}
		if other, dup := seen[v]; dup {
			t.Errorf("%s and %s are both %q", name, other, v)
		}
		seen[v] = name
		if !strings.HasPrefix(name, "Code") {
			t.Errorf("%s: a code's constant is named Code…", name)
		}
	}
	if len(all) < 30 {
		t.Errorf("found only %d codes", len(all))
	}
}

// TestCodesOnlyHere: no non-test Go file outside contract writes a code
// as a string literal (it names the constant), and the default base path
// is written in at most two non-test Go files, comments included.
func TestCodesOnlyHere(t *testing.T) {
	values := map[string]string{}
	for name, v := range codes(t) {
		values[v] = name
	}
	var basePathFiles []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(src, []byte(BasePath)) {
			basePathFiles = append(basePathFiles, path)
		}
		if filepath.Dir(path) == filepath.Join("..", "contract") {
			return nil // package contract itself
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && values[s] != "" {
				t.Errorf("%s: %s written as a literal; use contract.%s", fset.Position(lit.Pos()), lit.Value, values[s])
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(basePathFiles) > 2 {
		t.Errorf("%q is written in %d non-test files (at most 2): %v", BasePath, len(basePathFiles), basePathFiles)
	}
}
