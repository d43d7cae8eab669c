package httpapi_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// Over HTTP, a heartbeat that finds its group's queue full is answered
// 200 with status RETRY at once and counted in heartbeat_shed_total and
// heartbeat_total{status="RETRY"}; the queued one is answered normally
// once the actor moves on. The group is created through another
// coordinator on the same store, so that the first heartbeat here starts
// its actor, which is held in its load while that heartbeat waits in the
// mailbox.
func TestHeartbeatShedOverHTTP(t *testing.T) {
	backend := coordtest.Memory()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	coordtest.Start(t, coordtest.Options{Backend: backend, ID: "writer"}).Admin().Create(key, 4)

	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "e2e")
	c := coordtest.Start(t, coordtest.Options{Backend: backend, Wrap: coordtest.NewFaults,
		Actors: func(o *actors.Options) { o.MaxQueuedHeartbeats, o.Observer = 1, m },
		API:    func(o *httpapi.Options) { o.Runtime = httpapi.ObserveRuntime(o.Runtime, m) }})
	entered, release := c.Faults().Hold(faultstore.CallLoad)
	defer release()
	queued := make(chan error, 1)
	held := membersim.New("m-queued", nil)
	go func() {
		resp, err := membersim.Heartbeat(t.Context(), c.HTTP.Client(), c.Base, key, held)
		if err == nil && resp.Status != contract.StatusOK {
			err = errors.New("status " + string(resp.Status))
		}
		queued <- err
	}()
	<-entered

	shed := c.Member(key, "m-shed")
	hb := shed.Heartbeat()
	if hb.Status != contract.StatusRetry || hb.MemberID != "m-shed" || hb.HeartbeatIntervalMs != c.Settings.HeartbeatInterval.Milliseconds() {
		t.Errorf("heartbeat over the bound: %+v, want RETRY", hb)
	}
	if n := counted(t, reg, "heartbeat_shed_total", nil); n != 1 {
		t.Errorf("heartbeat_shed_total = %v, want 1", n)
	}
	if n := counted(t, reg, "heartbeat_total", map[string]string{"status": string(contract.StatusRetry)}); n != 1 {
		t.Errorf(`heartbeat_total{status="RETRY"} = %v, want 1 (the shed heartbeat)`, n)
	}
	release()
	if err := <-queued; err != nil {
		t.Errorf("queued heartbeat: %v, want OK", err)
	}
	if hb := shed.Heartbeat(); hb.Status != contract.StatusOK {
		t.Errorf("heartbeat once the queue drained: %+v, want OK", hb)
	}
}

// counted returns the sum of the series of the counter name (without the
// namespace) that carry every label of labels; 0 when there is none.
func counted(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != metrics.Namespace+"_"+name {
			continue
		}
		for _, m := range f.Metric {
			missing := len(labels)
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					missing--
				}
			}
			if missing == 0 {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
