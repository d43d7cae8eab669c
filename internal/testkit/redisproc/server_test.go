package redisproc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestKillRestartKeepsPortAndDurableData(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, t.TempDir(), Durable...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if s.Running() || s.Pid() != 0 {
		t.Fatal("a killed server reports itself running")
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("ping answered by a killed server")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("after restart: %q, %v; want the acknowledged write", v, err)
	}
}

func TestStartFailsWithBadArguments(t *testing.T) {
	if s, err := Start(context.Background(), t.TempDir(), "--no-such-option", "x"); err == nil {
		s.Kill()
		t.Fatal("started with an unknown option")
	}
}

// A relative directory works: redis-server changes into it before it
// opens its log file there.
func TestStartInRelativeDir(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(filepath.Join("run", "redis"), 0o750); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), filepath.Join("run", "redis"))
	if err != nil {
		t.Fatalf("Start in a relative directory: %v", err)
	}
	s.Kill()
}
