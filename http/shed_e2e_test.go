package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/membersim"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// Over HTTP, a heartbeat that finds its group's queue full is answered
// 200 with status RETRY at once and counted in heartbeat_shed_total; the
// queued one is answered normally once the actor moves on.
func TestHeartbeatShedOverHTTP(t *testing.T) {
	var block atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	settings := group.DefaultSettings()
	logger := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "e2e")
	store := memory.New()
	coord, err := actors.New(actors.Options{Store: store, Settings: settings, GroupCommit: true, MaxQueuedHeartbeats: 1,
		Observer: m, Logger: logger, BeforeHandle: func(_ group.Key, msg any) {
			if actors.MessageType(msg) == actors.MsgHeartbeat && block.CompareAndSwap(true, false) {
				close(entered)
				<-release
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(httpapi.Options{Coordinator: httpapi.ObserveCoordinator(coord, m), Settings: settings, CoordinatorID: "e2e", Logger: logger})
	srv := serve(t, api, coord, store)
	c := &cluster{t: t, srv: srv, coord: coord, settings: settings}
	c.createGroup(4)

	post := func(id string) (int, contract.HeartbeatResponse) {
		req := membersim.New(id, nil).Request()
		body, err := json.Marshal(req)
		if err != nil {
			t.Error(err)
		}
		resp, err := srv.Client().Post(srv.URL+"/coord/v1/streams/orders/groups/workers/members/"+id+"/heartbeat", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Error(err)
			return 0, contract.HeartbeatResponse{}
		}
		defer resp.Body.Close()
		var hb contract.HeartbeatResponse
		if err := json.NewDecoder(resp.Body).Decode(&hb); err != nil {
			t.Error(err)
		}
		return resp.StatusCode, hb
	}
	block.Store(true)
	queued := make(chan contract.HeartbeatResponse, 1)
	go func() { _, hb := post("m-queued"); queued <- hb }() // blocks the actor while it is handled
	<-entered

	status, hb := post("m-shed")
	if status != http.StatusOK || hb.Status != contract.StatusRetry || hb.MemberID != "m-shed" || hb.HeartbeatIntervalMs != settings.HeartbeatInterval.Milliseconds() {
		t.Errorf("heartbeat over the bound: %d %+v, want 200 RETRY", status, hb)
	}
	if n := shedTotal(t, reg); n != 1 {
		t.Errorf("heartbeat_shed_total = %v, want 1", n)
	}
	close(release)
	if hb := <-queued; hb.Status != contract.StatusOK {
		t.Errorf("queued heartbeat: %+v, want OK", hb)
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
