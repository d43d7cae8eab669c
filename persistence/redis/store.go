package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// DefaultKeyPrefix is store.key-prefix's default.
const DefaultKeyPrefix = "redis-stream:coord"

// Hash fields of the metadata hash.
const (
	fieldAggregate    = "aggregate"
	fieldRevision     = "revision"
	fieldSchema       = "schemaVersion"
	fieldLayout       = "layoutVersion"
	fieldUpdatedAt    = "updatedAt"
	memberFieldPrefix = "member:"
)

// Options configure a Store.
type Options struct {
	// Client is the Redis (or Redis Cluster) client. The caller owns it:
	// Close does not close it. go-redis retries a command after some
	// network errors; every script here is safe to run twice, but a retry
	// that reached Redis before a later attempt failed to connect is
	// reported as ErrUnavailable although it wrote. Callers that need the
	// exact outcome classes give the store a client with MaxRetries -1.
	Client goredis.UniversalClient
	// KeyPrefix is prepended literally to every key; empty means
	// DefaultKeyPrefix.
	KeyPrefix string
}

func (o *Options) validate() error {
	if o.Client == nil {
		return errors.New("redis store: Client is required")
	}
	return nil
}

// Store is the Redis persistence.Store. It is safe for concurrent use.
type Store struct {
	client goredis.UniversalClient
	// pipe carries Revision's reads and the scripts, the calls every
	// group actor makes per batch (see pipeliner).
	pipe   *pipeliner
	prefix string
	// fences are the ownerships this store acquired (persistence.Cluster).
	fences persistence.Fences
	// prefixIndexesMu guards prefixIndexesFilled, set once Count has added
	// every listed group to its prefix's index (fillPrefixIndexes).
	prefixIndexesMu     sync.Mutex
	prefixIndexesFilled bool
	// listMu guards listed, the keys the last full listing returned,
	// listedVersion, the index version read before it, and listedOK,
	// whether they may be answered again (List).
	listMu        sync.Mutex
	listed        []group.Key
	listedVersion int64
	listedOK      bool
}

var (
	_ persistence.Store   = (*Store)(nil)
	_ persistence.Cluster = (*Store)(nil)
)

// New returns a store on o.Client. It does not contact Redis; it starts
// the pipeliner's goroutine, which Close stops.
func New(o Options) (*Store, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Store{client: o.Client, pipe: newPipeliner(o.Client), prefix: cmp.Or(o.KeyPrefix, DefaultKeyPrefix)}, nil
}

// groupTag is <kp>:{P:G}, the start of every key of one group; the braces
// put them in the same Cluster slot.
func (s *Store) groupTag(k group.Key) string {
	return s.prefix + ":" + k.HashTag()
}

// metadataKey is <kp>:{P:G}:metadata.
func (s *Store) metadataKey(k group.Key) string { return s.groupTag(k) + ":metadata" }

// ownerKey is <kp>:{P:G}:owner, the group's ownership record.
func (s *Store) ownerKey(k group.Key) string { return s.groupTag(k) + ":owner" }

// writeKeys are the KEYS of the metadata scripts, and fence the first ARGV.
func (s *Store) writeKeys(k group.Key) (keys []string, fence string) {
	return []string{s.metadataKey(k), s.ownerKey(k)}, s.fences.Of(k).String()
}

// indexKey is <kp>:groups, the SET of metadata key names.
func (s *Store) indexKey() string { return s.prefix + ":groups" }

// indexVersionKey is <kp>:groups:version, a counter incremented with
// every change of the index (index), so that List can tell that the
// groups it listed last are still the stored ones.
func (s *Store) indexVersionKey() string { return s.prefix + ":groups:version" }

// prefixIndexKey is <kp>:{P}:groups, the SET of the metadata key names of
// prefix P's groups.
func (s *Store) prefixIndexKey(streamPrefix string) string {
	return s.prefix + ":{" + streamPrefix + "}:groups"
}

// Load reads the whole hash in one HGETALL.
func (s *Store) Load(ctx context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	fields, err := s.client.HGetAll(ctx, s.metadataKey(key)).Result()
	if err != nil {
		return persistence.Document{}, 0, readError("load", key, err)
	}
	if len(fields) == 0 {
		return persistence.Document{}, 0, fmt.Errorf("redis store: load %s: %w", key, persistence.ErrNotFound)
	}
	doc, rev, err := parseHash(fields)
	if err != nil {
		return persistence.Document{}, 0, fmt.Errorf("redis store: load %s: %w", key, err)
	}
	return doc, rev, nil
}

