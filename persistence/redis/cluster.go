package redis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The coordinator registry and the groups' ownership records
// (persistence.Cluster). Leases are measured on Redis's clock (TIME): no
// coordinator compares its own clock with another's.
//
//	<kp>:coordinators   HASH  id → "token\nleaseEndMs\nurl"
//	<kp>:{P:G}:owner    HASH  coordinator, token, epoch
//
// Every script touches one key (or one group's keys), so the layout works
// on Redis Cluster too.

// registryKey is <kp>:coordinators.
func (s *Store) registryKey() string { return s.prefix + ":coordinators" }

// luaRegistry reads registry entries and Redis's clock.
const luaRegistry = `
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function entry(reg, id)
  local v = redis.call('HGET', reg, id)
  if not v then return nil end
  local tok, exp, url = string.match(v, '^([^\n]*)\n([^\n]*)\n(.*)$')
  return tok, tonumber(exp), url
end
`

// registerScript adds or renews ARGV[1]'s entry (token ARGV[2], url
// ARGV[3], lease ARGV[4] ms) unless a live entry has another token (0).
// With ARGV[5] = "renew" it only extends a live entry with the same token
// (0 otherwise).
var registerScript = goredis.NewScript(luaRegistry + `
local now = nowMs()
local tok, exp, url = entry(KEYS[1], ARGV[1])
local live = tok and exp and exp > now
if ARGV[5] == 'renew' then
  if not live or tok ~= ARGV[2] then return 0 end
elseif live and tok ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '\n' .. (now + tonumber(ARGV[4])) .. '\n' .. ARGV[3])
return 1
`)

// deregisterScript removes ARGV[1]'s entry if it has token ARGV[2].
var deregisterScript = goredis.NewScript(luaRegistry + `
if entry(KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`)

// listScript returns Redis's time in ms, then the registry's fields and
// values.
var listScript = goredis.NewScript(luaRegistry + `
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, tostring(nowMs()))
return out
`)

// acquireOwnerScript makes ARGV[1] (token ARGV[2]) the owner of the group
// whose record is KEYS[1], given the live coordinators ARGV[3..] as
// "id\ntoken" read from the registry just before. Returns {epoch} when
// ARGV[1] owns it (raised when it took it from another), or {-1, owner}
// when an owner other than ARGV[1] is among the live ones.
var acquireOwnerScript = goredis.NewScript(`
local o = redis.call('HMGET', KEYS[1], 'coordinator', 'token', 'epoch')
local epoch = tonumber(o[3]) or 0
if o[1] == ARGV[1] and o[2] == ARGV[2] then return {epoch} end
if o[1] and o[1] ~= '' then
  local holder = o[1] .. '\n' .. (o[2] or '')
  for i = 3, #ARGV do
    if ARGV[i] == holder then return {-1, o[1]} end
  end
end
epoch = epoch + 1
redis.call('HSET', KEYS[1], 'coordinator', ARGV[1], 'token', ARGV[2], 'epoch', epoch)
return {epoch}
`)

// releaseOwnerScript clears the owner of KEYS[1] if it is ARGV[1] with
// token ARGV[2], keeping the epoch, or deletes the record when the
// group's hash KEYS[2] does not exist.
var releaseOwnerScript = goredis.NewScript(`
local o = redis.call('HMGET', KEYS[1], 'coordinator', 'token')
if o[1] ~= ARGV[1] or o[2] ~= ARGV[2] then return 1 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'coordinator', '', 'token', '')
end
return 1
`)

