package testredis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis/go-redis/v9"
)

// CLI is the redis-cli executable used to create clusters.
const CLI = "/usr/bin/redis-cli"

// Cluster is a throwaway Redis Cluster of masters without replicas.
type Cluster struct {
	Addrs   []string
	Servers []*Server
}

// StartCluster starts n cluster-enabled servers, joins them with
// redis-cli --cluster create and waits until every node reports
// cluster_state:ok. The nodes are killed when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if _, err := os.Stat(CLI); err != nil {
		Unavailable(t, "redis-cli binary: %v", err)
	}
	c := &Cluster{}
	for i := range n {
		dir := t.TempDir()
		s := start(t, dir,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(i)+".conf"),
			"--cluster-node-timeout", "5000")
		c.Servers = append(c.Servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(CLI, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, addr := range c.Addrs {
		eventually.True(t, "cluster_state:ok on "+addr, func() bool { return clusterOK(context.Background(), addr) == nil })
	}
	return c
}

// Client returns a cluster client for c, closed at cleanup.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// clusterOK checks that the node at addr reports cluster_state:ok.
func clusterOK(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return fmt.Errorf("cluster not ready")
	}
	return nil
}