// parseHash turns the metadata hash into a Document. Missing (or empty)
// version fields mean 1, the Kotlin server's defaults; a missing aggregate
// or revision, an unparsable field or an unsupported version is ErrCorrupt.
func parseHash(fields map[string]string) (persistence.Document, persistence.Revision, error) {
	agg, ok := fields[fieldAggregate]
	if !ok {
		return persistence.Document{}, 0, fmt.Errorf("hash has no %s field: %w", fieldAggregate, persistence.ErrCorrupt)
	}
	rev, err := parseInt(fieldRevision, fields[fieldRevision])
	if err != nil {
		return persistence.Document{}, 0, err
	}
	schema, err := parseInt(fieldSchema, cmp.Or(fields[fieldSchema], "1"))
	if err != nil {
		return persistence.Document{}, 0, err
	}
	layout, err := parseInt(fieldLayout, cmp.Or(fields[fieldLayout], "1"))
	if err != nil {
		return persistence.Document{}, 0, err
	}
	if err := persistence.CheckVersions(int(schema), int(layout)); err != nil {
		return persistence.Document{}, 0, err
	}
	updated, err := persistence.ParseTime(fields[fieldUpdatedAt])
	if err != nil {
		return persistence.Document{}, 0, err
	}
	doc := persistence.Document{
		Aggregate:     []byte(agg),
		Members:       map[string][]byte{},
		SchemaVersion: int(schema),
		LayoutVersion: int(layout),
		UpdatedAt:     updated,
	}
	for f, v := range fields {
		if id, ok := strings.CutPrefix(f, memberFieldPrefix); ok {
			doc.Members[id] = []byte(v)
		}
	}
	return doc, persistence.Revision(rev), nil
}

// parseInt reads the integer value v of hash field name.
func parseInt(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("hash field %s=%q: %w", name, v, persistence.ErrCorrupt)
	}
	return n, nil
}

// Revision reads the revision field only (one HGET, pipelined with
// other callers' commands; an EXISTS more when the field is missing).
func (s *Store) Revision(ctx context.Context, key group.Key) (persistence.Revision, error) {
	mk := s.metadataKey(key)
	get := goredis.NewStringCmd(ctx, "hget", mk, fieldRevision)
	err := s.pipe.do(ctx, get)
	if errors.Is(err, goredis.Nil) {
		exists := goredis.NewIntCmd(ctx, "exists", mk)
		if err := s.pipe.do(ctx, exists); err != nil {
			return 0, readError("revision", key, err)
		}
		if exists.Val() == 0 {
			return 0, fmt.Errorf("redis store: revision %s: %w", key, persistence.ErrNotFound)
		}
		return 0, fmt.Errorf("redis store: revision %s: hash has no %s field: %w", key, fieldRevision, persistence.ErrCorrupt)
	}
	if err != nil {
		return 0, readError("revision", key, err)
	}
	rev, err := parseInt(fieldRevision, get.Val())
	if err != nil {
		return 0, fmt.Errorf("redis store: revision %s: %w", key, err)
	}
	return persistence.Revision(rev), nil
}

// Exists runs one EXISTS on the metadata hash, pipelined with other
// callers' commands.
func (s *Store) Exists(ctx context.Context, key group.Key) (bool, error) {
	exists := goredis.NewIntCmd(ctx, "exists", s.metadataKey(key))
	if err := s.pipe.do(ctx, exists); err != nil {
		return false, readError("exists", key, err)
	}
	return exists.Val() == 1, nil
}

// Create inserts the hash at revision 1 with one Lua script, then adds the
// key to the index and to its prefix's index. An existing group is
// (re-)indexed too, which repairs the indexes after a Create whose SADD
// failed.
func (s *Store) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	keys, fence := s.writeKeys(key)
	args := []any{fence, uuid.NewString(), doc.Aggregate, doc.SchemaVersion, doc.LayoutVersion, persistence.FormatTime(doc.UpdatedAt)}
	for _, id := range slices.Sorted(maps.Keys(doc.Members)) {
		args = append(args, memberFieldPrefix+id, doc.Members[id])
	}
	created, err := s.pipe.eval(ctx, createScript, keys, args...).Int64()
	if err != nil {
		return 0, writeError("create", key, err)
	}
	if created == resFenced {
		return 0, persistence.NotOwner("redis store", "create", key, s.fences.Of(key))
	}
	if err := s.index(ctx, key, true); err != nil {
		return 0, fmt.Errorf("redis store: create %s: group stored but not indexed: %w", key, err)
	}
	if created == 0 {
		return 0, fmt.Errorf("redis store: create %s: %w", key, persistence.ErrAlreadyExists)
	}
	return 1, nil
}

