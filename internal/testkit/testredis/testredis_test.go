package testredis

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestServerKillRestart(t *testing.T) {
	s := Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("ping answered by a killed server")
	}
	s.Restart()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping after restart: %v", err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("restarted server kept data: %d, %v", n, err)
	}
}

func TestCluster(t *testing.T) {
	cl := StartCluster(t, 3)
	c := cl.Client(t)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "{x}1", "{x}2"} {
		if err := c.Set(ctx, k, k, 0).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	var masters atomic.Int32
	if err := c.ForEachMaster(ctx, func(context.Context, *redis.Client) error { masters.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if n := masters.Load(); n != 3 {
		t.Errorf("%d masters, want 3", n)
	}
}

func TestPrefixCleanup(t *testing.T) {
	c := Shared(t)
	var prefix string
	t.Run("inner", func(t *testing.T) {
		prefix = Prefix(t, c)
		if err := c.Set(context.Background(), prefix+":k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if n, err := c.Exists(context.Background(), prefix+":k").Result(); err != nil || n != 0 {
		t.Errorf("key under %s survived cleanup: %d, %v", prefix, n, err)
	}
}
