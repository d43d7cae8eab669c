package testredis

import (
	"context"
	"crypto/rand"
	"math/big"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedAddr is the Redis every test may use.
const SharedAddr = "127.0.0.1:6379"

// SkipEnv names the variable that turns missing infrastructure into a skip.
const SkipEnv = "COORD_SKIP_INTEGRATION"

// Unavailable ends t because infrastructure it needs is missing: a skip
// when SkipEnv is "1", a failure otherwise.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf(format, args...)
	}
	t.Fatalf(format+" (set "+SkipEnv+"=1 to skip)", args...)
}

// Shared returns a client of the shared Redis, closed at cleanup.
func Shared(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: SharedAddr})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		Unavailable(t, "redis at %s unreachable: %v", SharedAddr, err)
	}
	return c
}

var unsafeKeyChars = regexp.MustCompile(`[^A-Za-z0-9]+`)

// Prefix returns a key prefix no other test uses, derived from t.Name(),
// and deletes every key under it from c when the test ends.
func Prefix(t testing.TB, c redis.UniversalClient) string {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "test:" + unsafeKeyChars.ReplaceAllString(t.Name(), "_") + ":" + n.Text(36)
	t.Cleanup(func() { deleteKeys(t, c, prefix) })
	return prefix
}

// deleteKeys removes every key starting with prefix, on every master.
func deleteKeys(t testing.TB, c redis.UniversalClient, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := c.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	var err error
	switch c := c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, del)
	case *redis.Client:
		err = del(ctx, c)
	}
	if err != nil {
		t.Logf("cleanup of %s*: %v", prefix, err)
	}
}
