package redissink

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// stream creates the stream key with n entries and group g on it, reads
// them all as consumer c (pending), and returns their ids.
func stream(t *testing.T, rdb *redis.Client, key string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"v", i}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	if err := rdb.XGroupCreate(ctx, key, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"}, Count: int64(n)}).Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func msg(key, id string, token int64, from string) client.Message {
	return client.Message{Shard: 0, Stream: key, ID: id, Fence: client.Fence{Shard: 0, Token: token, From: from}}
}

// The script's rules, one by one: apply and acknowledge; skip an entry
// applied already; refuse a lower token; a higher token keeps the position
// when From is not below it, and moves it back (a replay) when it is.
func TestScriptRules(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	key := prefix + ":0"
	ids := stream(t, rdb, key, 4)
	s, err := New(Config{Redis: rdb, Group: "g", KeyPrefix: prefix + ":"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	count := s.Key(key, "count")
	incr := func(_ context.Context, m client.Message, w *Writes) error {
		w.IncrBy(count, 1)
		w.RPush(s.Key(key, "log"), m.ID)
		return nil
	}
	step := func(m client.Message, want sink.Outcome) {
		t.Helper()
		got, err := s.Apply(ctx, m, incr)
		if got != want {
			t.Fatalf("%s (token %d, from %s): outcome %d (%v), want %d", m.ID, m.Fence.Token, m.Fence.From, got, err, want)
		}
		if (want == sink.OutcomeRefused) != errors.Is(err, client.ErrFenced) {
			t.Fatalf("%s: error %v", m.ID, err)
		}
	}
	step(msg(key, ids[0], 5, "0-0"), sink.OutcomeApplied)
	step(msg(key, ids[1], 5, "0-0"), sink.OutcomeApplied)
	step(msg(key, ids[1], 5, "0-0"), sink.OutcomeSkipped)  // a redelivery
	step(msg(key, ids[2], 4, "0-0"), sink.OutcomeRefused)  // a zombie of an earlier grant
	step(msg(key, ids[1], 6, ids[1]), sink.OutcomeSkipped) // a new grant taking over where the last stopped
	step(msg(key, ids[2], 6, ids[1]), sink.OutcomeApplied) // ... and going on
	step(msg(key, ids[2], 5, "0-0"), sink.OutcomeRefused)  // the previous grant, late
	step(msg(key, ids[0], 9, "0-0"), sink.OutcomeApplied)  // a live reset back to the start: replayed
	step(msg(key, ids[1], 9, "0-0"), sink.OutcomeApplied)  // ... once
	step(msg(key, ids[1], 9, "0-0"), sink.OutcomeSkipped)  // ... and only once
	if n := rdb.Get(ctx, count).Val(); n != "5" {
		t.Fatalf("count %s, want 5 applications", n)
	}
	if tok, applied, err := s.Position(ctx, key); err != nil || tok != 9 || applied != ids[1] {
		t.Fatalf("fence %d %q %v", tok, applied, err)
	}
	if st := s.Stats(); st != (sink.Stats{Applied: 5, Skipped: 3, Refused: 2}) {
		t.Fatalf("stats %+v", st)
	}
	// Applied and skipped entries are acknowledged; the refused one is not.
	pending := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: "g", Start: "-", End: "+", Count: 10}).Val()
	if len(pending) != 1 || pending[0].ID != ids[3] {
		t.Fatalf("pending after the steps: %+v, want only %s", pending, ids[3])
	}
}

// A message without a full fence (a consumer that is not Ordered) is
// refused before anything is written; with Cluster, a key outside the
// fence's hash slot is refused.
func TestRefusesUnorderedAndCrossSlot(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	key := prefix + ":0"
	ids := stream(t, rdb, key, 1)
	s, err := New(Config{Redis: rdb, Group: "g", KeyPrefix: prefix + ":", Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nop := func(context.Context, client.Message, *Writes) error { return nil }
	if _, err := s.Apply(ctx, msg(key, ids[0], 3, ""), nop); !errors.Is(err, sink.ErrNotOrdered) {
		t.Fatalf("unordered message: %v", err)
	}
	foreign := func(_ context.Context, _ client.Message, w *Writes) error {
		w.Set(s.Key(key, "ok"), 1)
		w.Set(prefix+":elsewhere", 1)
		return nil
	}
	if _, err := s.Apply(ctx, msg(key, ids[0], 3, "0-0"), foreign); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("cross-slot write: %v", err)
	}
	if rdb.Exists(ctx, s.Key(key, "ok"), s.FenceKey(key)).Val() != 0 {
		t.Fatal("a refused entry wrote something")
	}
	if _, err := New(Config{Redis: rdb, Group: "g", KeyPrefix: "{x}"}); err == nil {
		t.Fatal("a KeyPrefix with a hash tag was accepted")
	}
}
