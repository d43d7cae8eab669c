package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// defaultFile is the docs/protocol.md §11 tree with the seed's values; it runs on the memory
// store with no setup and is the base layer of every Parse.
//
//go:embed default.yaml
var defaultFile []byte

var (
	// ErrUnknownKey: the key is not part of the docs/protocol.md §11 tree.
	ErrUnknownKey = errors.New("unknown key")
	// ErrAdminAPIOnly: the file fixes a stream prefix, consumer group or
	// per-group shard count, which only the Admin API may set.
	ErrAdminAPIOnly = errors.New("stream prefixes, consumer groups and per-group shard counts are not configuration: set them through the Admin API")
)

// KeyError is a problem with one key; Key is its full dotted path such as
// "coordinator.api.users[0].roles[1]" ("" for the document itself).
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string {
	if e.Key == "" {
		return e.Err.Error()
	}
	return e.Key + ": " + e.Err.Error()
}

func (e *KeyError) Unwrap() error { return e.Err }

func keyErrorf(key, format string, args ...any) *KeyError {
	return &KeyError{Key: key, Err: fmt.Errorf(format, args...)}
}

// Option adjusts Load and Parse.
type Option func(*options)

type options struct {
	lookup LookupEnv
	// environ lists the variables checked for unknown COORDINATOR_ names;
	// nil checks none.
	environ  []string
	hostname func() (string, error)
}

// WithLookupEnv resolves placeholders and overrides through lookup instead
// of the process environment; no variable is checked for being unknown.
func WithLookupEnv(lookup LookupEnv) Option {
	return func(o *options) { o.lookup, o.environ = lookup, nil }
}

// WithEnviron takes the environment from environ ("NAME=value" entries, as
// os.Environ returns them) instead of the process environment.
func WithEnviron(environ []string) Option {
	return func(o *options) {
		vars := make(map[string]string, len(environ))
		for _, kv := range environ {
			name, value, _ := strings.Cut(kv, "=")
			vars[name] = value
		}
		o.environ = environ
		o.lookup = func(name string) (string, bool) {
			v, ok := vars[name]
			return v, ok
		}
	}
}

// Load reads the file at path (none when path is ""), parses it as Parse
// does and validates it. Every error names the offending key.
func Load(path string, opts ...Option) (*Config, error) {
	var data []byte
	name := "embedded default.yaml"
	if path != "" {
		var err error
		// #nosec G304 -- path is the operator's -config flag: reading it is the point
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		name = path
	}
	c, err := Parse(data, opts...)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	return c, nil
}

// Parse builds the configuration in three layers without validating it:
// the embedded default.yaml, then the YAML document data merged over it,
// then the environment overrides (see EnvName). Merging is per key: a key
// data leaves out keeps the default file's value, placeholder included
// (`admin-password: ${COORDINATOR_ADMIN_PASSWORD:password}`), while a list
// given in data replaces the default list. Placeholders in scalar values
// are expanded before typing, so `port: ${REDIS_PORT:6379}` is an integer.
// Null or empty values keep the key's default, except that a string key
// becomes "". An empty ID becomes the host name and the listen port
// (defaultID, e.g. "myhost-8080"). Errors are *KeyError for unknown keys
// (ErrUnknownKey), Admin-API-only keys anywhere in the file (ErrAdminAPIOnly), bad
// placeholders and values of the wrong type, and for a set COORDINATOR_
// variable that is neither an override, nor a placeholder of either file,
// nor one of ClientVariables (ErrUnknownKey, naming the closest known name).
func Parse(data []byte, opts ...Option) (*Config, error) {
	o := options{lookup: os.LookupEnv, environ: os.Environ(), hostname: os.Hostname}
	for _, opt := range opts {
		opt(&o)
	}
	read := make(map[string]bool)
	lookup := func(name string) (string, bool) {
		read[name] = true
		return o.lookup(name)
	}
	c := defaults()
	d := decoder{lookup: lookup}
	// The default file can fail only on the environment its placeholders read.
	for _, doc := range [][]byte{defaultFile, data} {
		if err := d.document(doc, c); err != nil {
			return nil, err
		}
	}
	if err := applyEnv(c, lookup); err != nil {
		return nil, err
	}
	if err := checkEnviron(o.environ, read); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.ID) == "" {
		c.ID = defaultID(o.hostname, c.Server.Address)
	}
	return c, nil
}

// document decodes one YAML document (nothing for an empty one) onto c.
func (d decoder) document(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("invalid YAML: %w", err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("invalid YAML: %w", err)
		}
		return errors.New("invalid YAML: more than one document")
	}
	root := documentRoot(&doc)
	if root == nil {
		return nil
	}
	if err := checkAdminAPIOnly("", root); err != nil {
		return err
	}
	file := struct {
		Coordinator *Config `yaml:"coordinator"`
	}{c}
	return d.value("", root, reflect.ValueOf(&file).Elem())
}

// documentRoot returns the document's top node, or nil for an empty file.
func documentRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	return nil
}

