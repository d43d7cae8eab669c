package netlimit

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// logEvery is the shortest interval between two log records of refused
// connections: a client opening connections in a loop must not flood the
// log (the records count what they leave out).
const logEvery = time.Minute

// Listener is a net.Listener that lets each remote IP address hold at most
// a fixed number of open connections (see the package documentation).
type Listener struct {
	net.Listener
	max int
	log *slog.Logger

	mu   sync.Mutex
	open map[string]int // open connections by remote IP; absent when 0

	refused  atomic.Int64 // connections refused since the start
	lastLog  time.Time    // under mu: when refusals were last logged
	unlogged int64        // under mu: refusals since then
}

// Listen wraps ln so that a remote IP address holds at most limit open
// connections; limit ≤ 0 returns ln itself (no cap). Refused connections are
// logged as warnings on logger (nil: not logged), at most once a minute.
func Listen(ln net.Listener, limit int, logger *slog.Logger) net.Listener {
	if limit <= 0 {
		return ln
	}
	return &Listener{Listener: ln, max: limit, log: logger, open: map[string]int{}}
}

// Accept returns the next connection whose address is under its cap; the
// connections over it are closed here and never returned.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := addressKey(c.RemoteAddr())
		if l.admit(key) {
			return &conn{Conn: c, release: func() { l.release(key) }}, nil
		}
		_ = c.Close()
	}
}

// admit takes a slot of key, or counts a refusal and reports false.
func (l *Listener) admit(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.open[key]; n < l.max {
		l.open[key] = n + 1
		return true
	}
	l.refused.Add(1)
	l.unlogged++
	if now := time.Now(); l.log != nil && now.Sub(l.lastLog) >= logEvery {
		l.log.Warn("connection refused: too many open connections from one address",
			"address", key, "maxConnectionsPerAddress", l.max, "refusedSinceLastLog", l.unlogged,
			"setting", "coordinator.server.max-connections-per-address")
		l.lastLog, l.unlogged = now, 0
	}
	return false
}

// release frees a slot of key.
func (l *Listener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.open[key]; n > 1 {
		l.open[key] = n - 1
	} else {
		delete(l.open, key)
	}
}

// Open returns the number of open connections of the remote IP address ip
// (as net.IP.String writes it).
func (l *Listener) Open(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[ip]
}

// Refused returns the number of connections refused since the start.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// addressKey is the remote IP address of a connection: its host without
// the port (the whole address when it has no port, e.g. a Unix socket's).
func addressKey(a net.Addr) string {
	if a == nil {
		return ""
	}
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	s := a.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}

// conn is an admitted connection: closing it frees its slot, once.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and, the first time, frees its slot.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
