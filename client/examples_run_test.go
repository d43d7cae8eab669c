package client_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestExamples runs the Example functions, as written, against a
// coordinator process of its own (Redis store, the defaults otherwise) and
// a throwaway Redis; they log.Fatal on any error.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	rs := testredis.Start(t)
	dir := t.TempDir()
	bin, err := coordproc.Build(context.Background(), dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := coordproc.StartServer(context.Background(), bin, dir, "coord", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: "examples", RedisAddr: rs.Addr,
		Interval: 200 * time.Millisecond, LeaseTTL: 3 * time.Second, RebalanceTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	t.Setenv("COORDINATOR_URL", srv.Base)
	t.Setenv("REDIS_ADDR", rs.Addr)

	out := capture(t, Example)
	if !strings.Contains(out, "handled 10 records; Consume returned <nil>") {
		t.Errorf("Example printed %q", out)
	}
	ExampleProducer()
	ExampleConsumer()
	ExampleMember()
}

// capture returns what f printed to standard output.
func capture(t *testing.T, f func()) string {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		done <- b.String()
	}()
	f()
	os.Stdout = stdout
	_ = w.Close()
	return <-done
}
