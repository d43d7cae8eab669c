// Package redissink is the fenced Redis sink (docs/client.md,
// "Effectively-once sinks"): a handler describes the writes of an entry
// (Writes), and one Lua script checks and advances the shard's fence,
// skips an entry applied already, runs the writes and acknowledges the
// entry (XACK), atomically (package sink states the rules).
//
// The fence of shard i of stream prefix P for group G is the hash
// KeyPrefix + "{P:i}:fence:G" (fields token and applied), in the hash slot
// of the shard's stream P:i, so that the script may XACK the entry. On
// Redis Cluster every key an entry writes must be in that slot too: build
// it with Key (KeyPrefix + "{P:i}:" + name); Writes refuses any other key
// (ErrCrossSlot). On a single Redis any key may be written.
//
// Redis scripts do not roll back: a write command that fails when it runs
// (a key of the wrong type) leaves the writes before it applied and the
// fence unmoved, so the entry is run again and those writes are repeated.
// Describe writes that cannot fail on keys the sink alone writes.
package redissink
