// Package storetest is the contract suite every persistence.Store must pass
// (Run), with the sample data and comparison it is built from (Key, Group,
// Member, Equal), which codec and store tests reuse.
//
// The suite drives stores through the codec: documents are
// persistence.Encode output and mutations come from persistence.MutationOf,
// so a store passes only if the codec's documents survive it unchanged as
// JSON. Each subtest calls newStore once, so stores may isolate tests by key
// prefix or table prefix.
package storetest
