package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// loadOpenAPI parses and validates the served document.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
	return doc
}

// outsideRoutes are the routes New registers outside the base path.
var outsideRoutes = []string{"/healthz", "/readyz", "/actuator/health", "/actuator/info", "/actuator/prometheus", "/metrics", APIDocsPath, "/console", "/console/{file}"}

// Every route the router serves is documented with its method, and every
// documented operation is served.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, rt := range newSecureEnv(t, &fakeCoord{}, nil).routes {
		served[rt.Method+" "+rt.Template] = true
	}
	for _, p := range outsideRoutes {
		served["GET "+p] = true
	}
	for r := range served {
		if !documented[r] {
			t.Errorf("%s is served but not in openapi.yaml", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("%s is in openapi.yaml but not served", r)
		}
	}
}

// Both document routes serve the same JSON without credentials, also when
// security is on.
func TestOpenAPIServedOpen(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, nil)
	for _, path := range []string{contract.BasePath + "/openapi.json", APIDocsPath} {
		rec := e.send(http.MethodGet, path, "", "")
		if rec.Code != http.StatusOK || rec.Body.String() != string(OpenAPIDocument()) {
			t.Errorf("GET %s: %d %.80s", path, rec.Code, rec.Body)
		}
	}
}
