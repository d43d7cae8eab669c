package redis

import (
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Script results below 1 (1 and above are revisions or "done").
const (
	resNotFound = 0
	resConflict = -1
	resCorrupt  = -2
)

// luaPrelude is shared by the metadata scripts: result codes, the version
// guard and the storeRevision rewrite (persistence.WithStoreRevision in Lua).
var luaPrelude = fmt.Sprintf(`
local NOT_FOUND, CONFLICT, CORRUPT = %d, %d, %d
local function supported(schema, layout)
  if not schema or schema == '' then schema = '1' end
  if not layout or layout == '' then layout = '1' end
  return schema == '%d' and (layout == '%d' or layout == '%d')
end
local function withRevision(agg, rev)
  return (string.gsub(agg, '"storeRevision"%%s*:%%s*%%-?%%d+', '"storeRevision":' .. rev, 1))
end
`, resNotFound, resConflict, resCorrupt,
	persistence.SchemaVersion, persistence.LegacyLayoutVersion, persistence.LayoutVersion)

// createScript inserts a group at revision 1 unless the hash exists.
// KEYS[1] metadata hash. ARGV: commit id, aggregate, schemaVersion,
// layoutVersion, updatedAt, then member field/value pairs.
// Returns 1 when created (also when this commit id already created it: a
// client retry after a lost reply), 0 when the hash exists.
var createScript = goredis.NewScript(luaPrelude + `
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'lastCommitId') == ARGV[1] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'aggregate', withRevision(ARGV[2], 1), 'revision', '1',
  'schemaVersion', ARGV[3], 'layoutVersion', ARGV[4], 'updatedAt', ARGV[5], 'lastCommitId', ARGV[1])
for i = 6, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
return 1
`)

// commitScript is the compare-and-set commit. It checks everything before
// writing anything.
// KEYS[1] metadata hash. ARGV: commit id, expected revision, updatedAt,
// "1" and the new aggregate or "0" and "" (aggregate unchanged), the number
// n of member puts, n field/value pairs, then the member fields to delete.
// Returns the new revision, NOT_FOUND, CONFLICT or CORRUPT (a hash without
// revision or aggregate, or with unsupported versions).
var commitScript = goredis.NewScript(luaPrelude + fmt.Sprintf(`
local h = redis.call('HMGET', KEYS[1], 'revision', 'schemaVersion', 'layoutVersion', 'lastCommitId')
if not h[1] then
  if redis.call('EXISTS', KEYS[1]) == 1 then return CORRUPT end
  return NOT_FOUND
end
local cur, expected = tonumber(h[1]), tonumber(ARGV[2])
if not cur then return CORRUPT end
if h[4] == ARGV[1] and cur == expected + 1 then return cur end
if cur ~= expected then return CONFLICT end
if not supported(h[2], h[3]) then return CORRUPT end
local rev = cur + 1
local agg, layout = redis.call('HGET', KEYS[1], 'aggregate'), h[3]
if not agg then return CORRUPT end
if ARGV[4] == '1' then
  agg, layout = ARGV[5], '%d'
end
redis.call('HSET', KEYS[1], 'aggregate', withRevision(agg, rev), 'revision', tostring(rev),
  'updatedAt', ARGV[3], 'lastCommitId', ARGV[1])
if layout then redis.call('HSET', KEYS[1], 'layoutVersion', layout) end
local puts = tonumber(ARGV[6])
for i = 7, 6 + 2 * puts, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
for i = 7 + 2 * puts, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
return rev
`, persistence.LayoutVersion))

// deleteScript deletes the hash if its revision equals ARGV[1].
// Returns 1, NOT_FOUND, CONFLICT or CORRUPT (no revision).
var deleteScript = goredis.NewScript(luaPrelude + `
local cur = redis.call('HGET', KEYS[1], 'revision')
if not cur then
  if redis.call('EXISTS', KEYS[1]) == 1 then return CORRUPT end
  return NOT_FOUND
end
if tonumber(cur) ~= tonumber(ARGV[1]) then return CONFLICT end
redis.call('DEL', KEYS[1])
return 1
`)

// Mutex scripts. KEYS[1] is the mutex key, ARGV[1] the token, ARGV[2] the
// TTL in milliseconds.

// acquireScript takes the mutex when it is free or held by a token that
// starts with ARGV[3], the holder's own coordinator prefix: this token (a
// retried acquire whose reply was lost) or one this coordinator left
// behind when a release could not reach Redis (e.g. across a Redis
// restart). Returns 1 or 0.
var acquireScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, #ARGV[3]) ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// renewScript extends the TTL if the token still holds the mutex.
var renewScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// releaseScript deletes the mutex if the token still holds it.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
