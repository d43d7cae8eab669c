package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// EnvPrefix starts the name of every environment override variable.
const EnvPrefix = "COORDINATOR_"

// EnvName returns the environment variable that overrides key, a dotted
// path under `coordinator.` ("server.address", "coordinator." optional):
// EnvPrefix + the path upper-cased with '.' and '-' replaced by '_', e.g.
// COORDINATOR_SERVER_ADDRESS, COORDINATOR_API_RATE_LIMIT_MAX_REQUESTS,
// COORDINATOR_REDIS_CLUSTER_NODES.
func EnvName(key string) string {
	key = strings.TrimPrefix(key, "coordinator.")
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// EnvKeys returns every key an environment variable can override, as
// dotted paths under `coordinator.` in the tree's order: every scalar and
// list key (lists of mappings, i.e. api.users, as one key).
func EnvKeys() []string {
	var keys []string
	_ = walkKeys("", reflect.ValueOf(defaults()).Elem(), func(key string, _ reflect.Value) error {
		keys = append(keys, key)
		return nil
	})
	return keys
}

// applyEnv overrides every key of c whose EnvName variable is set, even to
// the empty string. Values are taken literally (no placeholders) and typed
// as in a file: strings as they are, numbers, booleans and durations by
// their text, string lists split at commas, and a list of mappings
// (COORDINATOR_API_USERS) as YAML flow text such as
// `[{username: ops, password: s3cret, roles: [READ]}]`. Errors are
// *KeyError naming the key and the variable.
func applyEnv(c *Config, lookup LookupEnv) error {
	literal := decoder{}
	return walkKeys("", reflect.ValueOf(c).Elem(), func(key string, v reflect.Value) error {
		name := EnvName(key)
		s, ok := lookup(name)
		if !ok {
			return nil
		}
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
		if t := v.Type(); t.Kind() == reflect.String || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String {
			n.Tag = "!!str"
		} else if t.Kind() == reflect.Slice {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
				return keyErrorf("coordinator."+key, "environment variable %s: invalid YAML: %v", name, err)
			}
			if n = documentRoot(&doc); n == nil {
				n = &yaml.Node{Kind: yaml.SequenceNode}
			}
		}
		if err := literal.value("coordinator."+key, n, v); err != nil {
			var ke *KeyError
			if errors.As(err, &ke) {
				return &KeyError{Key: ke.Key, Err: fmt.Errorf("environment variable %s: %w", name, ke.Err)}
			}
			return err
		}
		return nil
	})
}

// walkKeys calls f with the dotted path (under `coordinator.`) and value of
// every leaf key of the struct v: anything but a nested struct without its
// own YAML decoding.
func walkKeys(path string, v reflect.Value, f func(key string, v reflect.Value) error) error {
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		key, fv := join(path, name), v.Field(i)
		if fv.Kind() == reflect.Struct {
			if _, custom := fv.Addr().Interface().(yaml.Unmarshaler); !custom {
				if err := walkKeys(key, fv, f); err != nil {
					return err
				}
				continue
			}
		}
		if err := f(key, fv); err != nil {
			return err
		}
	}
	return nil
}
