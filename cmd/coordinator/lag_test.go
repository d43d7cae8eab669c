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
// series move when entries are produced and dead-lettered. The two groups
// of the prefix share its dead-letter stream: each counts the entries it
// dead-lettered and those naming no group, also after one is removed.
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
	for _, g := range []string{"billing", "shipping"} {
		if code, body := send(t, http.MethodPost, base+"/coord/v1/streams/"+prefix+"/groups/"+g, `{"requestedBy":"t","initialShardCount":2}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", g, code, body)
		}
	}
	dlq := streams.DeadLetterStream(prefix)
	t.Cleanup(func() { rdb.Del(t.Context(), dlq) })
	for i := range 3 {
		rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: streams.StreamKey(prefix, i%2), Values: []any{"payload", i}})
	}
	billing := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: streams.DeadLetterFields(streams.StreamKey(prefix, 0), "1-1", "billing", 5, "boom", map[string]any{"payload": "x"})}).Val()
	rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: []any{"stream", streams.StreamKey(prefix, 0), "id", "1-2", "field:payload", "y"}}) // names no group
	labels := func(g string) string { return fmt.Sprintf(`{coordinator="lag-it",group=%q,stream=%q}`, g, prefix) }
	scrapeShows := func(lines ...string) func() bool {
		return func() bool {
			_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
			for _, l := range lines {
				if !strings.Contains(body, l+"\n") {
					return false
				}
			}
			return true
		}
	}
	eventually.True(t, "lag 3, pending 0, billing's and the unattributed dead letter", scrapeShows(
		"redis_stream_coord_group_lag"+labels("billing")+" 3",
		"redis_stream_coord_group_pending"+labels("billing")+" 0",
		"redis_stream_coord_dead_letter_entries"+labels("billing")+" 2",
		"redis_stream_coord_dead_letter_entries"+labels("shipping")+" 1"))
	rdb.XDel(t.Context(), dlq, billing)
	eventually.True(t, "billing's dead letter gone", scrapeShows(
		"redis_stream_coord_dead_letter_entries"+labels("billing")+" 1",
		"redis_stream_coord_dead_letter_entries"+labels("shipping")+" 1"))
}
