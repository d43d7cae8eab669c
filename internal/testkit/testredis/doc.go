// Package testredis gives tests Redis servers: the shared server every
// test may use with its own key prefix (Shared, Prefix), throwaway
// redis-server processes on free loopback ports that a test may kill and
// restart (Start, on internal/testkit/redisproc), and throwaway three-node Redis
// Clusters (StartCluster).
//
// Tests never flush: isolation comes from unique key prefixes, and
// throwaway servers keep nothing on disk (--save "" --appendonly no).
// When Redis or the redis-server binary is missing the test fails, unless
// COORD_SKIP_INTEGRATION=1 is set, in which case it is skipped.
package testredis
