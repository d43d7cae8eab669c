package pgproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/freeport"
)

// BinGlob matches the bin directories of the installed PostgreSQL versions.
const BinGlob = "/usr/lib/postgresql/*/bin"

// StartTimeout bounds initdb plus the wait for the first connection;
// StopTimeout the wait for a fast shutdown before SIGKILL.
const (
	StartTimeout = 2 * time.Minute
	StopTimeout  = 15 * time.Second
)

// pollInterval is how often a start retries connecting.
const pollInterval = 50 * time.Millisecond

// Server is one throwaway postgres process and its data directory.
type Server struct {
	// URL connects as postgres to database postgres over TCP.
	URL string
	// Version is the server_version the server reports.
	Version string

	dir  string // temporary directory: data/, the socket, postgres.log
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start initialises a cluster in a new temporary directory and starts
// postgres on a free loopback port with the given configuration settings
// (name=value, passed as -c), and waits until it accepts a connection.
func Start(ctx context.Context, settings ...string) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "coord-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	if err := s.start(ctx, bin, cred, settings); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, bin string, cred *syscall.Credential, settings []string) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	if cred != nil {
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := freeport.Loopback()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + s.dir}
	for _, kv := range settings {
		args = append(args, "-c", kv)
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		conn, err := pgx.Connect(ctx, s.URL)
		if err == nil {
			err = conn.QueryRow(ctx, "SHOW server_version").Scan(&s.Version)
			conn.Close(ctx)
			return err
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited at start (log: %s)", s.log())
		case <-ctx.Done():
			s.Stop()
			return fmt.Errorf("postgres did not accept a connection: %w", errors.Join(ctx.Err(), err))
		case <-tick.C:
		}
	}
}

// Pid is the postmaster's process id, 0 once stopped.
func (s *Server) Pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop shuts the server down (fast shutdown, SIGKILL after StopTimeout)
// and removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(StopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.cmd = nil
	}
	_ = os.RemoveAll(s.dir)
}

// log is the end of the server's log, for errors.
func (s *Server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	return string(b[max(len(b)-2000, 0):])
}

// binDir is the bin directory of the newest installed PostgreSQL.
func binDir() (string, error) {
	dirs, _ := filepath.Glob(BinGlob)
	version := func(d string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
	for _, d := range slices.Backward(dirs) {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries in %s", BinGlob)
}

// credential is the OS user postgres when running as root (PostgreSQL
// refuses root), else nil: the caller's own user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the OS user postgres: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
