package httpapi

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// TestContractTemplatesAreRoutes: every route template package contract
// declares (routes.go's string constants but BasePath, OwnerHeader and
// the …Prefix paths) is the template of a route the API registers, so a
// client that builds a URL from one reaches a route. ClusterTemplate is
// registered only with a cluster (Options.Cluster) and is left out.
func TestContractTemplatesAreRoutes(t *testing.T) {
	users, err := security.NewUsers(security.Options{AdminUsername: "admin", AdminPassword: "pw", TokenSecret: tokenSecret})
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	capture := func(rt Route, h httprouter.Handle) httprouter.Handle {
		registered = append(registered, rt.Template)
		return h
	}
	New(Options{Coordinator: &fakeCoord{}, Logger: discardLogger(), Security: &Security{Users: users}, BenchEndpoints: true,
		Middleware: []Middleware{capture}})
	templates := contractTemplates(t)
	if len(templates) < 25 {
		t.Fatalf("found only %d contract templates: %v", len(templates), templates)
	}
	for name, tmpl := range templates {
		if name == "ClusterTemplate" {
			continue
		}
		if !slices.Contains(registered, contract.BasePath+tmpl) {
			t.Errorf("contract.%s (%s) is not a registered route", name, tmpl)
		}
	}
}

// contractTemplates type-checks contract/routes.go and returns its string
// constants that name route templates, by name.
func contractTemplates(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../contract/routes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("contract", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || c.Val().Kind() != constant.String || !c.Exported() {
			continue
		}
		if name == "BasePath" || name == "OwnerHeader" || len(name) > 6 && name[len(name)-6:] == "Prefix" {
			continue
		}
		out[name] = constant.StringVal(c.Val())
	}
	return out
}