// pruneOwnerScript deletes the ownership record KEYS[2] if the group's
// hash KEYS[1] does not exist and the record still reads ARGV[1]
// ("coordinator\ntoken\nepoch", as PruneOwners read it). Returns 1 when
// it deleted the record, else 0.
var pruneOwnerScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local o = redis.call('HMGET', KEYS[2], 'coordinator', 'token', 'epoch')
if (o[1] or '') .. '\n' .. (o[2] or '') .. '\n' .. (o[3] or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
return 1
`)

// Register adds or renews self's entry.
func (s *Store) Register(ctx context.Context, self persistence.Peer, ttl time.Duration) error {
	return s.register(ctx, self, ttl, "register", persistence.ErrIdentityInUse)
}

// Renew extends self's live entry.
func (s *Store) Renew(ctx context.Context, self persistence.Peer, ttl time.Duration) error {
	return s.register(ctx, self, ttl, "renew", persistence.ErrNotRegistered)
}

func (s *Store) register(ctx context.Context, self persistence.Peer, ttl time.Duration, mode string, refused error) error {
	ok, err := registerScript.Run(ctx, s.client, []string{s.registryKey()},
		self.ID, self.Token, self.URL, ttl.Milliseconds(), mode).Int64()
	if err != nil {
		return fmt.Errorf("redis store: %s coordinator %s: %w: %w", mode, self.ID, persistence.ErrUnavailable, err)
	}
	if ok == 0 {
		return fmt.Errorf("redis store: %s coordinator %s: %w", mode, self.ID, refused)
	}
	return nil
}

// Deregister removes self's entry.
func (s *Store) Deregister(ctx context.Context, self persistence.Peer) error {
	if err := deregisterScript.Run(ctx, s.client, []string{s.registryKey()}, self.ID, self.Token).Err(); err != nil {
		return fmt.Errorf("redis store: deregister coordinator %s: %w: %w", self.ID, persistence.ErrUnavailable, err)
	}
	return nil
}

// Coordinators lists the live entries by id.
func (s *Store) Coordinators(ctx context.Context) ([]persistence.Peer, error) {
	res, err := s.pipe.eval(ctx, listScript, []string{s.registryKey()}).StringSlice()
	if err != nil || len(res) == 0 {
		return nil, fmt.Errorf("redis store: list coordinators: %w: %v", persistence.ErrUnavailable, err)
	}
	now, _ := strconv.ParseInt(res[0], 10, 64)
	var out []persistence.Peer
	for i := 1; i+1 < len(res); i += 2 {
		parts := strings.SplitN(res[i+1], "\n", 3)
		if len(parts) != 3 {
			continue
		}
		end, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil || end <= now {
			continue
		}
		out = append(out, persistence.Peer{ID: res[i], Token: parts[0], URL: parts[2], ExpiresAt: time.UnixMilli(end)})
	}
	slices.SortFunc(out, func(a, b persistence.Peer) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Acquire takes key unless a live other coordinator owns it. It reads the
// registry, then runs the ownership script on the group's own key, so that
// on Redis Cluster each step touches one slot. Both go through the store's
// pipeliner: the acquires of many groups at once (a coordinator taking
// over the groups of one that left) share round trips. A lease that had ended when
// the registry was read cannot live again (a new run registers with a new
// token), so acting on that read later is safe.
func (s *Store) Acquire(ctx context.Context, key group.Key, self persistence.Peer) (persistence.Owner, error) {
	live, err := s.Coordinators(ctx)
	if err != nil {
		return persistence.Owner{}, err
	}
	args := []any{self.ID, self.Token}
	registered := false
	for _, c := range live {
		registered = registered || c.ID == self.ID && c.Token == self.Token
		args = append(args, c.ID+"\n"+c.Token)
	}
	if !registered {
		return persistence.Owner{}, fmt.Errorf("redis store: acquire %s: %w", key, persistence.ErrNotRegistered)
	}
	res, err := s.pipe.eval(ctx, acquireOwnerScript, []string{s.ownerKey(key)}, args...).Slice()
	if err != nil || len(res) == 0 {
		return persistence.Owner{}, fmt.Errorf("redis store: acquire %s: %w: %v", key, persistence.ErrUnavailable, err)
	}
	code, _ := res[0].(int64)
	if code == -1 && len(res) == 2 {
		id, _ := res[1].(string)
		owner := persistence.Peer{ID: id}
		for _, c := range live {
			if c.ID == id {
				owner = c
			}
		}
		return persistence.Owner{}, &persistence.OwnedError{Owner: owner}
	}
	if code < 1 {
		return persistence.Owner{}, fmt.Errorf("redis store: acquire %s: unexpected result %v: %w", key, res, persistence.ErrUnavailable)
	}
	o := persistence.Owner{Coordinator: self.ID, Token: self.Token, Epoch: code}
	s.fences.Hold(key, o)
	return o, nil
}

// Release clears self's ownership of key, or deletes the record of a
// group that is not stored. The script goes through the store's
// pipeliner: the releases of a coordinator handing its groups over share
// round trips.
func (s *Store) Release(ctx context.Context, key group.Key, self persistence.Peer) error {
	s.fences.Drop(key)
	if err := s.pipe.eval(ctx, releaseOwnerScript, []string{s.ownerKey(key), s.metadataKey(key)}, self.ID, self.Token).Err(); err != nil {
		return fmt.Errorf("redis store: release %s: %w: %w", key, persistence.ErrUnavailable, err)
	}
	return nil
}

// Owners reads the records of keys in one pipeline.
func (s *Store) Owners(ctx context.Context, keys []group.Key) ([]persistence.Owner, error) {
	cmds := make([]*goredis.SliceCmd, len(keys))
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, s.ownerKey(k), "coordinator", "epoch")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redis store: read owners: %w: %w", persistence.ErrUnavailable, err)
	}
	out := make([]persistence.Owner, len(keys))
	for i, c := range cmds {
		v := c.Val()
		if len(v) == 2 {
			out[i].Coordinator, _ = v[0].(string)
			if e, ok := v[1].(string); ok {
				out[i].Epoch, _ = strconv.ParseInt(e, 10, 64)
			}
		}
	}
	return out, nil
}

// scanCount is the COUNT hint of the SCANs that find ownership records.
const scanCount = 1000

// PruneOwners finds the ownership records under the key prefix (SCAN, on
// every master of a Cluster), reads each record with whether its group's
// hash exists, then reads the registry, and runs pruneOwnerScript on each
// record of an absent group whose holder is not live. The holder was read
// before the registry: a holder that is not live then has no lease and
// never gets one again (a new run registers with a new token), so a
// record the script finds unchanged, its group still absent, is held by
// nobody.
func (s *Store) PruneOwners(ctx context.Context) (int, error) {
	names, err := s.scanOwners(ctx)
	if err != nil || len(names) == 0 {
		return 0, err
	}
	type record struct {
		keys   []string // metadata, owner
		holder *goredis.SliceCmd
		exists *goredis.IntCmd
	}
	recs := make([]record, len(names))
	pipe := s.client.Pipeline()
	for i, name := range names {
		meta := strings.TrimSuffix(name, ":owner") + ":metadata"
		recs[i] = record{keys: []string{meta, name}, holder: pipe.HMGet(ctx, name, "coordinator", "token", "epoch"), exists: pipe.Exists(ctx, meta)}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("redis store: prune owners: %w: %w", persistence.ErrUnavailable, err)
	}
	live, err := s.Coordinators(ctx)
	if err != nil {
		return 0, err
	}
	holders := make(map[string]bool, len(live))
	for _, c := range live {
		holders[c.ID+"\n"+c.Token] = true
	}
	pruned := 0
	for _, r := range recs {
		v := make([]string, 3)
		for i, x := range r.holder.Val() {
			v[i], _ = x.(string)
		}
		if r.exists.Val() == 1 || holders[v[0]+"\n"+v[1]] {
			continue
		}
		res, err := s.pipe.eval(ctx, pruneOwnerScript, r.keys, strings.Join(v, "\n")).Int64()
		if err != nil {
			return pruned, fmt.Errorf("redis store: prune owners: %w: %w", persistence.ErrUnavailable, err)
		}
		pruned += int(res)
	}
	return pruned, nil
}

// scanOwners returns the names of the ownership records under the key
// prefix.
func (s *Store) scanOwners(ctx context.Context) ([]string, error) {
	match := globEscape(s.prefix) + ":{*}:owner"
	var (
		mu    sync.Mutex
		names []string
	)
	scan := func(ctx context.Context, c goredis.Cmdable) error {
		iter := c.Scan(ctx, 0, match, scanCount).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			names = append(names, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := s.client.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, s.client)
	}
	if err != nil {
		return nil, fmt.Errorf("redis store: scan owners: %w: %w", persistence.ErrUnavailable, err)
	}
	return names, nil
}

// globEscape quotes the characters of s that a MATCH pattern gives a
// meaning.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
