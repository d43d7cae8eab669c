package netlimit

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// failAfter bounds every wait of these tests: a wait that has not seen its
// condition by then has failed (it is not a timing threshold of the code).
const failAfter = 20 * time.Second

// served accepts on ln until it fails and sends each connection on the
// returned channel.
func served(t *testing.T, ln net.Listener) <-chan net.Conn {
	t.Helper()
	out := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(out)
				return
			}
			out <- c
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return out
}

func next(t *testing.T, accepted <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatal("listener closed")
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	case <-time.After(failAfter):
		t.Fatal("no connection accepted")
	}
	return nil
}

func dial(t *testing.T, from, to string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer waits until the server has closed c: a read returns EOF
// or a reset instead of data.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(failAfter))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open: read %v", err)
	}
}

// Over TCP: with a cap of 2, the third connection from 127.0.0.1 is
// closed at once, a connection from another address is accepted, and
// closing an accepted connection frees its slot.
func TestCapPerAddressTCP(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	ln := Listen(raw, 2, slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))).(*Listener)
	accepted := served(t, ln)
	addr := raw.Addr().String()

	dial(t, "127.0.0.1", addr)
	first := next(t, accepted)
	dial(t, "127.0.0.1", addr)
	next(t, accepted)
	if n := ln.Open("127.0.0.1"); n != 2 {
		t.Fatalf("%d open, want 2", n)
	}

	extra := dial(t, "127.0.0.1", addr)
	closedByServer(t, extra)
	if ln.Refused() != 1 {
		t.Errorf("%d refused, want 1", ln.Refused())
	}
	mu.Lock()
	if !strings.Contains(logs.String(), "coordinator.server.max-connections-per-address") {
		t.Errorf("refusal not logged: %q", logs.String())
	}
	mu.Unlock()

	// Another address has its own slots (Linux routes all of 127/8 to lo).
	dial(t, "127.0.0.2", addr)
	if c := next(t, accepted); c.RemoteAddr().(*net.TCPAddr).IP.String() != "127.0.0.2" {
		t.Fatalf("accepted %v, want the connection from 127.0.0.2", c.RemoteAddr())
	}

	// The server closes the first connection: its slot is free again.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	_ = first.Close() // a second Close frees nothing more
	if n := ln.Open("127.0.0.1"); n != 1 {
		t.Fatalf("%d open after a close, want 1", n)
	}
	again := dial(t, "127.0.0.1", addr)
	admitted := next(t, accepted)
	if _, err := again.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(admitted, make([]byte, 1)); err != nil {
		t.Fatalf("the admitted connection does not carry data: %v", err)
	}
	if ln.Open("127.0.0.1") != 2 || ln.Refused() != 1 {
		t.Errorf("%d open, %d refused; want 2 and 1", ln.Open("127.0.0.1"), ln.Refused())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// fakeListener hands out the connections sent on conns.
type fakeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newFakeListener() *fakeListener {
	return &fakeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (f *fakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-f.conns:
		return c, nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}

func (f *fakeListener) Close() error   { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

// fakeConn is a connection from remote that records whether it was closed.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed chan struct{}
	once   sync.Once
}

func newFakeConn(remote string) *fakeConn {
	ap, err := net.ResolveTCPAddr("tcp", remote)
	if err != nil {
		panic(err)
	}
	a, _ := net.Pipe()
	return &fakeConn{Conn: a, remote: ap, closed: make(chan struct{})}
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (c *fakeConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// The cap counts by IP address, not by port; each address is counted on
// its own, IPv6 and IPv4-mapped addresses included; a cap of 0 is no cap.
func TestCapCountsEachAddress(t *testing.T) {
	fake := newFakeListener()
	ln := Listen(fake, 1, nil).(*Listener)
	accepted := served(t, ln)
	offer := func(remote string) *fakeConn {
		c := newFakeConn(remote)
		select {
		case fake.conns <- c:
		case <-time.After(failAfter):
			t.Fatal("listener not accepting")
		}
		return c
	}

	a := offer("10.0.0.1:1000")
	next(t, accepted)
	b := offer("[2001:db8::1]:1000")
	next(t, accepted)
	// Refused in Accept: the next connection offered is the one returned.
	sameHostOtherPort := offer("10.0.0.1:1001")
	mapped := offer("[::ffff:10.0.0.1]:1002") // the same IPv4 address
	sameV6 := offer("[2001:db8::1]:1003")
	c := offer("10.0.0.2:1000")
	if got := next(t, accepted); got.RemoteAddr().String() != "10.0.0.2:1000" {
		t.Fatalf("accepted %v, want 10.0.0.2:1000", got.RemoteAddr())
	}
	for _, fc := range []*fakeConn{sameHostOtherPort, mapped, sameV6} {
		if !fc.isClosed() {
			t.Errorf("%v over the cap was not closed", fc.RemoteAddr())
		}
	}
	for _, fc := range []*fakeConn{a, b, c} {
		if fc.isClosed() {
			t.Errorf("%v under the cap was closed", fc.RemoteAddr())
		}
	}
	if ln.Refused() != 3 || ln.Open("10.0.0.1") != 1 || ln.Open("2001:db8::1") != 1 || ln.Open("10.0.0.2") != 1 {
		t.Errorf("refused %d, open %d %d %d", ln.Refused(), ln.Open("10.0.0.1"), ln.Open("2001:db8::1"), ln.Open("10.0.0.2"))
	}

	if Listen(fake, 0, nil) != net.Listener(fake) {
		t.Error("a cap of 0 wrapped the listener")
	}
}
