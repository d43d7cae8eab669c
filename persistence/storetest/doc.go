// Package storetest is the contract suite every persistence.Store must pass
// (Run), with the sample groups and comparisons it is built from (Group,
// Equal), which codec tests reuse.
//
// The suite drives stores through the codec: documents are
// persistence.Encode output and mutations come from persistence.MutationOf,
// so a store passes only if the codec's documents survive it unchanged as
// JSON. Each subtest calls newStore once, so stores may isolate tests by key
// prefix or table prefix.
package storetest
