package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// TestShardsPaused: group_shards_paused counts the paused shards as of
// the last commit, and they are no invariant violation.
func TestShardsPaused(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID)
	c := grouptest.New(t, 4)
	c.Join("A")
	res := c.Group.Pause(c.Now, c.Settings, contract.PauseRequest{Shards: []int{1, 3}, RequestedBy: "ops"})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	commit(m, c.Group)
	s := scrape(t, reg)
	key := `{group="` + c.Group.ConsumerGroup + `",stream="` + c.Group.StreamPrefix + `"}`
	if got := s["group_shards_paused"+key]; got != 2 {
		t.Errorf("group_shards_paused %v, want 2 (%v)", got, s)
	}
	if got := s["invariant_violations"+key]; got != 0 {
		t.Errorf("invariant_violations %v with paused shards", got)
	}
}
