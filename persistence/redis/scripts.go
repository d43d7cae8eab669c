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
	resFenced   = -3
)

// luaPrelude is shared by the metadata scripts: result codes, the version
// guard and the storeRevision rewrite (persistence.WithStoreRevision in Lua).
var luaPrelude = fmt.Sprintf(`
local NOT_FOUND, CONFLICT, CORRUPT, FENCED = %d, %d, %d, %d
local function fenceHolds(ownerKey, fence)
  if fence == '' then return true end
  local o = redis.call('HMGET', ownerKey, 'coordinator', 'token', 'epoch')
  return (o[1] or '') .. '\n' .. (o[2] or '') .. '\n' .. (o[3] or '') == fence
end
local function supported(schema, layout)
  if not schema or schema == '' then schema = '1' end
  if not layout or layout == '' then layout = '1' end
  return schema == '%d' and (layout == '%d' or layout == '%d')
end
local function withRevision(agg, rev)
  return (string.gsub(agg, '"storeRevision"%%s*:%%s*%%-?%%d+', '"storeRevision":' .. rev, 1))
end
`, resNotFound, resConflict, resCorrupt, resFenced,
	persistence.SchemaVersion, persistence.LegacyLayoutVersion, persistence.LayoutVersion)

// The metadata scripts take KEYS[1] the metadata hash, KEYS[2] the group's
// ownership hash, and ARGV[1] the writer's fence (persistence.Fence.String,
// "" for an unfenced write): a fenced write whose fence no longer matches
// the ownership record returns FENCED before anything is read or written.

// createScript inserts a group at revision 1 unless the hash exists.
// ARGV after the fence: commit id, aggregate, schemaVersion, layoutVersion,
// updatedAt, then member field/value pairs.
// Returns 1 when created (also when this commit id already created it: a
// client retry after a lost reply), 0 when the hash exists.
var createScript = goredis.NewScript(luaPrelude + `
if not fenceHolds(KEYS[2], ARGV[1]) then return FENCED end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'lastCommitId') == ARGV[2] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'aggregate', withRevision(ARGV[3], 1), 'revision', '1',
  'schemaVersion', ARGV[4], 'layoutVersion', ARGV[5], 'updatedAt', ARGV[6], 'lastCommitId', ARGV[2])
for i = 7, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
return 1
`)

// commitScript is the compare-and-set commit. It checks everything before
// writing anything.
// ARGV after the fence: commit id, expected revision, updatedAt, "1" and
// the new aggregate or "0" and "" (aggregate unchanged), the number n of
// member puts, n field/value pairs, then the member fields to delete.
// Returns the new revision, NOT_FOUND, CONFLICT, CORRUPT (a hash without
// revision or aggregate, or with unsupported versions) or FENCED.
var commitScript = goredis.NewScript(luaPrelude + fmt.Sprintf(`
if not fenceHolds(KEYS[2], ARGV[1]) then return FENCED end
local h = redis.call('HMGET', KEYS[1], 'revision', 'schemaVersion', 'layoutVersion', 'lastCommitId')
if not h[1] then
  if redis.call('EXISTS', KEYS[1]) == 1 then return CORRUPT end
  return NOT_FOUND
end
local cur, expected = tonumber(h[1]), tonumber(ARGV[3])
if not cur then return CORRUPT end
if h[4] == ARGV[2] and cur == expected + 1 then return cur end
if cur ~= expected then return CONFLICT end
if not supported(h[2], h[3]) then return CORRUPT end
local rev = cur + 1
local agg, layout = redis.call('HGET', KEYS[1], 'aggregate'), h[3]
if not agg then return CORRUPT end
if ARGV[5] == '1' then
  agg, layout = ARGV[6], '%d'
end
redis.call('HSET', KEYS[1], 'aggregate', withRevision(agg, rev), 'revision', tostring(rev),
  'updatedAt', ARGV[4], 'lastCommitId', ARGV[2])
if layout then redis.call('HSET', KEYS[1], 'layoutVersion', layout) end
local puts = tonumber(ARGV[7])
for i = 8, 7 + 2 * puts, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
for i = 8 + 2 * puts, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
return rev
`, persistence.LayoutVersion))

// deleteScript deletes the hash and the ownership record if the
// revision equals ARGV[2].
// Returns 1, NOT_FOUND, CONFLICT, CORRUPT (no revision) or FENCED.
var deleteScript = goredis.NewScript(luaPrelude + `
if not fenceHolds(KEYS[2], ARGV[1]) then return FENCED end
local cur = redis.call('HGET', KEYS[1], 'revision')
if not cur then
  if redis.call('EXISTS', KEYS[1]) == 1 then return CORRUPT end
  return NOT_FOUND
end
if tonumber(cur) ~= tonumber(ARGV[2]) then return CONFLICT end
redis.call('DEL', KEYS[1], KEYS[2])
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
