package main

import (
	"fmt"
	"net"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// adminAuth is the default admin principal's Basic credential.
var adminAuth = basicAuth("admin", "password")

// redisStoreYAML configures the Redis store at addr under prefix.
func redisStoreYAML(addr, prefix string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("  store: {type: redis, key-prefix: %q}\n  redis: {host: %q, port: %s}\n", prefix, host, port)
}

// startOnRedis runs a coordinator called id, listening on a free loopback
// port, with the Redis store on the shared Redis under keyPrefix and the
// further lines extra of its coordinator tree (each indented two spaces);
// it returns its base URL.
func startOnRedis(t *testing.T, id, keyPrefix, extra string) string {
	t.Helper()
	base, _ := start(t, "-config", writeConfig(t, "coordinator:\n  id: "+id+"\n  server: {address: \"127.0.0.1:0\"}\n"+
		redisStoreYAML(testredis.SharedAddr, keyPrefix)+extra))
	return base
}
