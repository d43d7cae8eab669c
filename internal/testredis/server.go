package testredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Binary is the redis-server executable.
const Binary = "/usr/bin/redis-server"

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 15 * time.Second

// Server is a throwaway redis-server process on a loopback port. Its
// methods must be called from the test goroutine.
type Server struct {
	// Addr is host:port; it stays the same across Restart.
	Addr string

	t     testing.TB
	port  int
	dir   string
	extra []string
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd has exited
}

// Start runs a redis-server without persistence on a free loopback port
// and waits until it answers PING. It is killed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, t.TempDir())
}

// StartDurable is Start with an append-only file fsynced before every
// reply (appendfsync always): every write the server acknowledged survives
// Kill, and Restart reloads it.
func StartDurable(t testing.TB) *Server {
	t.Helper()
	return start(t, t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
}

// start launches a server in dir with extra arguments, retrying on another
// port when the chosen one turns out to be taken.
func start(t testing.TB, dir string, extra ...string) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		Unavailable(t, "redis-server binary: %v", err)
	}
	var err error
	for range 5 {
		s := &Server{t: t, port: freePort(t), dir: dir, extra: extra}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		if err = s.launch(); err == nil {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatalf("start redis-server: %v", err)
	return nil
}

// Kill stops the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() {
	s.t.Helper()
	s.stop()
}

// Restart starts the server again on the same port and waits for PING.
func (s *Server) Restart() {
	s.t.Helper()
	s.stop()
	if err := s.launch(); err != nil {
		s.t.Fatalf("restart redis-server on %s: %v", s.Addr, err)
	}
}

// launch runs the process and waits until it answers PING or exits. The
// extra arguments come last, so they override the defaults.
func (s *Server) launch() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis-"+strconv.Itoa(s.port)+".log"),
	}, s.extra...)
	s.cmd = exec.Command(Binary, args...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err := waitFor(ctx, s.done, func(ctx context.Context) error {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		defer c.Close()
		return c.Ping(ctx).Err()
	})
	if err != nil {
		s.stop()
		return fmt.Errorf("redis-server on %s not ready: %w (log: %s)", s.Addr, err, s.log())
	}
	return nil
}

// stop kills the process if it runs and waits for it to exit.
func (s *Server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

func (s *Server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis-"+strconv.Itoa(s.port)+".log"))
	return string(b)
}

// errExited reports that the process ended while a test waited for it.
var errExited = errors.New("redis-server exited")

// pollInterval is how often waitFor re-checks its condition.
const pollInterval = 10 * time.Millisecond

// waitFor polls check until it succeeds, ctx ends or exited is closed.
func waitFor(ctx context.Context, exited <-chan struct{}, check func(context.Context) error) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			return fmt.Errorf("%w: last error: %w", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// freePort returns a port p such that p and p+10000 (the cluster bus port)
// can both be bound on loopback right now.
func freePort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := 20000 + rand.IntN(10000)
		a, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		_ = a.Close()
		if err != nil {
			continue
		}
		_ = b.Close()
		return p
	}
	t.Fatal("no free loopback port pair found")
	return 0
}
