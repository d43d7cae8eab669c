package coordproc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/freeport"
)

// Store types of the coordinator's store.type.
const (
	StoreMemory = "memory"
	StoreRedis  = "redis"
	StoreJDBC   = "jdbc"
)

// ServerConfig is what one coordinator process runs with.
type ServerConfig struct {
	// Store is store.type; KeyPrefix is store.key-prefix (Redis).
	Store, KeyPrefix string
	// RedisAddr is host:port of Redis; JDBCURL the PostgreSQL URL.
	RedisAddr, JDBCURL string
	// GroupCommit is coordination.group-commit.enabled.
	GroupCommit bool
	// Interval and LeaseTTL are coordination.heartbeat-interval and
	// member-lease-ttl.
	Interval, LeaseTTL time.Duration
	// RebalanceTimeout is coordination.rebalance-timeout; zero keeps the
	// default.
	RebalanceTimeout time.Duration
	// MaxShards is defaults.max-shard-count.
	MaxShards int
	// HistoryMaxEntries is coordination.history.max-entries; zero keeps
	// the default.
	HistoryMaxEntries int
	// MaxGroups is defaults.max-groups; zero: no cap.
	MaxGroups int
	// OffsetCacheTTL is monitoring.offset-cache-ttl, which also paces the
	// lag refresher (and so the work assignor's measures); zero keeps the
	// default.
	OffsetCacheTTL time.Duration
	// ID is coordinator.id (COORDINATOR_ID), stable across restarts of one
	// coordinator of a cluster; empty: the process name.
	ID string
	// Port is the loopback port to listen on (a restart keeps its
	// address); 0: a free one.
	Port int
	// Env is added to the process's environment (after the test's own), for
	// settings such as COORDINATOR_STREAMS_PROVISIONING_ENABLED=true without
	// a t.Setenv, which parallel tests cannot use.
	Env []string
}

// Server is a running coordinator process.
type Server struct {
	// Base is the API's base URL, http://127.0.0.1:<port> + contract.BasePath.
	Base string
	// Root is http://127.0.0.1:<port>, also its advertised cluster URL.
	Root string
	// ID is its coordinator.id; Port its loopback port.
	ID     string
	Port   int
	cmd    *exec.Cmd
	exited chan error
	log    string
	start  func() (*exec.Cmd, error) // starts the process again (Restart)
}

// BinDirEnv names the environment variable that points Build at prebuilt
// binaries: make test builds the commands the tests run once into bin/test
// and sets it, so that each test package does not link them again.
const BinDirEnv = "COORDPROC_BIN_DIR"

// Build returns the path of the command ./cmd/<name> of the module in the
// working directory, built without -race: the binary name in the directory
// $COORDPROC_BIN_DIR when that variable is set and the file exists there
// (built by make test from the same tree), otherwise one built into dir
// with go build.
func Build(ctx context.Context, dir, name string) (string, error) {
	if pre := os.Getenv(BinDirEnv); pre != "" {
		bin, err := filepath.Abs(filepath.Join(pre, name))
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
			return bin, nil
		}
	}
	return build(ctx, dir, name)
}

// build builds ./cmd/<name> of the module in the working directory into
// dir and returns the binary's path.
func build(ctx context.Context, dir, name string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// BuildCoordinator builds ./cmd/coordinator of the module in the working
// directory into dir and returns the binary's path. Unlike Build it ignores
// $COORDPROC_BIN_DIR: the benchmarks and the fault suite (coord-bench,
// coord-chaos) always run the tree as it is.
func BuildCoordinator(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "coordinator")
}

// StartServer writes the configuration of c into dir and starts bin with
// it on loopback port c.Port (a free one when 0), with COORDINATOR_ID c.ID
// (name when empty) and COORDINATOR_CLUSTER_ADVERTISE_URL its own
// http://127.0.0.1:<port>; the process logs to dir/<name>.log. It returns
// once the server answers /readyz.
func StartServer(ctx context.Context, bin, dir, name string, c ServerConfig) (*Server, error) {
	for attempt := 1; ; attempt++ {
		s, err := startServer(ctx, bin, dir, name, c)
		// A port picked free can be taken by another process before the
		// coordinator binds it: pick another one.
		if err == nil || c.Port != 0 || attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
	}
}

