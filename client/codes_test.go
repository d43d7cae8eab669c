package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestErrorCodesMatchServer: the client's Code* constants are exactly
// contract's codes, each the contract constant of its name, and every one
// of them is a code the server sends: named by a non-test file of a server
// package (every package but the clients: client, cmd/coordctl, bench,
// chaos, internal/testkit/membersim, and contract itself).
func TestErrorCodesMatchServer(t *testing.T) {
	contract := constants(t, "../contract/codes.go", func(v ast.Expr) (string, bool) {
		lit, ok := v.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	})
	client := constants(t, "codes.go", func(v ast.Expr) (string, bool) {
		sel, ok := v.(*ast.SelectorExpr)
		if !ok || sel.X.(*ast.Ident).Name != "contract" {
			return "", false
		}
		return sel.Sel.Name, true
	})
	for name, of := range client {
		if of != name {
			t.Errorf("client.%s = contract.%s: a client code must be the contract code of its name", name, of)
		}
		if _, ok := contract[name]; !ok {
			t.Errorf("client.%s is not a contract code", name)
		}
	}
	for name := range contract {
		if _, ok := client[name]; !ok {
			t.Errorf("contract.%s has no client constant", name)
		}
	}
	sent := serverNames(t)
	for _, name := range slices.Sorted(maps.Keys(contract)) {
		if !sent["contract."+name] {
			t.Errorf("contract.%s (%s) is named by no server package", name, contract[name])
		}
	}
	if len(contract) < 30 {
		t.Errorf("found only %d contract codes", len(contract))
	}
}

// constants returns the Code* constants of the file name whose value
// value accepts, by name.
func constants(t *testing.T, name string, value func(ast.Expr) (string, bool)) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
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
				if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				v, ok := value(vs.Values[i])
				if !ok {
					t.Fatalf("%s: %s has an unexpected value", name, n.Name)
				}
				out[n.Name] = v
			}
		}
	}
	return out
}

// serverNames returns the selectors (pkg.Name) the non-test Go files of
// the server packages use.
func serverNames(t *testing.T) map[string]bool {
	t.Helper()
	clients := []string{"client", "contract", "bench", "chaos", "cmd/coordctl", "internal/testkit/membersim", "deploy"}
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			if slices.Contains(clients, filepath.ToSlash(rel)) || strings.HasPrefix(d.Name(), ".") && rel != "." {
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
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					out[id.Name+"."+sel.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
