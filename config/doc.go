// Package config owns the coordinator's YAML configuration (docs/protocol.md §11):
// the typed [Config] tree under the `coordinator:` root, its defaults (also
// shipped as the embedded default.yaml), `${NAME:default}` environment
// placeholders, the duration syntax, and validation.
//
// A configuration is built in three layers: the embedded default.yaml, the
// user's file merged over it key by key (a key left out keeps its default,
// placeholder included), and environment overrides: every key can be set by
// the variable [EnvName] gives it, COORDINATOR_ + its path upper-cased with
// '.' and '-' turned into '_' (COORDINATOR_SERVER_ADDRESS).
//
// Validation refuses the well-known default credentials (admin password
// "password", empty token secret) on a non-loopback listen address unless
// api.allow-insecure-defaults is true.
//
// Loading is strict: unknown keys are rejected with their full dotted path,
// and so are a fixed stream prefix, consumer group or per-group shard count
// anywhere in the file, because those are set through the Admin API (seed
// "Configuration Boundary"). Every key absent from a file keeps its default,
// so an empty file is a valid configuration.
//
// The package imports only the standard library and go.yaml.in/yaml/v4; other
// packages read the returned *Config and never parse YAML themselves.
package config
