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

// outsideRoutes are the routes New registers outside the base path (the
// route table holds those under it).
var outsideRoutes = []string{"/healthz", "/readyz", "/actuator/health", "/actuator/info", "/actuator/prometheus", "/metrics", APIDocsPath, "/console", "/console/{file}"}

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
