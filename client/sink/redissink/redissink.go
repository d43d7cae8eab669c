package redissink

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// ErrCrossSlot is returned by a handler whose Writes name a key outside
// the hash slot of its shard's fence on Redis Cluster.
var ErrCrossSlot = errors.New("redissink: a key outside the hash slot of the shard's fence (build keys with Sink.Key)")

// Config configures a Sink.
type Config struct {
	// Redis holds the shard streams; the sink writes there (required).
	Redis redis.UniversalClient
	// Group is the consumer group the entries are read by (required): the
	// script acknowledges them in it.
	Group string
	// KeyPrefix starts the fence keys and the keys Key builds; it may not
	// contain '{' or '}'.
	KeyPrefix string
	// Cluster makes Writes check every key's hash slot; it is on when
	// Redis is a *redis.ClusterClient.
	Cluster bool
}

// Sink applies entries' writes to Redis under their shards' fences.
type Sink struct {
	cfg    Config
	counts sink.Counters
}

// New checks cfg and returns a sink.
func New(cfg Config) (*Sink, error) {
	if cfg.Redis == nil || cfg.Group == "" {
		return nil, errors.New("redissink: Config needs Redis and Group")
	}
	if strings.ContainsAny(cfg.KeyPrefix, "{}") {
		return nil, fmt.Errorf("redissink: KeyPrefix %q contains a hash tag brace", cfg.KeyPrefix)
	}
	if _, ok := cfg.Redis.(*redis.ClusterClient); ok {
		cfg.Cluster = true
	}
	return &Sink{cfg: cfg}, nil
}

// FenceKey is the key of the fence of the shard whose stream is stream.
func (s *Sink) FenceKey(stream string) string { return s.Key(stream, "fence:"+s.cfg.Group) }

// Key returns KeyPrefix + "{stream}:" + name, a key in the hash slot of
// the shard stream stream (and of its fence).
func (s *Sink) Key(stream, name string) string { return s.cfg.KeyPrefix + "{" + stream + "}:" + name }

// Stats returns the sink's counts: entries applied, skipped as applied
// already, and writes refused by a fence.
func (s *Sink) Stats() sink.Stats { return s.counts.Stats() }

// Describe says what an entry writes: it adds commands to w, and an error
// leaves the entry unapplied (to be run again).
type Describe func(ctx context.Context, msg client.Message, w *Writes) error

// Handler returns the consumer handler that applies each entry's writes
// (described by describe) under its shard's fence; the consumer must be
// Ordered. A write refused by the fence returns an error wrapping
// client.ErrFenced.
func (s *Sink) Handler(describe Describe) client.Handler {
	return func(ctx context.Context, msg client.Message) error {
		_, err := s.Apply(ctx, msg, describe)
		return err
	}
}

// Apply runs the sink's script for msg with the writes describe adds.
func (s *Sink) Apply(ctx context.Context, msg client.Message, describe Describe) (sink.Outcome, error) {
	if err := sink.Check(&msg); err != nil {
		return sink.OutcomeRefused, err
	}
	fence := s.FenceKey(msg.Stream)
	w := &Writes{keys: []string{fence, msg.Stream}, slot: -1}
	if s.cfg.Cluster {
		w.slot = contract.Slot(fence)
	}
	if err := describe(ctx, msg, w); err != nil {
		return sink.OutcomeRefused, err
	}
	if w.err != nil {
		return sink.OutcomeRefused, w.err
	}
	args := make([]any, 0, 5+len(w.args))
	args = append(args, msg.Fence.Token, msg.Fence.From, msg.ID, s.cfg.Group, w.n)
	args = append(args, w.args...)
	res, err := script.Run(ctx, s.cfg.Redis, w.keys, args...).Int64Slice()
	if err != nil {
		return sink.OutcomeRefused, fmt.Errorf("redissink: %w", err)
	}
	switch sink.Outcome(res[0]) {
	case sink.OutcomeApplied:
		s.counts.Applied()
		return sink.OutcomeApplied, nil
	case sink.OutcomeSkipped:
		s.counts.Skipped()
		return sink.OutcomeSkipped, nil
	}
	s.counts.Refused()
	return sink.OutcomeRefused, sink.Refused(&msg, res[1])
}

