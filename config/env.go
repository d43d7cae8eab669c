package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"
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
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: plainTag(s), Value: s}
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

// ClientVariables are COORDINATOR_ variables that programs talking to a
// coordinator read (cmd/sample-producer, cmd/sample-consumer) and the
// coordinator's own -config default; a coordinator started beside them
// accepts them.
var ClientVariables = []string{"COORDINATOR_CONFIG", "COORDINATOR_URL", "COORDINATOR_USER", "COORDINATOR_PASSWORD"}

// checkEnviron returns an error naming the first variable of environ (in
// sorted order) that starts with EnvPrefix but is neither in known (the
// names Parse looked up: every override and every placeholder) nor one of
// ClientVariables, and the closest name it might have meant: a misspelled
// override must not be ignored silently.
func checkEnviron(environ []string, known map[string]bool) error {
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix) && !known[name] && !slices.Contains(ClientVariables, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	name, best := unknown[0], ""
	for k := range known {
		if strings.HasPrefix(k, EnvPrefix) && (best == "" || closer(name, k, best)) {
			best = k
		}
	}
	return &KeyError{Err: fmt.Errorf("environment variable %s: %w (no configuration key or placeholder has this name; did you mean %s?)", name, ErrUnknownKey, best)}
}

// closer reports whether a is nearer to name than b by edit distance (ties
// go to the alphabetically first).
func closer(name, a, b string) bool {
	da, db := editDistance(name, a), editDistance(name, b)
	return da < db || da == db && a < b
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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
