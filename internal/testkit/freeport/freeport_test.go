package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestLoopbackPortCanBeBound(t *testing.T) {
	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d: %v", port, err)
	}
	ln.Close()
}
