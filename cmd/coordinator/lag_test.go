package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testredis"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// Without anyone reading /offsets, a Redis-backed coordinator exports each
// group's lag, pending and dead-letter count (the alerts' inputs), and the
// series move when entries are produced and dead-lettered.
func TestLagAndDeadLetterGauges(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	host, port, _ := net.SplitHostPort(rdb.Options().Addr)
	base, _ := start(t, "-config", writeConfig(t, fmt.Sprintf(`coordinator:
  id: lag-it
  server: {address: "127.0.0.1:0"}
  store: {type: redis, key-prefix: %q}
  redis: {host: %q, port: %s}
  streams: {provisioning-enabled: true}
  monitoring: {offset-cache-ttl: 10ms}
`, prefix+":coord", host, port)))
	if code, body := send(t, http.MethodPost, base+"/coord/v1/streams/"+prefix+"/groups/billing", `{"requestedBy":"t","initialShardCount":2}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	t.Cleanup(func() { rdb.Del(t.Context(), streams.DeadLetterStream(prefix)) })
	for i := range 3 {
		rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: streams.StreamKey(prefix, i%2), Values: []any{"payload", i}})
	}
	rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: streams.DeadLetterStream(prefix), Values: []any{"stream", streams.StreamKey(prefix, 0), "id", "1-1", "field:payload", "x"}})
	labels := fmt.Sprintf(`{coordinator="lag-it",group="billing",stream=%q}`, prefix)
	eventually.True(t, "lag 3, pending 0, one dead letter", func() bool {
		_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
		return strings.Contains(body, "redis_stream_coord_group_lag"+labels+" 3\n") &&
			strings.Contains(body, "redis_stream_coord_group_pending"+labels+" 0\n") &&
			strings.Contains(body, "redis_stream_coord_dead_letter_entries"+labels+" 1\n")
	})
}
