package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// RedisBinary is the redis-server executable the suite runs.
const RedisBinary = "/usr/bin/redis-server"

// redisProc is a throwaway redis-server with an append-only file fsynced
// before every reply, so every write it acknowledged survives kill and
// restart. Port and data directory stay the same across restarts. Not safe
// for concurrent use.
type redisProc struct {
	addr string
	args []string
	cmd  *exec.Cmd
	gone chan struct{} // closed when cmd exited
}

// startRedis runs redis-server in dir on a free loopback port.
func startRedis(ctx context.Context, dir string) (*redisProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisProc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), args: []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always",
		"--logfile", filepath.Join(dir, "redis.log"),
	}}
	return r, r.run(ctx)
}

// run starts the process and waits until it answers PING.
func (r *redisProc) run(ctx context.Context) error {
	r.cmd = exec.Command(RedisBinary, r.args...)
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	gone := make(chan struct{})
	r.gone = gone
	go func(c *exec.Cmd) { _ = c.Wait(); close(gone) }(r.cmd)
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for c.Ping(ctx).Err() != nil {
		select {
		case <-gone:
			return fmt.Errorf("redis-server on %s exited at start", r.addr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.kill()
			return fmt.Errorf("redis-server on %s did not answer PING", r.addr)
		}
	}
	return nil
}

// kill sends SIGKILL and waits for the exit; a no-op when it is down.
func (r *redisProc) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.gone
	r.cmd = nil
}

// restart starts the killed server again on its port with its data.
func (r *redisProc) restart(ctx context.Context) error {
	r.kill()
	var err error
	for range 50 { // the port may linger briefly
		if err = r.run(ctx); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// pgSchema is a schema of its own in PostgreSQL for one run.
type pgSchema struct {
	base, name string
}

// newPGSchema creates schema chaos_<random> in the database of dsn.
func newPGSchema(ctx context.Context, dsn string) (*pgSchema, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	s := &pgSchema{base: dsn, name: "chaos_" + randomSuffix()}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+s.name); err != nil {
		return nil, fmt.Errorf("postgres: create schema %s: %w", s.name, err)
	}
	return s, nil
}

// url is dsn with search_path set to the schema.
func (s *pgSchema) url() (string, error) {
	u, err := url.Parse(s.base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", s.name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// drop removes the schema and everything in it.
func (s *pgSchema) drop(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA "+s.name+" CASCADE")
	return err
}

// randomSuffix is 12 lower-case hex digits, unique per run.
func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// removeDir deletes a run directory, ignoring errors.
func removeDir(dir string) { _ = os.RemoveAll(dir) }
