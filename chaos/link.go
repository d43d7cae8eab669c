package chaos

import (
	"net"
	"sync"
	"time"
)

// link is a TCP relay between one coordinator and a store server (Redis or
// PostgreSQL) that a fault can cut, as a network partition between the
// coordinator's host and the store would: while it is cut, no byte gets
// through in either direction and nothing is refused or reset, so the
// coordinator sees its calls time out; new connections are accepted and
// then hang. Healing closes every connection that was touched during the
// cut (as the peers' TCP stacks would have given up on them), so the
// coordinator reconnects. Connections that saw no traffic during the cut
// carry on. It is safe for concurrent use.
type link struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	healed chan struct{} // nil while traffic flows; closed at the heal
	conns  map[net.Conn]struct{}
	closed bool
}

// newLink listens on a free loopback port and relays to target.
func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	go l.serve()
	return l, nil
}

// addr is the address the coordinator connects to instead of target.
func (l *link) addr() string { return l.ln.Addr().String() }

func (l *link) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.relay(c)
	}
}

// cutWait returns the channel closed at the end of the current cut, or nil
// when the link is not cut.
func (l *link) cutWait() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.healed
}

// track registers conns for close; false when the link is closed.
func (l *link) track(conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	for _, c := range conns {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *link) untrack(conns ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range conns {
		delete(l.conns, c)
		_ = c.Close()
	}
}

// relay connects c to the target and copies both ways until either side
// ends, or, after the heal, when it carried traffic during a cut.
func (l *link) relay(c net.Conn) {
	if !l.track(c) {
		_ = c.Close()
		return
	}
	if healed := l.cutWait(); healed != nil { // connecting during a cut: hang
		<-healed
		l.untrack(c)
		return
	}
	up, err := net.DialTimeout("tcp", l.target, time.Second)
	if err != nil { // the store is down: refused, as it would be directly
		l.untrack(c)
		return
	}
	if !l.track(up) {
		l.untrack(c, up)
		return
	}
	done := make(chan struct{}, 2)
	go func() { l.copy(up, c); done <- struct{}{} }()
	go func() { l.copy(c, up); done <- struct{}{} }()
	<-done
	l.untrack(c, up) // ends the other direction too
	<-done
}

// copy relays src to dst; bytes read during a cut are dropped and the
// copy ends at the heal.
func (l *link) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if healed := l.cutWait(); healed != nil {
				<-healed
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut stops every byte from now on; a no-op when already cut.
func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.healed == nil {
		l.healed = make(chan struct{})
	}
}

// heal lets traffic through again; a no-op when not cut.
func (l *link) heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.healed != nil {
		close(l.healed)
		l.healed = nil
	}
}

// close stops listening and closes every connection.
func (l *link) close() {
	_ = l.ln.Close()
	l.heal()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.conns {
		_ = c.Close()
	}
	clear(l.conns)
}