// adminAPIOnly holds the normalised (lower case, no '-', '_' or '.') names of
// keys the seed's Configuration Boundary forbids.
var adminAPIOnly = map[string]bool{"streamprefix": true, "consumergroup": true, "shardcount": true}

// checkAdminAPIOnly rejects a forbidden key anywhere under n, in any
// spelling (streamPrefix, stream-prefix, stream_prefix, …).
func checkAdminAPIOnly(path string, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if k.Kind == yaml.ScalarNode && adminAPIOnly[normaliseKey(k.Value)] {
				return &KeyError{Key: p, Err: ErrAdminAPIOnly}
			}
			if err := checkAdminAPIOnly(p, v); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkAdminAPIOnly(index(path, i), item); err != nil {
				return err
			}
		}
	}
	return nil
}

func normaliseKey(k string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(k))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// decoder walks a yaml.Node tree onto a Config, keeping the dotted path of
// every value so errors can name it.
type decoder struct {
	// lookup expands placeholders; nil takes scalars literally.
	lookup LookupEnv
}

// value decodes n onto v. Scalars are expanded first; null keeps v, except
// that strings become "".
func (d decoder) value(path string, n *yaml.Node, v reflect.Value) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		var err error
		if n, err = d.expandScalar(path, n); err != nil {
			return err
		}
		if n.ShortTag() == "!!null" {
			if v.Kind() == reflect.String {
				v.SetString("")
			}
			return nil
		}
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(path, n, v.Elem())
	}
	if u, ok := v.Addr().Interface().(yaml.Unmarshaler); ok {
		if err := u.UnmarshalYAML(n); err != nil {
			return &KeyError{Key: path, Err: err}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.mapping(path, n, v)
	case reflect.Slice:
		return d.list(path, n, v)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return keyErrorf(path, "expected a string, got %s", kindName(n))
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			return keyErrorf(path, "expected true or false, got %s", describe(n))
		}
		v.SetBool(b)
	case reflect.Int:
		var i int
		if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			return keyErrorf(path, "expected an integer, got %s", describe(n))
		}
		v.SetInt(int64(i))
	default:
		panic(fmt.Sprintf("config: no decoder for %s at %s", v.Type(), path))
	}
	return nil
}

// expandScalar returns a copy of n with placeholders expanded. A plain
// (unquoted, untagged) scalar that changed is re-typed from its new text, so
// `${REDIS_PORT:6379}` becomes an integer and `${REDIS_USERNAME:}` null.
func (d decoder) expandScalar(path string, n *yaml.Node) (*yaml.Node, error) {
	if d.lookup == nil {
		return n, nil
	}
	s, err := expand(n.Value, d.lookup)
	if err != nil {
		return nil, &KeyError{Key: path, Err: err}
	}
	if s == n.Value {
		return n, nil
	}
	c := *n
	c.Value = s
	const explicit = yaml.TaggedStyle | yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	if c.Style&explicit == 0 {
		c.Tag = plainTag(s)
	}
	return &c, nil
}

// plainTag returns the tag YAML resolves the plain scalar s to ("!!int" for
// "6379", "!!null" for "", …), "!!str" for text that is no plain scalar.
func plainTag(s string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(s), &doc) != nil {
		return "!!str"
	}
	n := documentRoot(&doc)
	if n == nil {
		return "!!null"
	}
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Value != s {
		return "!!str"
	}
	return n.ShortTag()
}

// mapping decodes a YAML mapping onto the struct v by yaml tag name.
func (d decoder) mapping(path string, n *yaml.Node, v reflect.Value) error {
	if n.Kind != yaml.MappingNode {
		return keyErrorf(path, "expected a mapping, got %s", describe(n))
	}
	t := v.Type()
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		fields[name] = i
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return keyErrorf(path, "keys must be plain strings, got %s", kindName(k))
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			return keyErrorf(p, "duplicate key")
		}
		seen[k.Value] = true
		f, ok := fields[k.Value]
		if !ok {
			return &KeyError{Key: p, Err: ErrUnknownKey}
		}
		if err := d.value(p, n.Content[i+1], v.Field(f)); err != nil {
			return err
		}
	}
	return nil
}

// list decodes a YAML sequence onto the slice v, replacing its default (an
// empty sequence yields nil). A
// scalar is accepted for string lists and split at commas (empty items
// dropped), so one placeholder can fill a list.
func (d decoder) list(path string, n *yaml.Node, v reflect.Value) error {
	switch {
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		v.Set(reflect.Zero(v.Type()))
	case n.Kind == yaml.SequenceNode:
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.value(index(path, i), item, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.String:
		var items []string
		for item := range strings.SplitSeq(n.Value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		v.Set(reflect.ValueOf(items).Convert(v.Type()))
	default:
		return keyErrorf(path, "expected a list, got %s", describe(n))
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a scalar"
	}
}

// describe names a node for an error: its text when it is a scalar.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf("%q", n.Value)
	}
	return kindName(n)
}
