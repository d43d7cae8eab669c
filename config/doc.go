// Package config owns the coordinator's YAML configuration (PROTOCOL.md §11):
// the typed [Config] tree under the `coordinator:` root, its defaults (also
// shipped as the embedded default.yaml), `${NAME:default}` environment
// placeholders, the duration syntax, and validation.
//
// Loading is strict: unknown keys are rejected with their full dotted path,
// and so are a fixed stream prefix, consumer group or per-group shard count
// anywhere in the file, because those are set through the Admin API (seed
// "Configuration Boundary"). Every key absent from a file keeps its default,
// so an empty file is a valid configuration.
//
// The package imports only the standard library and gopkg.in/yaml.v3; other
// packages read the returned *Config and never parse YAML themselves.
package config
