// Package freeport finds free TCP ports on the loopback interface for the
// throwaway servers that tests and the load harness start (coordinator
// processes, PostgreSQL).
package freeport
