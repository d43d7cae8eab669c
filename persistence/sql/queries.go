package sql

import (
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// queries are the statements of one table pair.
type queries struct {
	createTables, load, revision, exists, versions, create, commit, delete, list, count string
	// The registry and ownership statements (cluster.go).
	register, renew, deregister, coordinators, ownerRelease, owners, fence string
	// The three statements of a batch of acquires (acquire.go).
	ownerInsert, ownerLock, ownerTake string
	// The two steps of PruneOwners (cluster.go).
	orphansLock, orphansDelete string
}

// fenceHolds is the condition of a fenced write: the fence parameter
// (persistence.Fence.String) is empty or matches group ($1, $2)'s
// ownership row.
func fenceHolds(owners, param string) string {
	return fmt.Sprintf(`(%[2]s::text = '' OR EXISTS (SELECT 1 FROM %[1]s o WHERE o.stream_prefix = $1 AND o.consumer_group = $2
    AND o.coordinator_id || E'\n' || o.token || E'\n' || o.epoch::text = %[2]s::text))`, owners, param)
}

// withRevision is the SQL form of persistence.WithStoreRevision: expr
// with its storeRevision set to rev when expr is a JSON object.
func withRevision(expr, rev string) string {
	return fmt.Sprintf(`CASE WHEN jsonb_typeof(%[1]s) = 'object' THEN jsonb_set(%[1]s, '{storeRevision}', to_jsonb(%[2]s)) ELSE %[1]s END`, expr, rev)
}

// upsertMembers inserts or replaces the member rows given as parallel
// arrays (ids $7, documents $8) of group ($1, $2), provided the CTE head
// returned a row; ids listed in excluded are skipped.
func upsertMembers(members, excluded string) string {
	return fmt.Sprintf(`INSERT INTO %s (stream_prefix, consumer_group, member_id, member_json)
  SELECT $1, $2, u.id, u.doc::jsonb FROM unnest($7::text[], $8::text[]) AS u(id, doc)
  WHERE EXISTS (SELECT 1 FROM head) AND NOT (u.id = ANY(%s))
  ON CONFLICT (stream_prefix, consumer_group, member_id) DO UPDATE SET member_json = EXCLUDED.member_json`, members, excluded)
}

// countUp adds delta to the group counts of prefix $1 and of all groups
// (the row of the empty prefix, which no valid stream prefix is), once if
// the CTE head returned a row.
func countUp(counts string, delta int) string {
	return fmt.Sprintf(`INSERT INTO %[1]s AS c (stream_prefix, groups)
  SELECT p, %[2]d FROM (SELECT 1 FROM head LIMIT 1) h, (VALUES ($1::varchar), ('')) AS v(p)
  ON CONFLICT (stream_prefix) DO UPDATE SET groups = c.groups + EXCLUDED.groups`, counts, delta)
}

func newQueries(meta, members, coords, owners, counts string) queries {
	pk := `stream_prefix = $1 AND consumer_group = $2`
	liveSelf := fmt.Sprintf(`EXISTS (SELECT 1 FROM %s WHERE id = $3 AND token = $4 AND lease_end > clock_timestamp())`, coords)
	ownerOfU := `o.stream_prefix = u.sp AND o.consumer_group = u.cg`
	leaseEnd := func(param string) string {
		return `clock_timestamp() + ` + param + `::bigint * interval '1 millisecond'`
	}
	return queries{
		createTables: fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS %[1]s (
  stream_prefix VARCHAR(512) NOT NULL, consumer_group VARCHAR(512) NOT NULL,
  metadata_json JSONB NOT NULL, store_revision BIGINT NOT NULL,
  schema_version INTEGER NOT NULL, layout_version INTEGER NOT NULL, updated_at VARCHAR(64) NOT NULL,
  PRIMARY KEY (stream_prefix, consumer_group));
CREATE TABLE IF NOT EXISTS %[2]s (
  stream_prefix VARCHAR(512) NOT NULL, consumer_group VARCHAR(512) NOT NULL,
  member_id VARCHAR(512) NOT NULL, member_json JSONB NOT NULL,
  PRIMARY KEY (stream_prefix, consumer_group, member_id));
CREATE TABLE IF NOT EXISTS %[3]s (
  id VARCHAR(512) PRIMARY KEY, token VARCHAR(128) NOT NULL, url VARCHAR(2048) NOT NULL,
  lease_end TIMESTAMPTZ NOT NULL);
CREATE TABLE IF NOT EXISTS %[4]s (
  stream_prefix VARCHAR(512) NOT NULL, consumer_group VARCHAR(512) NOT NULL,
  coordinator_id VARCHAR(512) NOT NULL, token VARCHAR(128) NOT NULL, epoch BIGINT NOT NULL,
  PRIMARY KEY (stream_prefix, consumer_group));
CREATE TABLE IF NOT EXISTS %[5]s (
  stream_prefix VARCHAR(512) PRIMARY KEY, groups BIGINT NOT NULL);
INSERT INTO %[5]s (stream_prefix, groups)
SELECT * FROM (SELECT stream_prefix, count(*) FROM %[1]s GROUP BY stream_prefix UNION ALL SELECT '', count(*) FROM %[1]s) AS t
WHERE NOT EXISTS (SELECT 1 FROM %[5]s WHERE stream_prefix = '')
ON CONFLICT (stream_prefix) DO NOTHING`, meta, members, coords, owners, counts),

		load: fmt.Sprintf(`SELECT m.metadata_json::text, m.store_revision, m.schema_version, m.layout_version, m.updated_at,
  COALESCE((SELECT jsonb_object_agg(member_id, member_json) FROM %[2]s WHERE %[3]s), '{}'::jsonb)::text
FROM %[1]s m WHERE %[3]s`, meta, members, pk),

		revision: fmt.Sprintf(`SELECT store_revision FROM %s WHERE %s`, meta, pk),

		exists: fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE %s)`, meta, pk),

		versions: fmt.Sprintf(`SELECT store_revision, schema_version, layout_version FROM %s WHERE %s`, meta, pk),

		// $3 aggregate, $4 schema, $5 layout, $6 updatedAt, $7/$8 members,
		// $9 fence.
		create: fmt.Sprintf(`WITH head AS (
  INSERT INTO %[1]s (stream_prefix, consumer_group, metadata_json, store_revision, schema_version, layout_version, updated_at)
  SELECT $1::varchar, $2::varchar, %[3]s, 1, $4::integer, $5::integer, $6::varchar WHERE %[4]s
  ON CONFLICT (stream_prefix, consumer_group) DO NOTHING RETURNING 1
), put AS (%[2]s
), cnt AS (%[5]s)
SELECT count(*) FROM head`, meta, upsertMembers(members, `'{}'::text[]`), withRevision(`$3::text::jsonb`, `1`), fenceHolds(owners, "$9"), countUp(counts, 1)),

		// $3 expected revision, $4 aggregate or NULL, $5 its layout,
		// $6 updatedAt, $7/$8 member puts, $9 member deletes, $10 fence.
		commit: fmt.Sprintf(`WITH head AS (
  UPDATE %[1]s SET
    metadata_json = %[4]s,
    store_revision = store_revision + 1,
    layout_version = CASE WHEN $4::text IS NULL THEN layout_version ELSE $5 END,
    updated_at = $6
  WHERE %[3]s AND store_revision = $3 AND schema_version = %[5]d AND layout_version IN (%[6]d, %[7]d) AND %[9]s
  RETURNING store_revision
), put AS (%[2]s
), del AS (
  DELETE FROM %[8]s WHERE %[3]s AND member_id = ANY($9::text[]) AND EXISTS (SELECT 1 FROM head)
)
SELECT store_revision FROM head`, meta, upsertMembers(members, `$9::text[]`), pk,
			withRevision(`COALESCE($4::text::jsonb, metadata_json)`, `$3::bigint + 1`),
			persistence.SchemaVersion, persistence.LegacyLayoutVersion, persistence.LayoutVersion, members, fenceHolds(owners, "$10")),

		// $3 expected revision, $4 fence.
		delete: fmt.Sprintf(`WITH head AS (
  DELETE FROM %[1]s WHERE %[3]s AND store_revision = $3 AND %[4]s RETURNING 1
), del AS (
  DELETE FROM %[2]s WHERE %[3]s AND EXISTS (SELECT 1 FROM head)
), own AS (
  DELETE FROM %[5]s WHERE %[3]s AND EXISTS (SELECT 1 FROM head)
), cnt AS (%[6]s)
SELECT count(*) FROM head`, meta, members, pk, fenceHolds(owners, "$4"), owners, countUp(counts, -1)),

		list: fmt.Sprintf(`SELECT stream_prefix, consumer_group FROM %s ORDER BY stream_prefix COLLATE "C", consumer_group COLLATE "C"`, meta),

		// $1 stream prefix.
		count: fmt.Sprintf(`SELECT COALESCE((SELECT groups FROM %[1]s WHERE stream_prefix = ''), 0),
  COALESCE((SELECT groups FROM %[1]s WHERE stream_prefix = $1), 0)`, counts),

		// $1 id, $2 token, $3 url, $4 lease in ms.
		register: fmt.Sprintf(`INSERT INTO %[1]s AS c (id, token, url, lease_end) VALUES ($1, $2, $3, %[2]s)
ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token, url = EXCLUDED.url, lease_end = EXCLUDED.lease_end
  WHERE c.token = EXCLUDED.token OR c.lease_end <= clock_timestamp()
RETURNING 1`, coords, leaseEnd("$4")),
		// $1 id, $2 token, $3 lease in ms.
		renew: fmt.Sprintf(`UPDATE %s SET lease_end = %s
WHERE id = $1 AND token = $2 AND lease_end > clock_timestamp() RETURNING 1`, coords, leaseEnd("$3")),
		deregister:   fmt.Sprintf(`DELETE FROM %s WHERE id = $1 AND token = $2`, coords),
		coordinators: fmt.Sprintf(`SELECT id, token, url, lease_end FROM %s WHERE lease_end > clock_timestamp() ORDER BY id COLLATE "C"`, coords),
		// $1, $2 the keys' prefixes and groups, $3 id, $4 token, in
		// ownerInsert, ownerLock and ownerTake. Each statement reads the
		// registry anew (READ COMMITTED), and inserts or locks rows only
		// while $3 with $4 is live. Rows are inserted and locked in key
		// order, so that two batches wait on each other without deadlock.
		ownerInsert: fmt.Sprintf(`INSERT INTO %[1]s (stream_prefix, consumer_group, coordinator_id, token, epoch)
SELECT sp, cg, '', '', 0 FROM unnest($1::text[], $2::text[]) AS u(sp, cg)
WHERE %[2]s ORDER BY sp COLLATE "C", cg COLLATE "C" ON CONFLICT DO NOTHING`, owners, liveSelf),
		ownerLock: fmt.Sprintf(`SELECT 1 FROM %[1]s o JOIN unnest($1::text[], $2::text[]) AS u(sp, cg) ON %[2]s
WHERE %[3]s ORDER BY o.stream_prefix COLLATE "C", o.consumer_group COLLATE "C" FOR UPDATE OF o`, owners, ownerOfU, liveSelf),
		// The rows are locked: the statement sees their latest versions,
		// and the holders' registry entries as of after the lock. Returns
		// each key's row after the take (NULLs when $3 is not live), with
		// the holder's URL.
		ownerTake: fmt.Sprintf(`WITH me AS (SELECT %[3]s AS live
), u AS (SELECT DISTINCT sp, cg FROM unnest($1::text[], $2::text[]) AS u(sp, cg)
), took AS (
  UPDATE %[1]s o SET coordinator_id = $3, token = $4, epoch = o.epoch + 1 FROM u, me
  WHERE me.live AND %[2]s AND NOT (o.coordinator_id = $3 AND o.token = $4)
    AND (o.coordinator_id = '' OR NOT EXISTS (SELECT 1 FROM %[4]s c WHERE c.id = o.coordinator_id AND c.token = o.token AND c.lease_end > clock_timestamp()))
  RETURNING o.stream_prefix, o.consumer_group, o.epoch
)
SELECT u.sp, u.cg, CASE WHEN t.epoch IS NULL THEN o.coordinator_id ELSE $3 END, CASE WHEN t.epoch IS NULL THEN o.token ELSE $4 END,
  COALESCE(t.epoch, o.epoch), COALESCE(c.url, '')
FROM u CROSS JOIN me LEFT JOIN %[1]s o ON me.live AND %[2]s
LEFT JOIN took t ON t.stream_prefix = u.sp AND t.consumer_group = u.cg
LEFT JOIN %[4]s c ON t.epoch IS NULL AND c.id = o.coordinator_id AND c.token = o.token`, owners, ownerOfU, liveSelf, coords),
		// $1, $2 the keys' prefixes and groups, $3 id, $4 token. The two
		// parts see one snapshot: one of them matches each key.
		ownerRelease: fmt.Sprintf(`WITH u AS (SELECT DISTINCT sp, cg FROM unnest($1::text[], $2::text[]) AS u(sp, cg)
), gone AS (
  DELETE FROM %[1]s o USING u WHERE %[2]s AND NOT EXISTS (SELECT 1 FROM %[3]s m WHERE m.stream_prefix = u.sp AND m.consumer_group = u.cg)
)
UPDATE %[1]s o SET coordinator_id = '', token = '' FROM u WHERE %[2]s AND EXISTS (SELECT 1 FROM %[3]s m WHERE m.stream_prefix = u.sp AND m.consumer_group = u.cg)`,
			owners, `o.stream_prefix = u.sp AND o.consumer_group = u.cg AND o.coordinator_id = $3 AND o.token = $4`, meta),
		owners: fmt.Sprintf(`SELECT COALESCE(o.coordinator_id, ''), COALESCE(o.epoch, 0)
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(sp, cg, i)
LEFT JOIN %s o ON o.stream_prefix = u.sp AND o.consumer_group = u.cg ORDER BY u.i`, owners),
		fence: fmt.Sprintf(`SELECT %s`, fenceHolds(owners, "$3")),
		// The records of groups not stored, locked.
		orphansLock: fmt.Sprintf(`SELECT o.stream_prefix, o.consumer_group FROM %[1]s o
WHERE NOT EXISTS (SELECT 1 FROM %[2]s m WHERE m.stream_prefix = o.stream_prefix AND m.consumer_group = o.consumer_group)
FOR UPDATE OF o`, owners, meta),
		// $1, $2 the keys orphansLock returned.
		orphansDelete: fmt.Sprintf(`DELETE FROM %[1]s o USING unnest($1::text[], $2::text[]) AS u(sp, cg)
WHERE o.stream_prefix = u.sp AND o.consumer_group = u.cg
  AND NOT EXISTS (SELECT 1 FROM %[2]s m WHERE m.stream_prefix = o.stream_prefix AND m.consumer_group = o.consumer_group)
  AND NOT EXISTS (SELECT 1 FROM %[3]s c WHERE c.id = o.coordinator_id AND c.token = o.token AND c.lease_end > clock_timestamp())`, owners, meta, coords),
	}
}
