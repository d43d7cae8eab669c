// Package netlimit caps the connections one client address may hold open
// on a server's listener (coordinator.server.max-connections-per-address,
// docs/security.md "Connection limits").
//
// It owns one thing: a net.Listener wrapper (Listen) that counts the open
// connections of each remote IP address and closes a connection beyond the
// cap as soon as it is accepted, before a byte is read or written, so the
// client sees the connection closed (or reset) and no HTTP answer. It wraps
// the raw TCP listener, under TLS: a refused connection costs no handshake.
// A connection frees its slot when it is closed, however often Close is
// called.
//
// Timeouts on the connections it lets through (reading headers and body,
// writing, idling between keep-alive requests) are the http.Server's, not
// this package's.
package netlimit