// Commit runs the compare-and-set script: one atomic step that checks the
// revision and versions, writes the aggregate (when m has one) and the
// member fields, and bumps the revision.
func (s *Store) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	replace := "0"
	if m.Aggregate != nil {
		replace = "1"
	}
	keys, fence := s.writeKeys(key)
	args := make([]any, 0, 7+2*len(m.PutMembers)+len(m.DeleteMembers))
	args = append(args, fence, uuid.NewString(), int64(expected), persistence.FormatTime(m.UpdatedAt), replace, m.Aggregate, len(m.PutMembers))
	for _, id := range slices.Sorted(maps.Keys(m.PutMembers)) {
		args = append(args, memberFieldPrefix+id, m.PutMembers[id])
	}
	for _, id := range m.DeleteMembers {
		args = append(args, memberFieldPrefix+id)
	}
	res, err := s.pipe.eval(ctx, commitScript, keys, args...).Int64()
	if err != nil {
		return 0, writeError("commit", key, err)
	}
	if err := s.resultError("commit", key, expected, res); err != nil {
		return 0, err
	}
	return persistence.Revision(res), nil
}

// Delete runs the guarded delete script, which deletes the ownership
// record with the hash, then removes the key from the indexes. A failed
// SREM leaves a stale index entry, which List skips (and Count counts).
func (s *Store) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	keys, fence := s.writeKeys(key)
	res, err := s.pipe.eval(ctx, deleteScript, keys, fence, int64(expected)).Int64()
	if err != nil {
		return writeError("delete", key, err)
	}
	if err := s.resultError("delete", key, expected, res); err != nil {
		return err
	}
	s.fences.Drop(key)
	if err := s.index(ctx, key, false); err != nil {
		return fmt.Errorf("redis store: delete %s: deleted but still indexed: %w", key, err)
	}
	return nil
}

// index adds key's metadata key name to the index and its prefix's index
// (add), or removes it from both, and increments the index version, in
// one pipeline (the keys live in different Cluster slots, so not
// atomically). It drops this store's last listing whatever the outcome.
func (s *Store) index(ctx context.Context, key group.Key, add bool) error {
	s.listMu.Lock()
	s.listedOK = false
	s.listMu.Unlock()
	name := s.metadataKey(key)
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, set := range []string{s.indexKey(), s.prefixIndexKey(key.StreamPrefix)} {
			if add {
				p.SAdd(ctx, set, name)
			} else {
				p.SRem(ctx, set, name)
			}
		}
		p.Incr(ctx, s.indexVersionKey())
		return nil
	})
	return err
}

// Count reads the sizes of the index and of the prefix's index (SCARD,
// O(1), one round trip). The first Count of a Store first adds every
// listed group to its prefix's index (fillPrefixIndexes), so that groups
// created by versions that kept no prefix index count too. The indexes
// are updated after a group's script: a create whose SADD failed is not
// counted until the group is created again, a delete whose SREM failed is
// counted until the group is created and deleted again.
func (s *Store) Count(ctx context.Context, streamPrefix string) (all, inPrefix int, err error) {
	if err := s.fillPrefixIndexes(ctx); err != nil {
		return 0, 0, err
	}
	var cards [2]*goredis.IntCmd
	_, err = s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		cards[0] = p.SCard(ctx, s.indexKey())
		cards[1] = p.SCard(ctx, s.prefixIndexKey(streamPrefix))
		return nil
	})
	if err != nil {
		return 0, 0, readError("count", group.Key{StreamPrefix: streamPrefix}, err)
	}
	return int(cards[0].Val()), int(cards[1].Val()), nil
}

// fillPrefixIndexes adds every listed group to its prefix's index, once
// per Store (again after a failure). A group deleted between its listing
// and its SADD stays in its prefix's index (Count counts it, as after a
// failed SREM).
func (s *Store) fillPrefixIndexes(ctx context.Context) error {
	s.prefixIndexesMu.Lock()
	defer s.prefixIndexesMu.Unlock()
	if s.prefixIndexesFilled {
		return nil
	}
	keys, err := s.List(ctx)
	if err != nil {
		return err
	}
	_, err = s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, k := range keys {
			p.SAdd(ctx, s.prefixIndexKey(k.StreamPrefix), s.metadataKey(k))
		}
		return nil
	})
	if err != nil {
		return readError("count", group.Key{}, err)
	}
	s.prefixIndexesFilled = true
	return nil
}

// resultError maps a script's result code to the error classes.
func (s *Store) resultError(op string, key group.Key, expected persistence.Revision, res int64) error {
	switch res {
	case resFenced:
		return persistence.NotOwner("redis store", op, key, s.fences.Of(key))
	case resNotFound:
		return fmt.Errorf("redis store: %s %s: %w", op, key, persistence.ErrNotFound)
	case resConflict:
		return fmt.Errorf("redis store: %s %s: expected revision %d: %w", op, key, expected, persistence.ErrConflict)
	case resCorrupt:
		return fmt.Errorf("redis store: %s %s: hash lacks revision or aggregate, or has unsupported versions: %w", op, key, persistence.ErrCorrupt)
	}
	return nil
}

