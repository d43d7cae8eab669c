package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// redisAddr is the Redis the coordinators of these tests use.
const redisAddr = testredis.SharedAddr

func sharedRedis(t *testing.T) *redis.Client { return testredis.Shared(t) }

// testPrefix is a stream prefix (and key prefix) no other test uses; its
// keys are deleted when the test ends.
func testPrefix(t *testing.T) string { return testredis.Prefix(t, testredis.Shared(t)) }

// xadd appends entry i to stream key.
func xadd(key string, i int) *redis.XAddArgs {
	return &redis.XAddArgs{Stream: key, Values: []any{"payload", i}}
}

// deadLetter is the dead letter of entry id of shard of prefix that group
// gave up on with cause, as the Go client writes it.
func deadLetter(prefix string, shard int, id, group, cause string) *redis.XAddArgs {
	return &redis.XAddArgs{Stream: contract.DeadLetterStream(prefix),
		Values: contract.DeadLetterFields(contract.StreamKey(prefix, shard), id, group, 5, cause, map[string]any{"payload": "p"})}
}

// joinMember runs a member of group g of prefix p on srv with the Go
// client until the test ends and returns its id.
func joinMember(t *testing.T, srv *coordproc.Server, p, g string) string {
	t.Helper()
	m, err := client.NewMember(client.MemberConfig{
		Coordinator:  client.NewCoordinator(srv.Base, client.WithBasicAuth("admin", "password")),
		StreamPrefix: p, Group: g, MemberID: "coordctl-test-member", Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("member: %v", err)
		}
	})
	return m.ID()
}
