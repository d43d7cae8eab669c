package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestErrorCodesMatchServer: the client's Code* constants are exactly the
// errorCodes the server can send, read from its source: contract.Code*
// constants, the http package's code* constants, the codes of its answer
// table and the literal codes it passes to writeError.
func TestErrorCodesMatchServer(t *testing.T) {
	groupCodes := constants(t, parse(t, "../group/errors.go"), "Code", nil)
	server := slices.Collect(maps.Values(groupCodes))
	files, err := filepath.Glob("../http/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f := parse(t, name)
		server = append(server, slices.Collect(maps.Values(constants(t, f, "code", nil)))...)
		server = append(server, literalCodes(f)...)
	}
	client := slices.Collect(maps.Values(constants(t, parse(t, "codes.go"), "Code", groupCodes)))
	slices.Sort(server)
	slices.Sort(client)
	server, client = slices.Compact(server), slices.Compact(client)
	for _, c := range server {
		if !slices.Contains(client, c) {
			t.Errorf("the server sends %s, which the client has no Code constant for", c)
		}
	}
	for _, c := range client {
		if !slices.Contains(server, c) {
			t.Errorf("the client's code %s is not one the server sends", c)
		}
	}
	if len(server) < 30 {
		t.Errorf("found only %d server codes: %v", len(server), server)
	}
}

func parse(t *testing.T, name string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// constants returns the values of f's constants whose name starts with
// prefix, by name: string literals, or selectors of group constants
// (resolved in group).
func constants(t *testing.T, f *ast.File, prefix string, group map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				switch v := vs.Values[i].(type) {
				case *ast.BasicLit:
					out[n.Name] = unquote(t, v)
				case *ast.SelectorExpr:
					c, ok := group[v.Sel.Name]
					if !ok {
						t.Fatalf("%s = %s.%s: not a group code", n.Name, v.X, v.Sel.Name)
					}
					out[n.Name] = c
				}
			}
		}
	}
	return out
}

// literalCodes returns the string literals f uses as codes: the second
// field of an answer{…} (also with its type elided in a map[…]answer) and
// the third argument of writeError(…).
func literalCodes(f *ast.File) []string {
	var out []string
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			out = append(out, s)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if isIdent(n.Type, "answer") && len(n.Elts) > 1 {
				add(n.Elts[1])
			}
			if m, ok := n.Type.(*ast.MapType); ok && isIdent(m.Value, "answer") {
				for _, e := range n.Elts {
					if v, ok := e.(*ast.KeyValueExpr).Value.(*ast.CompositeLit); ok && len(v.Elts) > 1 {
						add(v.Elts[1])
					}
				}
			}
		case *ast.CallExpr:
			if isIdent(n.Fun, "writeError") && len(n.Args) > 2 {
				add(n.Args[2])
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func unquote(t *testing.T, lit *ast.BasicLit) string {
	t.Helper()
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
