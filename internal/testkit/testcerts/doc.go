// Package testcerts makes throwaway certificate authorities and the
// certificates they sign, in memory, for tests of TLS: nothing is
// committed, and every test gets keys of its own. A certificate is valid
// for localhost, 127.0.0.1 and ::1, both as a server and as a client
// (mutual TLS), for a day.
package testcerts
