package freeport

import "net"

// Loopback asks the kernel for a loopback port that is free now. Another
// process may take it before the caller binds it: callers that must not
// fail retry on another port.
func Loopback() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
