package httpapi_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/membersim"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// Over HTTP, a heartbeat that finds its group's queue full is answered
// 200 with status RETRY at once and counted in heartbeat_shed_total; the
// queued one is answered normally once the actor moves on. The group is
// created through another coordinator on the same store, so that the
// first heartbeat here starts its actor, which is held in its load while
// that heartbeat waits in the mailbox.
func TestHeartbeatShedOverHTTP(t *testing.T) {
	backend := coordtest.Memory()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	coordtest.Start(t, coordtest.Options{Backend: backend, ID: "writer"}).Admin().Create(key, 4)

	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "e2e")
	c := coordtest.Start(t, coordtest.Options{Backend: backend, Wrap: coordtest.NewFaults,
		Actors: func(o *actors.Options) { o.MaxQueuedHeartbeats, o.Observer = 1, m },
		API:    func(o *httpapi.Options) { o.Coordinator = httpapi.ObserveCoordinator(o.Coordinator, m) }})
	entered, release := c.Faults().Hold(coordtest.CallLoad)
	defer release()
	queued := make(chan error, 1)
	held := membersim.New("m-queued", nil)
	go func() {
		resp, err := membersim.Heartbeat(t.Context(), c.Server.Client(), c.Base, key, held)
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
	if n := shedTotal(t, reg); n != 1 {
		t.Errorf("heartbeat_shed_total = %v, want 1", n)
	}
	release()
	if err := <-queued; err != nil {
		t.Errorf("queued heartbeat: %v, want OK", err)
	}
	if hb := shed.Heartbeat(); hb.Status != contract.StatusOK {
		t.Errorf("heartbeat once the queue drained: %+v, want OK", hb)
	}
}

// shedTotal returns the value of the one heartbeat_shed_total series, 0
// when there is none.
func shedTotal(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == metrics.Namespace+"_heartbeat_shed_total" {
			if len(f.Metric) != 1 {
				t.Fatalf("%d heartbeat_shed_total series, want 1", len(f.Metric))
			}
			return f.Metric[0].GetCounter().GetValue()
		}
	}
	return 0
}
