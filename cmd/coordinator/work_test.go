package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// A group created with "assignor": "work" gets the lag refresher's
// measures: its assignments view shows each shard's weight, a shard with
// a backlog weighing more than an idle one. A count group shows none.
func TestWorkGroupIsMeasured(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	base := startOnRedis(t, "work-it", prefix+":coord", "  streams: {provisioning-enabled: true}\n  monitoring: {offset-cache-ttl: 10ms}\n")
	for g, assignor := range map[string]string{"billing": "work", "shipping": "count"} {
		body := fmt.Sprintf(`{"requestedBy":"t","initialShardCount":4,"assignor":%q}`, assignor)
		if code, answer := send(t, http.MethodPost, base+"/coord/v1/streams/"+prefix+"/groups/"+g, body); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", g, code, answer)
		}
	}
	for i := range 300 {
		rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: contract.StreamKey(prefix, 0), Values: []any{"payload", i}})
	}
	type view struct {
		Assignor     string    `json:"assignor"`
		ShardWeights []float64 `json:"shardWeights"`
	}
	read := func(g string) view {
		var v view
		_, body := send(t, http.MethodGet, base+"/coord/v1/monitoring/streams/"+prefix+"/groups/"+g+"/assignments", "")
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("assignments of %s: %v: %s", g, err, body)
		}
		return v
	}
	eventually.True(t, "billing weighs its shards, shard 0 (300 entries behind) most", func() bool {
		v := read("billing")
		return v.Assignor == "work" && len(v.ShardWeights) == 4 && v.ShardWeights[0] > v.ShardWeights[1]
	})
	if v := read("shipping"); v.Assignor != "count" || v.ShardWeights != nil {
		t.Fatalf("count group: %+v", v)
	}
}
