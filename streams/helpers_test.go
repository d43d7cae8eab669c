package streams

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"
)

// newTestClient connects to the test Redis (REDIS_ADDR, default
// 127.0.0.1:6379) and skips the test when it is unreachable.
func newTestClient(t *testing.T) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: cmp.Or(os.Getenv("REDIS_ADDR"), "127.0.0.1:6379")})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(t.Context()).Err(); err != nil {
		t.Skipf("redis unavailable: %v", err)
	}
	return client
}

var unsafeKeyChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// testPrefix returns a stream prefix unique to this test run and deletes
// the prefix key and every "prefix:*" key when the test ends.
func testPrefix(t *testing.T, client *redis.Client) string {
	t.Helper()
	prefix := fmt.Sprintf("%s-%016x", unsafeKeyChars.ReplaceAllString(t.Name(), "_"), rand.Uint64())
	t.Cleanup(func() {
		ctx := context.Background()
		keys := []string{prefix}
		iter := client.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scanning test keys: %v", err)
		}
		if err := client.Del(ctx, keys...).Err(); err != nil {
			t.Errorf("deleting test keys: %v", err)
		}
	})
	return prefix
}

// xadd appends entries with the given explicit ids ("" = auto) and a
// payload field to key, in one pipeline, and returns the stored ids.
func xadd(t *testing.T, client redis.UniversalClient, key string, ids ...string) []string {
	t.Helper()
	pipe := client.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for j, id := range ids {
		cmds[j] = pipe.XAdd(t.Context(), &redis.XAddArgs{Stream: key, ID: id, Values: []any{"payload", fmt.Sprintf("message-%d", j)}})
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatalf("XADD %s: %v", key, err)
	}
	stored := make([]string, len(cmds))
	for j, cmd := range cmds {
		stored[j] = cmd.Val()
	}
	return stored
}

// xaddN appends n entries with automatic ids to key.
func xaddN(t *testing.T, client redis.UniversalClient, key string, n int) []string {
	t.Helper()
	return xadd(t, client, key, make([]string, n)...)
}