// startServer is one attempt of StartServer.
func startServer(ctx context.Context, bin, dir, name string, c ServerConfig) (*Server, error) {
	port := c.Port
	if port == 0 {
		var err error
		if port, err = freeport.Loopback(); err != nil {
			return nil, err
		}
	}
	id := cmp.Or(c.ID, name)
	cfgPath := filepath.Join(dir, name+".yaml")
	cfg, err := c.yaml(port)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(dir, name+".log")
	s := &Server{Base: root + contract.BasePath, Root: root, ID: id, Port: port, log: logPath}
	s.start = func() (*exec.Cmd, error) {
		logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		defer logFile.Close() // the child holds its own descriptor
		cmd := exec.Command(bin, "-config", cfgPath)
		cmd.Env = append(append(os.Environ(), c.Env...), "COORDINATOR_ID="+id, "COORDINATOR_CLUSTER_ADVERTISE_URL="+root)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		return cmd, cmd.Start()
	}
	if err := s.run(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// run starts the process and waits until it is ready.
func (s *Server) run(ctx context.Context) error {
	cmd, err := s.start()
	if err != nil {
		return err
	}
	s.cmd, s.exited = cmd, make(chan error, 1)
	go func() { s.exited <- cmd.Wait() }()
	if err := s.awaitReady(ctx); err != nil {
		_ = s.Stop()
		return err
	}
	return nil
}

// Restart starts a stopped or killed server again with the same id,
// configuration and port, and returns once it answers /readyz.
func (s *Server) Restart(ctx context.Context) error { return s.run(ctx) }

// yaml renders the coordinator configuration.
func (c ServerConfig) yaml(port int) ([]byte, error) {
	host, redisPort, err := net.SplitHostPort(c.RedisAddr)
	if err != nil {
		return nil, fmt.Errorf("redis address %q: %w", c.RedisAddr, err)
	}
	rp, err := strconv.Atoi(redisPort)
	if err != nil {
		return nil, fmt.Errorf("redis address %q: %w", c.RedisAddr, err)
	}
	coordination := map[string]any{
		"heartbeat-interval": c.Interval.String(),
		"member-lease-ttl":   c.LeaseTTL.String(),
		"group-commit":       map[string]any{"enabled": c.GroupCommit},
	}
	if c.RebalanceTimeout > 0 {
		coordination["rebalance-timeout"] = c.RebalanceTimeout.String()
	}
	if c.HistoryMaxEntries > 0 {
		coordination["history"] = map[string]any{"max-entries": c.HistoryMaxEntries}
	}
	tree := map[string]any{"coordinator": map[string]any{
		"server": map[string]any{"address": "127.0.0.1:" + strconv.Itoa(port)},
		// Admin mutations only; heartbeats are never rate limited.
		"api": map[string]any{"rate-limit": map[string]any{"enabled": false}},
		"store": map[string]any{
			"type": c.Store, "key-prefix": c.KeyPrefix,
			"jdbc": map[string]any{"url": c.JDBCURL},
		},
		"redis":        map[string]any{"host": host, "port": rp},
		"coordination": coordination,
		"defaults":     map[string]any{"max-shard-count": max(c.MaxShards, 4096), "max-groups": c.MaxGroups},
		"debug":        map[string]any{"pprof": true, "bench-endpoints": true},
	}}
	if c.OffsetCacheTTL > 0 {
		tree["coordinator"].(map[string]any)["monitoring"] = map[string]any{"offset-cache-ttl": c.OffsetCacheTTL.String()}
	}
	return yaml.Marshal(tree)
}

// awaitReady polls /readyz for up to 30 s.
func (s *Server) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Root+"/readyz", nil)
		if err != nil {
			return err
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("coordinator exited (%v) before it was ready:\n%s", err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("coordinator not ready: %w\n%s", ctx.Err(), s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the last lines of the server's log.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if i := len(b) - 2000; i > 0 {
		b = b[i:]
	}
	return string(bytes.TrimSpace(b))
}

// Pid is the coordinator's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop sends SIGTERM and waits for the ordered shutdown, killing the
// process after 30 s.
func (s *Server) Stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		return exitError(err)
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("coordinator did not stop within 30s; killed: %w", exitError(<-s.exited))
	}
}

// Kill stops the process with SIGKILL (no ordered shutdown) and waits for
// it to exit.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	err := <-s.exited
	s.exited <- err // a later Stop or Kill returns at once
}

// exitError drops the error of a process that ended by our SIGTERM.
func exitError(err error) error {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}
