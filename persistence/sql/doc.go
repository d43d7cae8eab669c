// Package sql is the PostgreSQL metadata store (store.type=jdbc, docs/protocol.md §8.4 with
// deliberate improvement 3), on pgx/v5. Start-up creates two tables if
// they do not exist, each name optionally prefixed (Options.TablePrefix):
//
//	redis_stream_coordinator_metadata (
//	  stream_prefix VARCHAR(512), consumer_group VARCHAR(512),
//	  metadata_json JSONB,          -- the layout-2 aggregate; storeRevision = store_revision
//	  store_revision BIGINT, schema_version INTEGER, layout_version INTEGER,
//	  updated_at VARCHAR(64),       -- ISO-8601 UTC with milliseconds
//	  PRIMARY KEY (stream_prefix, consumer_group))
//	redis_stream_coordinator_members (
//	  stream_prefix VARCHAR(512), consumer_group VARCHAR(512), member_id VARCHAR(512),
//	  member_json JSONB,            -- one layout-2 member document
//	  PRIMARY KEY (stream_prefix, consumer_group, member_id))
//
// Every write is one SQL statement, hence one transaction: data-modifying
// CTEs update the metadata row guarded by store_revision (and the
// supported versions) and upsert/delete member rows only if that row was
// updated. Create is INSERT … ON CONFLICT DO NOTHING; Delete removes the
// metadata row and, in the same statement, its member rows. When a guarded
// statement changes nothing, a follow-up read tells ErrNotFound,
// ErrConflict and ErrCorrupt apart. Load reads the row and its members in
// one statement (one snapshot). JSONB normalises the stored JSON (key
// order, spacing), so documents come back equal as JSON, not as bytes.
//
// # Acquires and releases in batches
//
// Acquire and Release (the ownership records of persistence.Cluster) are
// batched (batch.go): the calls made while a batch is in flight go out
// together as the next ones, per calling coordinator and at most maxBatch
// keys, so that a coordinator taking over or handing over thousands of
// groups does so in a few database round trips. A lone call goes out at
// once. A batch of releases is one statement; a batch of acquires is one
// round trip of three statements in one implicit transaction (insert the
// missing rows, lock the rows in key order, take those whose holder is not
// live): each key gets what a lone Acquire gives it (its ownership,
// *OwnedError, ErrNotRegistered). A failed batch fails each of its calls.
//
// Reads that fail are ErrUnavailable; so are writes that PostgreSQL
// rejected (the statement rolled back) or that never reached it. Other
// write failures (connection lost mid-statement, timeout) are "outcome
// unknown".
//
// Connections come from a pgxpool.Pool of at most Options.MaxConns
// connections; a connection idle for over a second is pinged before reuse
// and a broken one is dropped, so a database restart costs at most the
// statements already in flight.
package sql
