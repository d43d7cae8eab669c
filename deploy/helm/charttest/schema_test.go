package charttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"

	"github.com/redis-stream-coordinator/coordinator/config"
)

var update = flag.Bool("update", false, "rewrite values.schema.json: its config subtree from config.Config, the rest in canonical form")

var schemaPath = filepath.Join(chartDir, "values.schema.json")

// enums are the configuration keys (dotted paths, "[]" for a list's items)
// whose value is one of a set; a ${VARIABLE} placeholder is accepted too.
// min-version also takes the numbers a YAML 1.2 or 1.3 is read as.
var enums = map[string][]any{
	"store.type":             {config.StoreMemory, config.StoreRedis, config.StoreJDBC},
	"audit.sink":             {config.AuditLog, config.AuditRedis},
	"server.tls.min-version": {config.TLSVersion12, config.TLSVersion13, 1.2, 1.3},
	"server.tls.client-auth": {config.ClientAuthNone, config.ClientAuthRequest, config.ClientAuthRequire},
	"api.users[].roles[]":    {"READ", "WRITE", "MEMBER", "ADMIN", "MONITOR"},
}

// configSchema is the JSON schema of the configuration tree, derived from
// the yaml tags and Go types of config.Config: every key and no other
// (additionalProperties false), scalars typed as the decoder reads them.
func configSchema(t *testing.T) map[string]any {
	s := typeSchema(t, "", reflect.TypeFor[config.Config]())
	s["description"] = "The coordinator's configuration tree (config/config.go, config/default.yaml), merged over its defaults. Generated from config.Config by deploy/helm/charttest (go test -run TestSchemaMatchesConfig -update)."
	return s
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/definitions/" + name} }

// typeSchema is the schema of a value of type typ at path.
func typeSchema(t *testing.T, path string, typ reflect.Type) map[string]any {
	if values, ok := enums[path]; ok {
		return map[string]any{"anyOf": []any{map[string]any{"enum": values}, ref("placeholder")}}
	}
	if typ == reflect.TypeFor[config.Duration]() {
		return ref("duration")
	}
	switch typ.Kind() {
	case reflect.Pointer:
		return typeSchema(t, path, typ.Elem())
	case reflect.Struct:
		properties := map[string]any{}
		for field := range typ.Fields() {
			name, _, _ := strings.Cut(field.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s.%s has no yaml key", path, field.Name)
			}
			key := name
			if path != "" {
				key = path + "." + name
			}
			properties[name] = typeSchema(t, key, field.Type)
		}
		return map[string]any{"type": "object", "additionalProperties": false, "properties": properties}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int:
		return ref("integer")
	case reflect.Bool:
		return ref("boolean")
	case reflect.Slice:
		if _, ok := enums[path+"[]"]; !ok && typ.Elem().Kind() == reflect.String {
			return ref("stringList")
		}
		return map[string]any{"type": "array", "items": typeSchema(t, path+"[]", typ.Elem())}
	}
	t.Fatalf("%s: no schema for Go type %s: teach typeSchema", path, typ)
	return nil
}

// canonical is v as indented JSON with sorted keys, the form of
// values.schema.json.
func canonical(t *testing.T, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// schemaKeys lists the dotted keys a schema's properties describe.
func schemaKeys(prefix string, s any) []string {
	props, _ := dig(s, "properties").(map[string]any)
	if items, ok := dig(s, "items").(map[string]any); ok {
		return schemaKeys(prefix+"[]", items)
	}
	var keys []string
	for name, sub := range props {
		key := prefix + "." + name
		keys = append(keys, key)
		keys = append(keys, schemaKeys(key, sub)...)
	}
	slices.Sort(keys)
	return keys
}

// yamlKeys lists the dotted keys of a decoded YAML mapping.
func yamlKeys(prefix string, v any) []string {
	m, _ := v.(map[string]any)
	var keys []string
	for name, sub := range m {
		key := prefix + "." + name
		keys = append(keys, key)
		keys = append(keys, yamlKeys(key, sub)...)
	}
	return keys
}

// values.schema.json describes config with exactly config.Config's keys and
// types, so that helm rejects an unknown or mistyped configuration key
// before a pod fails on it; -update rewrites it after the configuration
// changed.
func TestSchemaMatchesConfig(t *testing.T) {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	var want any
	if err := json.Unmarshal(canonical(t, configSchema(t)), &want); err != nil {
		t.Fatal(err)
	}
	got := dig(schema, "properties", "config")
	dig(schema, "properties").(map[string]any)["config"] = want
	out := canonical(t, schema)
	if *update {
		if err := os.WriteFile(schemaPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gotKeys, wantKeys := schemaKeys("config", got), schemaKeys("config", want)
	for _, k := range wantKeys {
		if !slices.Contains(gotKeys, k) {
			t.Errorf("values.schema.json lacks %s", k)
		}
	}
	for _, k := range gotKeys {
		if !slices.Contains(wantKeys, k) {
			t.Errorf("values.schema.json has %s, which config.Config has not", k)
		}
	}
	if !bytes.Equal(raw, out) {
		t.Error("values.schema.json differs from config.Config's keys and types, or is not in canonical form: run `go test -run TestSchemaMatchesConfig -update` in deploy/helm/charttest and review the diff")
	}
	// Every key config.Default() writes (config.String, the YAML the
	// coordinator prints) is described.
	var printed map[string]any
	if err := yaml.Unmarshal([]byte(config.Default().String()), &printed); err != nil {
		t.Fatal(err)
	}
	for _, k := range yamlKeys("config", printed["coordinator"]) {
		if !slices.Contains(gotKeys, k) {
			t.Errorf("config.Default() has %s, values.schema.json has not", k)
		}
	}
	for _, def := range []string{"placeholder", "integer", "boolean", "duration", "stringList"} {
		if dig(schema, "definitions", def) == nil {
			t.Errorf("values.schema.json: definitions.%s, used by the config subtree, is missing", def)
		}
	}
}

// The schema accepts the repository's whole default configuration as
// config (placeholders for integers and booleans included), and the chart's
// own values.yaml.
func TestSchemaAcceptsDefaultConfig(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, user := range map[string]map[string]any{"values.yaml": {}, "config/default.yaml": {"config": file["coordinator"]}} {
		vals, err := chartutil.CoalesceValues(chrt, user)
		if err != nil {
			t.Fatal(err)
		}
		if err := chartutil.ValidateAgainstSchema(chrt, vals); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
