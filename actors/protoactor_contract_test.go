package actors

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// These tests pin the protoactor-go behaviour the runtime relies on
// (docs/architecture.md principle 9), for the version in go.mod.

func newQuietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
}

// probe is an actor whose handling of "block" reports "blocked" and waits
// for release, of "stop" stops itself and of "panic" panics; it counts the
// strings it handled and reports its lifecycle on events.
type probe struct {
	release <-chan struct{}
	handled *atomic.Int64
	events  chan<- string
}

func (p *probe) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		p.events <- "started"
	case *actor.Restarting:
		p.events <- "restarting"
	case string:
		switch msg {
		case "block":
			p.events <- "blocked"
			<-p.release
		case "panic":
			panic("probe")
		case "stop":
			ctx.Stop(ctx.Self())
		}
		p.handled.Add(1)
	}
}

// Poison is handled after everything already queued: a poisoned actor
// drains its mailbox.
func TestProtoactorPoisonDrainsMailbox(t *testing.T) {
	system := newQuietSystem()
	defer system.Shutdown()
	release := make(chan struct{})
	var handled atomic.Int64
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &probe{release: release, handled: &handled, events: make(chan string, 4)}
	}))
	system.Root.Send(pid, "block")
	for range 10 {
		system.Root.Send(pid, "x")
	}
	done := system.Root.PoisonFuture(pid)
	close(release)
	if err := done.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 11 {
		t.Errorf("handled %d messages before stopping, want 11", n)
	}
}

// Stop acts at once: the user messages still queued are dropped
// unanswered. A stopping parent sends its children this Stop, which is why
// Shutdown poisons every group actor before stopping the manager.
func TestProtoactorStopDropsMailbox(t *testing.T) {
	system := newQuietSystem()
	defer system.Shutdown()
	release := make(chan struct{})
	events := make(chan string, 4)
	var handled atomic.Int64
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &probe{release: release, handled: &handled, events: events}
	}))
	system.Root.Send(pid, "block")
	system.Root.Send(pid, "stop")
	for range 10 {
		system.Root.Send(pid, "x")
	}
	for <-events != "blocked" {
	}
	done := system.Root.PoisonFuture(pid) // only to watch the termination
	close(release)
	if err := done.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 2 {
		t.Errorf("handled %d messages, want 2 (block and stop, none of the queued ones)", n)
	}
}

// A panic restarts the actor as a new instance: the old one gets
// Restarting, the new one Started; the panicking message is not redelivered
// and later messages are handled.
func TestProtoactorRestartIsFreshInstance(t *testing.T) {
	system := newQuietSystem()
	defer system.Shutdown()
	events := make(chan string, 8)
	var instances, handled atomic.Int64
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		instances.Add(1)
		return &probe{handled: &handled, events: events}
	}))
	system.Root.Send(pid, "panic")
	system.Root.Send(pid, "x")
	for _, want := range []string{"started", "restarting", "started"} {
		if got := <-events; got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	}
	if err := system.Root.PoisonFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	if instances.Load() != 2 || handled.Load() != 1 {
		t.Errorf("%d instances, %d handled; want 2 and 1", instances.Load(), handled.Load())
	}
}