// Writes are the commands an entry writes, run by the sink's script in the
// order given. Every command names one key, its first argument.
type Writes struct {
	keys []string // KEYS: the fence, the stream, then the written keys
	args []any
	n    int
	slot int // the fence's slot when keys are checked, else -1
	err  error
}

// Do adds command (a Redis write command whose first argument is its only
// key) on key with args.
func (w *Writes) Do(command, key string, args ...any) {
	if w.slot >= 0 && contract.Slot(key) != w.slot && w.err == nil {
		w.err = fmt.Errorf("%w: %s", ErrCrossSlot, key)
	}
	at := -1
	for i, k := range w.keys {
		if k == key {
			at = i
			break
		}
	}
	if at < 0 {
		w.keys = append(w.keys, key)
		at = len(w.keys) - 1
	}
	w.args = append(w.args, command, at+1, len(args))
	w.args = append(w.args, args...)
	w.n++
}

// Set adds SET key value.
func (w *Writes) Set(key string, value any) { w.Do("SET", key, value) }

// IncrBy adds INCRBY key n.
func (w *Writes) IncrBy(key string, n int64) { w.Do("INCRBY", key, n) }

// HSet adds HSET key field value [field value …].
func (w *Writes) HSet(key string, fieldValues ...any) { w.Do("HSET", key, fieldValues...) }

// RPush adds RPUSH key value [value …].
func (w *Writes) RPush(key string, values ...any) { w.Do("RPUSH", key, values...) }

// XAdd adds XADD key * field value [field value …].
func (w *Writes) XAdd(key string, fieldValues ...any) {
	w.Do("XADD", key, append([]any{"*"}, fieldValues...)...)
}

// script is the sink's one server-side step (package sink's rules).
// KEYS[1] is the fence, KEYS[2] the stream, KEYS[3…] the written keys.
// ARGV: token, from, entry id, group, command count, then per command its
// name, the index of its key in KEYS, its argument count and arguments.
// It answers {1, fence} (applied), {2, fence} (skipped) or {0, fence}
// (refused), fence being the token the fence held before.
var script = redis.NewScript(`
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  if not ms then return tonumber(id), 0 end
  return tonumber(ms), tonumber(seq)
end
local function before(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then return am < bm end
  return as < bs
end
local tok = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'token', 'applied')
local stored = tonumber(f[1]) or 0
local applied = f[2]
if tok < stored then return {0, stored} end
if tok > stored and applied and before(ARGV[2], applied) then applied = ARGV[2] end
if applied and not before(applied, ARGV[3]) then
  if tok > stored then redis.call('HSET', KEYS[1], 'token', ARGV[1], 'applied', applied) end
  redis.call('XACK', KEYS[2], ARGV[4], ARGV[3])
  return {2, stored}
end
local i = 6
for _ = 1, tonumber(ARGV[5]) do
  local n = tonumber(ARGV[i + 2])
  redis.call(ARGV[i], KEYS[tonumber(ARGV[i + 1])], unpack(ARGV, i + 3, i + 2 + n))
  i = i + 3 + n
end
if tok > stored then
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'applied', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'applied', ARGV[3])
end
redis.call('XACK', KEYS[2], ARGV[4], ARGV[3])
return {1, stored}
`)

// Position returns the fence of the shard whose stream is stream: its
// token and applied entry id ("" before any).
func (s *Sink) Position(ctx context.Context, stream string) (token int64, applied string, err error) {
	vals, err := s.cfg.Redis.HMGet(ctx, s.FenceKey(stream), "token", "applied").Result()
	if err != nil {
		return 0, "", err
	}
	if t, ok := vals[0].(string); ok {
		token, _ = strconv.ParseInt(t, 10, 64)
	}
	applied, _ = vals[1].(string)
	return token, applied, nil
}
