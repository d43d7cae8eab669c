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
	newTestAPI(&fakeCoord{}, func(o *Options) {
		o.Security, o.BenchEndpoints, o.Middleware = &Security{Users: users}, true, []Middleware{capture}
	})
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

// TestRouterIsTheRouteTable: the API registers exactly the routes of
// contract.Routes whose feature is on (the cluster's route is checked by
// the forwarding tests, which build a cluster), each with the table's operation,
// scope, audit action and mutation flag, and nothing else.
func TestRouterIsTheRouteTable(t *testing.T) {
	users, err := security.NewUsers(security.Options{AdminUsername: "admin", AdminPassword: "pw", TokenSecret: tokenSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		on   []contract.Feature
	}{
		{"open", Options{}, []contract.Feature{contract.FeatureAlways}},
		{"secured, bench", Options{Security: &Security{Users: users}, BenchEndpoints: true},
			[]contract.Feature{contract.FeatureAlways, contract.FeatureSecurity, contract.FeatureBench}},
	} {
		registered := map[string]Route{}
		tc.o.Runtime, tc.o.Logger = &fakeCoord{}, discardLogger()
		tc.o.Middleware = []Middleware{func(rt Route, h httprouter.Handle) httprouter.Handle {
			registered[rt.Method+" "+rt.Template] = rt
			return h
		}}
		New(tc.o)
		want := 0
		for _, spec := range contract.Routes {
			if !slices.Contains(tc.on, spec.Feature) {
				continue
			}
			want++
			rt, ok := registered[spec.Method+" "+contract.BasePath+spec.Template]
			if !ok {
				t.Errorf("%s: %s %s is in the table but not registered", tc.name, spec.Method, spec.Template)
				continue
			}
			if rt.Operation != spec.Operation || rt.Scope != spec.Scope || rt.Action != spec.Action || rt.Mutation != spec.Mutates {
				t.Errorf("%s: %s %s registered as %+v, table says %+v", tc.name, spec.Method, spec.Template, rt, spec)
			}
		}
		if len(registered) != want {
			t.Errorf("%s: %d routes registered, the table has %d with these features", tc.name, len(registered), want)
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
