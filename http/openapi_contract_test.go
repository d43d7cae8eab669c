package httpapi

import (
	"cmp"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// openAPIRoutes are the routes of contract.Routes that openapi.yaml
// describes: all but the load harness's (debug.bench-endpoints).
func openAPIRoutes() []contract.Route {
	return slices.DeleteFunc(slices.Clone(contract.Routes), func(r contract.Route) bool { return r.Feature == contract.FeatureBench })
}

// openAPIOperation is r's operation in doc, nil when it has none.
func openAPIOperation(doc *openapi3.T, r contract.Route) *openapi3.Operation {
	item := doc.Paths.Find(contract.BasePath + r.Template)
	if item == nil {
		return nil
	}
	return item.GetOperation(r.Method)
}

// The OpenAPI operations are the route table's (with the default base path)
// and the routes outside the base path, no more, no fewer.
func TestOpenAPIOperationsAreTheRouteTable(t *testing.T) {
	doc := loadOpenAPI(t)
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	table := map[string]bool{}
	for _, r := range openAPIRoutes() {
		table[r.Method+" "+contract.BasePath+r.Template] = true
	}
	for _, p := range outsideRoutes {
		table[http.MethodGet+" "+p] = true
	}
	for r := range table {
		if !documented[r] {
			t.Errorf("%s is in the route table but not in openapi.yaml", r)
		}
	}
	for r := range documented {
		if !table[r] {
			t.Errorf("%s is in openapi.yaml but not in the route table", r)
		}
	}
}

// Every JSON field of a route's request and answer types (contract.Route's
// Request and Answers), at any depth, is in the schema openapi.yaml gives
// that operation's request body or success answer.
func TestOpenAPISchemasHoldEveryContractField(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, r := range openAPIRoutes() {
		op := openAPIOperation(doc, r)
		if op == nil {
			continue // TestOpenAPIOperationsAreTheRouteTable reports it
		}
		name := r.Method + " " + r.Template
		if r.Request != nil {
			var schema *openapi3.SchemaRef
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				schema = jsonSchema(op.RequestBody.Value.Content)
			}
			for _, m := range missingFields(schema, r.Request) {
				t.Errorf("%s: the request body's schema lacks %s (%s)", name, m, r.Request)
			}
		}
		for _, answer := range r.Answers {
			for _, m := range missingFields(successSchema(op), answer) {
				t.Errorf("%s: the answer's schema lacks %s (%s)", name, m, answer)
			}
		}
	}
}

// The schema check fails on a field missing at any depth, and on a list or
// map whose schema does not say what it holds.
func TestMissingFieldsFindsWhatTheSchemaLacks(t *testing.T) {
	type inner struct {
		Kept    string `json:"kept"`
		Dropped int    `json:"dropped"`
	}
	type embedded struct {
		Promoted bool `json:"promoted"`
	}
	type outer struct {
		embedded
		Name    string           `json:"name"`
		Inner   *inner           `json:"inner"`
		List    []inner          `json:"list"`
		ByName  map[string]inner `json:"byName"`
		Shards  contract.ShardSet
		Skipped string `json:"-"`
	}
	schema := openapi3.NewObjectSchema().
		WithProperty("promoted", openapi3.NewBoolSchema()).
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("inner", openapi3.NewObjectSchema().WithProperty("kept", openapi3.NewStringSchema())).
		WithProperty("list", openapi3.NewArraySchema()).
		WithProperty("byName", openapi3.NewObjectSchema()).
		WithProperty("Shards", openapi3.NewArraySchema().WithItems(openapi3.NewObjectSchema()))
	got := missingFields(schema.NewRef(), reflect.TypeFor[outer]())
	want := []string{".Shards[].shardIndex", ".byName{}", ".inner.dropped", ".list[]"}
	if !slices.Equal(got, want) {
		t.Errorf("missingFields = %q, want %q", got, want)
	}
	if got := missingFields(openapi3.NewOneOfSchema(openapi3.NewObjectSchema(), schema).NewRef(), reflect.TypeFor[embedded]()); got != nil {
		t.Errorf("one of two alternatives holds every field, yet missingFields = %q", got)
	}
}

