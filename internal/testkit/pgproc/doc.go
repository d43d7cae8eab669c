// Package pgproc runs a throwaway PostgreSQL server: initdb into a
// temporary directory and postgres on a free loopback port, trust
// authentication, user and database postgres. The load harness runs its
// PostgreSQL phases on one so that the server's WAL position moves for
// the harness's writes alone.
//
// The binaries are the newest /usr/lib/postgresql/<version>/bin. PostgreSQL
// refuses to run as root, so when the caller is root both initdb and
// postgres run as the OS user postgres.
package pgproc
