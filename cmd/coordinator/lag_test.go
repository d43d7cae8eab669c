package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// Without anyone reading /offsets, a Redis-backed coordinator exports each
// group's lag, pending and dead-letter count (the alerts' inputs), and the
// series move when entries are produced and dead-lettered. The two groups
// of the prefix share its dead-letter stream: each counts the entries it
// dead-lettered and those naming no group, also after one is removed.
func TestLagAndDeadLetterGauges(t *testing.T) {
	t.Parallel() // a key prefix and a coordinator of its own
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	base := startOnRedis(t, "lag-it", prefix+":coord", "  streams: {provisioning-enabled: true}\n  monitoring: {offset-cache-ttl: 10ms}\n")
	for _, g := range []string{"billing", "shipping"} {
		createGroup(t, base+"/coord/v1", group.Key{StreamPrefix: prefix, ConsumerGroup: g}, 2)
	}
	dlq := contract.DeadLetterStream(prefix)
	t.Cleanup(func() { rdb.Del(t.Context(), dlq) })
	for i := range 3 {
		rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: contract.StreamKey(prefix, i%2), Values: []any{"payload", i}})
	}
	billing := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: contract.DeadLetterFields(contract.StreamKey(prefix, 0), "1-1", "billing", 5, "boom", map[string]any{"payload": "x"})}).Val()
	rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: []any{"stream", contract.StreamKey(prefix, 0), "id", "1-2", "field:payload", "y"}}) // names no group
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

// The lag refresher reads a shard whose stream does not exist once, then
// only checks that it exists (EXISTS, every few rounds), and reads it again
// once it appears: idle groups without streams cost no shard reads between
// checks. Its commands and the age of its last round are exported.
func TestLagRefresherSkipsMissingStreams(t *testing.T) {
	t.Parallel() // a key prefix and a coordinator of its own; most of it waits for the refresher's 1 s rounds
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	base := startOnRedis(t, "lag-missing", prefix+":coord", "  monitoring: {offset-cache-ttl: 10ms}\n")
	for _, g := range []string{"a", "b"} {
		createGroup(t, base+"/coord/v1", group.Key{StreamPrefix: prefix, ConsumerGroup: g}, 4)
	}
	counter := func(kind string) int {
		_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
		prefix := `redis_stream_coord_lag_refresh_commands_total{coordinator="lag-missing",kind="` + kind + `"} `
		for _, l := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(l, prefix); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no %s series", prefix)
		return 0
	}
	eventually.True(t, "a round read the 8 shards", func() bool { return counter("observe") >= 3*8 })
	read := counter("observe")
	checks := counter("exists")
	eventually.True(t, "the missing streams checked again", func() bool { return counter("exists") >= checks+8 })
	if n := counter("observe"); n != read {
		t.Errorf("%d shard read commands after the first round, want none", n-read)
	}
	rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: contract.StreamKey(prefix, 2), Values: []any{"payload", 1}})
	eventually.True(t, "the new stream read (by both groups)", func() bool { return counter("observe") >= read+3*2 })
	_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
	if !strings.Contains(body, `redis_stream_coord_lag_refresh_age_seconds{coordinator="lag-missing"} `) {
		t.Error("no lag_refresh_age_seconds series")
	}
}
