package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The registry read through client_golang's testutil, as an operator's
// scrape would see it: a join and its acknowledgement count two OK
// heartbeats, and the group epochs are exported under their docs/protocol.md §10.1 names.
func TestJoinSeenThroughTestutil(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	resp := h.heartbeat(orders, hb{member: "m-a"})
	h.heartbeat(orders, hb{member: "m-a", epoch: resp.MemberEpoch, owned: resp.Assignment.AssignedShards})

	const want = `
# HELP redis_stream_coord_heartbeat_total Handled member heartbeats by response status.
# TYPE redis_stream_coord_heartbeat_total counter
redis_stream_coord_heartbeat_total{coordinator="coord-test",group="billing",status="OK",stream="orders"} 2
`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want), "redis_stream_coord_heartbeat_total"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"redis_stream_coord_group_epoch", "redis_stream_coord_assignment_epoch"} {
		if n, err := testutil.GatherAndCount(h.reg, name); err != nil || n != 1 {
			t.Fatalf("%s: %d series, err %v", name, n, err)
		}
	}
}
