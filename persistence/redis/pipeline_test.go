package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// TestPipelinerConcurrentCallers: every caller gets its own reply.
func TestPipelinerConcurrentCallers(t *testing.T) {
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	p := newPipeliner(c)
	t.Cleanup(p.close)
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			key := fmt.Sprintf("%s:k%d", prefix, i)
			if err := p.do(ctx, goredis.NewIntCmd(ctx, "hset", key, "f", i)); err != nil {
				t.Errorf("hset %d: %v", i, err)
				return
			}
			for range 20 {
				get := goredis.NewStringCmd(ctx, "hget", key, "f")
				if err := p.do(ctx, get); err != nil || get.Val() != fmt.Sprint(i) {
					t.Errorf("hget %d: %q, %v", i, get.Val(), err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestPipelineFailuresStayPerCommand sends one pipeline holding a good
// read, an error reply, a missing field and a call whose context has
// ended: each gets its own outcome, and the ended call is not sent.
func TestPipelineFailuresStayPerCommand(t *testing.T) {
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	ctx := t.Context()
	if err := c.HSet(ctx, prefix+":h", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, prefix+":s", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	good := goredis.NewStringCmd(ctx, "hget", prefix+":h", "f")
	wrongType := goredis.NewStringCmd(ctx, "hget", prefix+":s", "f")
	missing := goredis.NewStringCmd(ctx, "hget", prefix+":h", "nope")
	unsent := goredis.NewIntCmd(ended, "hset", prefix+":unsent", "f", "v")
	p := &pipeliner{client: c} // send only: no sender goroutine
	var calls []*call
	for _, x := range []struct {
		ctx context.Context
		cmd goredis.Cmder
	}{{ctx, good}, {ctx, wrongType}, {ctx, missing}, {ended, unsent}} {
		calls = append(calls, &call{ctx: x.ctx, cmd: x.cmd, done: make(chan struct{})})
	}
	p.send(calls)
	for _, c := range calls {
		<-c.done
	}
	if good.Err() != nil || good.Val() != "v" {
		t.Errorf("good: %q, %v", good.Val(), good.Err())
	}
	var reply goredis.Error
	if !errors.As(wrongType.Err(), &reply) || !goredis.HasErrorPrefix(reply, "WRONGTYPE") {
		t.Errorf("wrong type: %v", wrongType.Err())
	}
	if !errors.Is(missing.Err(), goredis.Nil) {
		t.Errorf("missing: %v", missing.Err())
	}
	if !errors.Is(unsent.Err(), context.Canceled) {
		t.Errorf("ended call: %v", unsent.Err())
	}
	if n, err := c.Exists(ctx, prefix+":unsent").Result(); err != nil || n != 0 {
		t.Errorf("the ended call was sent: exists %d, %v", n, err)
	}
}

// blockPipelines is a hook that holds every pipeline until release is
// closed, and reports each one on entered.
type blockPipelines struct {
	entered chan struct{}
	release chan struct{}
}

func (blockPipelines) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (blockPipelines) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (b blockPipelines) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		b.entered <- struct{}{}
		<-b.release
		return next(ctx, cmds)
	}
}

// TestPipelinerCanceledCallReturns: a caller whose context ends returns
// its context's error while its pipeline is still in flight, and while
// waiting to be taken; the others are answered.
func TestPipelinerCanceledCallReturns(t *testing.T) {
	srv := testredis.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	hook := blockPipelines{entered: make(chan struct{}, 2), release: make(chan struct{})}
	c.AddHook(hook)
	p := newPipeliner(c)
	t.Cleanup(p.close)
	ctx := t.Context()

	inFlight, cancelInFlight := context.WithCancel(ctx)
	errs := make(chan error, 1)
	go func() { errs <- p.do(inFlight, goredis.NewStringCmd(inFlight, "get", "a")) }()
	<-hook.entered // the sender holds the pipeline
	cancelInFlight()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("in flight: %v", err)
	}

	waiting, cancelWaiting := context.WithCancel(ctx)
	go func() { errs <- p.do(waiting, goredis.NewStringCmd(waiting, "get", "b")) }()
	cancelWaiting()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting: %v", err)
	}

	close(hook.release)
	set := goredis.NewStatusCmd(ctx, "set", "c", "1")
	if err := p.do(ctx, set); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// TestPipelinerDeadRedis: with Redis gone, the pipelined store calls fail
// with the classes of lone commands (reads and unsent writes
// ErrUnavailable, the dial error kept in the chain), scripts fall back
// after a SCRIPT FLUSH, and a closed store answers ErrUnavailable.
func TestPipelinerDeadRedis(t *testing.T) {
	t.Parallel() // a throwaway Redis of its own
	srv := testredis.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	s := newStore(t, c)
	ctx, key := t.Context(), storetest.Key(t)
	if _, err := s.Create(ctx, key, persistence.Encode(storetest.Group(key))); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if rev, err := s.Commit(ctx, key, 1, persistence.Mutation{}); err != nil || rev != 2 {
		t.Fatalf("commit after SCRIPT FLUSH: %d, %v", rev, err)
	}
	srv.Kill()
	// A fresh client has no pooled connection: every call dials.
	fresh := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = fresh.Close() })
	direct := fresh.HGet(ctx, s.metadataKey(key), fieldRevision).Err()
	s2 := newStore(t, fresh)
	s2.prefix = s.prefix
	_, revErr := s2.Revision(ctx, key)
	_, commitErr := s2.Commit(ctx, key, 2, persistence.Mutation{})
	for name, err := range map[string]error{"revision": revErr, "commit": commitErr} {
		if !errors.Is(err, persistence.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
		var op, directOp *net.OpError
		if !errors.As(err, &op) || !errors.As(direct, &directOp) || op.Op != directOp.Op {
			t.Errorf("%s: %v, want the lone command's error %v", name, err, direct)
		}
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Revision(ctx, key); !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, goredis.ErrClosed) {
		t.Errorf("revision after close: %v", err)
	}
	if _, err := s2.Commit(ctx, key, 2, persistence.Mutation{}); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("commit after close: %v", err)
	}
}
