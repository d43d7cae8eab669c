package httpapi_test

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	httpapi "github.com/redis-stream-coordinator/coordinator/http"
)

// openAPIRouter finds operations of the served OpenAPI document.
var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPIDocument())
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// conformant serves h and checks every answer against the OpenAPI
// document: the operation exists and the status, content type and body
// match its response schema. A mismatch fails t.
func conformant(t *testing.T, h http.Handler) http.Handler {
	t.Helper()
	router, err := openAPIRouter()
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		route, params, err := router.FindRoute(r)
		if err != nil {
			t.Errorf("%s %s: no operation in openapi.yaml: %v", r.Method, r.URL.Path, err)
			return
		}
		err = openapi3filter.ValidateResponse(r.Context(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
			Status:                 rec.Code,
			Header:                 rec.Header(),
			Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
			Options:                &openapi3filter.Options{IncludeResponseStatus: true},
		})
		if err != nil {
			t.Errorf("%s %s answered %d, not as openapi.yaml says: %v\n%s", r.Method, r.URL.Path, rec.Code, err, rec.Body)
		}
	})
}
