// Package pgsink is the fenced PostgreSQL sink (docs/client.md,
// "Effectively-once sinks"): for each entry one transaction upserts the
// shard's fence row (token <= the entry's, refusing a lower one), checks
// the shard's applied entry id, runs the handler's statements, moves the
// applied id to the entry and commits; the consumer acknowledges the entry
// after the commit (package sink states the rules). A refused fence rolls
// the transaction back and the handler's error wraps client.ErrFenced, so
// the consumer stops handling the shard.
//
// The fence table (Config.Table, created by Setup) has one row per shard
// stream and consumer group: the token and the applied id (milliseconds
// and sequence, -1 -1 before the first entry). The upsert locks the row
// until the transaction ends, so a zombie's transaction that runs at the
// same time waits for the owner's and then finds the higher token.
package pgsink