// List reads the index version (one GET) and, while it is the version read
// before this store's last full listing, answers that listing again: no
// group was created or deleted through the index since (index). Otherwise
// it lists in full (listIndex). A delete whose index update failed stays
// in the listing until the index changes again (before, its missing hash
// dropped it); coordinators of versions that keep no index version do not
// increment it, so during a rolling upgrade from them a listing can miss
// their creates and deletes until this version's next one.
func (s *Store) List(ctx context.Context) ([]group.Key, error) {
	version, err := s.client.Get(ctx, s.indexVersionKey()).Int64()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, readError("list", group.Key{}, err)
	}
	s.listMu.Lock()
	if s.listedOK && s.listedVersion == version {
		keys := slices.Clone(s.listed)
		s.listMu.Unlock()
		return keys, nil
	}
	s.listMu.Unlock()
	keys, err := s.listIndex(ctx)
	if err != nil {
		return nil, err
	}
	s.listMu.Lock()
	s.listed, s.listedVersion, s.listedOK = keys, version, true
	s.listMu.Unlock()
	return slices.Clone(keys), nil
}

// listIndex reads the index, then checks in one pipeline (split per slot by a
// Cluster client) that each indexed hash exists: entries whose hash is gone
// are skipped. A group's key comes from the key name when neither of its
// names holds a ':' (no other pair of names has that key name, ValidateKey);
// otherwise, as for names stored before ValidateKey, from the group's
// aggregate, read in the same pipeline, and from the key name when the
// aggregate is missing, undecodable or names another hash.
func (s *Store) listIndex(ctx context.Context) ([]group.Key, error) {
	names, err := s.client.SMembers(ctx, s.indexKey()).Result()
	if err != nil {
		return nil, readError("list", group.Key{}, err)
	}
	type entry struct {
		key    group.Key
		plain  bool // key, from the name, names this hash only
		exists *goredis.IntCmd
		agg    *goredis.StringCmd // nil when plain
	}
	entries := make([]entry, len(names))
	pipe := s.client.Pipeline()
	for i, name := range names {
		k, ok := s.keyFromName(name)
		e := entry{key: k, plain: ok && plainName(k), exists: pipe.Exists(ctx, name)}
		if !e.plain {
			e.agg = pipe.HGet(ctx, name, fieldAggregate)
		}
		entries[i] = e
	}
	_, _ = pipe.Exec(ctx) // each command's error is checked below
	seen := map[group.Key]bool{}
	for i, e := range entries {
		if err := e.exists.Err(); err != nil {
			return nil, readError("list", group.Key{}, err)
		}
		if e.exists.Val() == 0 {
			continue
		}
		if !e.plain {
			if err := ignoreNil(e.agg.Err()); err != nil {
				return nil, readError("list", group.Key{}, err)
			}
			if k, err := persistence.KeyOf([]byte(e.agg.Val())); err == nil && s.metadataKey(k) == names[i] {
				e.key = k
			} else if e.key == (group.Key{}) {
				continue
			}
		}
		seen[e.key] = true
	}
	keys := slices.Collect(maps.Keys(seen))
	slices.SortFunc(keys, func(a, b group.Key) int {
		return cmp.Or(cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup))
	})
	return keys, nil
}

// plainName reports whether k's key name can belong to no other group:
// both names are non-empty and hold no ':'.
func plainName(k group.Key) bool {
	return k.StreamPrefix != "" && k.ConsumerGroup != "" && !strings.ContainsRune(k.StreamPrefix+k.ConsumerGroup, ':')
}

// ignoreNil maps goredis.Nil (no such field) to nil.
func ignoreNil(err error) error {
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	return err
}

// keyFromName parses <kp>:{P:G}:metadata (group.KeyFromHashTag).
func (s *Store) keyFromName(name string) (group.Key, bool) {
	inner, ok := strings.CutPrefix(name, s.prefix+":")
	if !ok {
		return group.Key{}, false
	}
	if inner, ok = strings.CutSuffix(inner, ":metadata"); !ok {
		return group.Key{}, false
	}
	return group.KeyFromHashTag(inner)
}

// Shared is true: other coordinator processes may write the same hashes.
func (s *Store) Shared() bool { return true }

// Close stops the pipeliner (calls still queued get an ErrUnavailable
// error); it does not close the client, which the caller owns.
func (s *Store) Close() error {
	s.pipe.close()
	return nil
}
