package redisproc

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
	"time"

	"github.com/redis/go-redis/v9"
)

// Binary is the redis-server executable.
const Binary = "/usr/bin/redis-server"

// Durable is the arguments of an append-only file fsynced before every
// reply (appendfsync always): every write the server acknowledged survives
// Kill, and Restart reloads it.
var Durable = []string{"--appendonly", "yes", "--appendfsync", "always"}

// StartTimeout bounds how long a start or restart may take to answer PING.
const StartTimeout = 15 * time.Second

// pollInterval is how often a start re-checks PING.
const pollInterval = 10 * time.Millisecond

// Server is one redis-server process. Its methods are not safe for
// concurrent use.
type Server struct {
	// Addr is 127.0.0.1:port; it stays the same across Restart.
	Addr string

	port int
	dir  string
	args []string
	cmd  *exec.Cmd     // nil while the process is down
	done chan struct{} // closed when cmd has exited
}

// Start runs redis-server in dir on a free loopback port p (p+10000, the
// cluster bus port, is free too) with the default arguments followed by
// extra, and waits until it answers PING. It tries another port when the
// chosen one turns out to be taken. A relative dir is taken from the
// working directory (redis-server changes into dir before it opens its
// log file there, so it is passed as an absolute path).
func Start(ctx context.Context, dir string, extra ...string) (*Server, error) {
	if _, err := os.Stat(Binary); err != nil {
		return nil, fmt.Errorf("redis-server binary: %w", err)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		s := &Server{port: port, dir: dir, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir,
			"--logfile", s.logPath(),
		}, extra...)
		if err = s.launch(ctx); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Running reports whether the process is up (not killed).
func (s *Server) Running() bool { return s.cmd != nil }

// Pid is the process id, 0 while it is down.
func (s *Server) Pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill stops the process with SIGKILL and waits for it to exit; a no-op
// while it is down.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart kills the process if it runs and starts it again on its port
// with its data directory, retrying while the port is still held, until it
// answers PING or StartTimeout passes.
func (s *Server) Restart(ctx context.Context) error {
	s.Kill()
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := s.launch(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// launch runs the process and waits until it answers PING; it kills the
// process when it does not.
func (s *Server) launch(ctx context.Context) error {
	cmd := exec.Command(Binary, s.args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("redis-server on %s exited at start (log: %s)", s.Addr, s.log())
		case <-ctx.Done():
			s.Kill()
			return fmt.Errorf("redis-server on %s did not answer PING: %w", s.Addr, errors.Join(ctx.Err(), err))
		case <-tick.C:
		}
	}
}

func (s *Server) logPath() string {
	return filepath.Join(s.dir, "redis-"+strconv.Itoa(s.port)+".log")
}

// log is the end of the server's log file, for errors.
func (s *Server) log() string {
	b, _ := os.ReadFile(s.logPath())
	return string(b[max(len(b)-2000, 0):])
}

// freePort returns a port p such that p and p+10000 (the cluster bus port)
// can both be bound on loopback right now.
func freePort() (int, error) {
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
		return p, nil
	}
	return 0, errors.New("no free loopback port pair found")
}