// jsonSchema is the application/json schema of content, nil when it has
// none.
func jsonSchema(content openapi3.Content) *openapi3.SchemaRef {
	if mt := content.Get("application/json"); mt != nil {
		return mt.Schema
	}
	return nil
}

// successSchema is the JSON schema of op's first 2xx answer.
func successSchema(op *openapi3.Operation) *openapi3.SchemaRef {
	for _, code := range []string{"200", "201", "202"} {
		if resp := op.Responses.Value(code); resp != nil && resp.Value != nil {
			return jsonSchema(resp.Value.Content)
		}
	}
	return nil
}

// Types encoded as JSON values of their own (strings, and shard sets as
// lists of shards).
var (
	shardSetType = reflect.TypeFor[contract.ShardSet]()
	marshaler    = reflect.TypeFor[json.Marshaler]()
	timeType     = reflect.TypeFor[time.Time]()
)

// missingFields lists, sorted, the JSON fields of t (as encoding/json
// names them, embedded structs promoted) that schema does not hold at
// their path, and the lists and maps whose schema gives no items or
// values. Of oneOf and anyOf alternatives, the one that holds the most
// counts; allOf parts count together.
func missingFields(schema *openapi3.SchemaRef, t reflect.Type) []string {
	var out []string
	walkSchema(schema, t, "", map[walked]bool{}, &out)
	slices.Sort(out)
	return out
}

// walked is a schema already compared with a type.
type walked struct {
	schema *openapi3.Schema
	t      reflect.Type
}

func walkSchema(ref *openapi3.SchemaRef, t reflect.Type, path string, seen map[walked]bool, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == shardSetType {
		t = reflect.TypeFor[[]contract.Shard]()
	}
	if t == timeType || t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return // a string or number of its own (Instant, time.Time)
	}
	if ref == nil || ref.Value == nil {
		*out = append(*out, path+" (no schema)")
		return
	}
	s := ref.Value
	if seen[walked{s, t}] {
		return
	}
	seen[walked{s, t}] = true
	if alternatives := append(slices.Clone(s.OneOf), s.AnyOf...); len(alternatives) > 0 {
		var best []string
		for i, alt := range alternatives {
			var missing []string
			walkSchema(alt, t, path, map[walked]bool{}, &missing)
			if i == 0 || len(missing) < len(best) {
				best = missing
			}
		}
		*out = append(*out, best...)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		props := properties(s)
		for _, f := range jsonFields(t) {
			if p, ok := props[f.name]; ok {
				walkSchema(p, f.t, path+"."+f.name, seen, out)
			} else {
				*out = append(*out, path+"."+f.name)
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // base64 text
		}
		if items := partOf(s, func(s *openapi3.Schema) *openapi3.SchemaRef { return s.Items }); items != nil {
			walkSchema(items, t.Elem(), path+"[]", seen, out)
		} else {
			*out = append(*out, path+"[]")
		}
	case reflect.Map:
		if values := partOf(s, func(s *openapi3.Schema) *openapi3.SchemaRef { return s.AdditionalProperties.Schema }); values != nil {
			walkSchema(values, t.Elem(), path+"{}", seen, out)
		} else {
			*out = append(*out, path+"{}")
		}
	}
}

// properties are the properties of s and of its allOf parts.
func properties(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	for name, p := range s.Properties {
		out[name] = p
	}
	for _, part := range s.AllOf {
		if part.Value != nil {
			for name, p := range properties(part.Value) {
				out[name] = p
			}
		}
	}
	return out
}

// partOf returns get(s), else that of s's first allOf part that has one.
func partOf(s *openapi3.Schema, get func(*openapi3.Schema) *openapi3.SchemaRef) *openapi3.SchemaRef {
	if r := get(s); r != nil {
		return r
	}
	for _, part := range s.AllOf {
		if part.Value != nil {
			if r := partOf(part.Value, get); r != nil {
				return r
			}
		}
	}
	return nil
}

// jsonField is one field of a struct as encoding/json encodes it.
type jsonField struct {
	name string
	t    reflect.Type
}

// jsonFields lists t's JSON fields: exported fields not tagged "-", named
// by their tag or Go name, an untagged embedded struct's fields in its
// place.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if ft := f.Type; f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		out = append(out, jsonField{name: cmp.Or(name, f.Name), t: f.Type})
	}
	return out
}
