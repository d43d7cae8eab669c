package testredis

import (
	"context"
	"os"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
)

// Server is a throwaway redis-server process on a loopback port. Its
// methods must be called from the test goroutine.
type Server struct {
	// Addr is host:port; it stays the same across Restart.
	Addr string

	t    testing.TB
	proc *redisproc.Server
}

// Start runs a redis-server without persistence on a free loopback port
// and waits until it answers PING. It is killed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, t.TempDir())
}

// StartDurable is Start with redisproc.Durable: every write the server
// acknowledged survives Kill, and Restart reloads it.
func StartDurable(t testing.TB) *Server {
	t.Helper()
	return start(t, t.TempDir(), redisproc.Durable...)
}

// start launches a server in dir with extra arguments; it is killed when
// the test ends.
func start(t testing.TB, dir string, extra ...string) *Server {
	t.Helper()
	if _, err := os.Stat(redisproc.Binary); err != nil {
		Unavailable(t, "redis-server binary: %v", err)
	}
	p, err := redisproc.Start(context.Background(), dir, extra...)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(p.Kill)
	return &Server{Addr: p.Addr, t: t, proc: p}
}

// Kill stops the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() { s.proc.Kill() }

// Restart starts the server again on the same port and waits for PING.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.proc.Restart(context.Background()); err != nil {
		s.t.Fatalf("restart redis-server on %s: %v", s.Addr, err)
	}
}
