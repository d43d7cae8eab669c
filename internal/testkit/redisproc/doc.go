// Package redisproc runs throwaway redis-server processes on free loopback
// ports: the chaos runs, the load harness (its store figures are then the
// harness's alone) and the tests' testredis all start them here.
//
// A Server keeps its port and data directory across Kill and Restart.
// Options add redis-server arguments after the defaults, which keep
// nothing on disk (--save "" --appendonly no); Durable makes every
// acknowledged write survive a kill.
package redisproc
