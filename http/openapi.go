package httpapi

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/julienschmidt/httprouter"
	"go.yaml.in/yaml/v4"
)

// openAPIYAML is the hand-written OpenAPI 3.1 description of every route,
// with the default base path.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// APIDocsPath serves the OpenAPI document outside the base path, where
// Spring clients look for it (docs/protocol.md §1 lists it as open).
const APIDocsPath = "/v3/api-docs"

// OpenAPIDocument returns openapi.yaml as JSON. It panics if the embedded
// file is not valid YAML (a build defect the package tests catch).
var OpenAPIDocument = sync.OnceValue(func() []byte {
	var doc any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		panic("httpapi: openapi.yaml: " + err.Error())
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic("httpapi: openapi.yaml: " + err.Error())
	}
	return out
})

// openAPI serves the OpenAPI document (open, no credentials). Its paths
// carry the default base path whatever api.base-path is.
func openAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	writeJSON(w, http.StatusOK, json.RawMessage(OpenAPIDocument()))
}
