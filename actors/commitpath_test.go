package actors_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A group is created or deleted in the store only by the runtime's commit
// path (groupActor.commit, actors/store.go), which persists the records
// of a write the group's core asked for: no other code of the module
// calls a Store's Create or Delete. Exempt are the store layer itself
// (package persistence and below: the stores, the breaker; and the stores'
// contract suite, internal/testkit/storetest) and decorators' own Create
// and Delete methods, which forward the call (metrics.Store).
//
// A Store call is recognised by its shape, a method Create or Delete
// whose first argument is a context (ctx, or a call of Context()); the
// domain's Create and Delete take an Instant first.
func TestOnlyTheCommitPathCreatesOrDeletesGroups(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "persistence" || rel == filepath.Join("internal", "testkit", "storetest") || d.Name() == "deploy" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found = append(found, storeWrites(t, root, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"actors/store.go: commit calls Create", "actors/store.go: commit calls Delete"}
	if strings.Join(found, "\n") != strings.Join(want, "\n") {
		t.Errorf("Store.Create/Store.Delete callers:\n%s\nwant only the commit path:\n%s",
			strings.Join(found, "\n"), strings.Join(want, "\n"))
	}
}

// storeWrites lists the Store.Create and Store.Delete calls of file rel,
// outside decorators' own Create and Delete methods, as "file: func calls
// method".
func storeWrites(t *testing.T, root, rel string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || fn.Recv != nil && (fn.Name.Name == "Create" || fn.Name.Name == "Delete") {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !isContext(call.Args[0]) {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Create" || sel.Sel.Name == "Delete") {
				out = append(out, filepath.ToSlash(rel)+": "+fn.Name.Name+" calls "+sel.Sel.Name)
			}
			return true
		})
	}
	return out
}

// isContext reports whether e looks like a context: a name ending in ctx
// or Ctx, or a call of a Context, Background or TODO function.
func isContext(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return strings.HasSuffix(strings.ToLower(e.Name), "ctx")
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Context", "Background", "TODO":
				return true
			}
		}
	}
	return false
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
