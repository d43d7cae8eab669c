package chaos

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes a line on c and reads it back, waiting at most wait.
func roundTrip(c net.Conn, wait time.Duration) error {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && line != "ping\n" {
		err = errors.New("echo " + line)
	}
	return err
}

// A cut link passes nothing and refuses nothing, as a partition: the
// caller's own deadline ends its call. The heal closes the connections
// that carried traffic during the cut, and new ones work again.
func TestLinkCutsLikeAPartition(t *testing.T) {
	l, err := newLink(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", l.addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	before := dial()
	if err := roundTrip(before, 10*time.Second); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	l.cut()
	if err := roundTrip(before, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("open connection during the cut: %v, want the caller's deadline", err)
	}
	during := dial() // accepted, then nothing
	if err := roundTrip(during, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection during the cut: %v, want the caller's deadline", err)
	}
	l.heal()
	for _, c := range []net.Conn{before, during} {
		if err := roundTrip(c, 10*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection used during the cut after the heal: %v, want it closed", err)
		}
	}
	if err := roundTrip(dial(), 10*time.Second); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
}
