package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// benchFleet is one settled group of a coordinator whose API is wired as
// cmd/coordinator wires it (benchOptions): every member owns its target
// and heartbeats the same body each time.
type benchFleet struct {
	bodies []string // steady heartbeat body of member i
}

// benchOptions are o with the API wired as cmd/coordinator wires it:
// metrics observing requests and heartbeats, the no-op route on.
func benchOptions(o coordtest.Options) coordtest.Options {
	m := metrics.New(prometheus.NewRegistry(), "bench")
	o.Actors = func(ao *actors.Options) { ao.Observer = m }
	o.API = func(ao *httpapi.Options) {
		ao.Runtime = httpapi.ObserveRuntime(ao.Runtime, m)
		ao.Middleware = []httpapi.Middleware{httpapi.ObserveRequests(m)}
		ao.BenchEndpoints = true
	}
	return o
}

// newBenchFleet creates the group of members members and as many shards
// on c and heartbeats them until settled.
func newBenchFleet(b *testing.B, c *coordtest.Server, members int) *benchFleet {
	b.Helper()
	ctx := context.Background()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	if _, err := c.Actors.CreateGroup(ctx, key, contract.CreateRequest{InitialShardCount: &members, RequestedBy: "bench"}, false); err != nil {
		b.Fatal(err)
	}
	ms, err := membersim.SettleAll(members, 20, func(req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
		return c.Actors.Heartbeat(ctx, key, req)
	})
	if err != nil {
		b.Fatal(err)
	}
	f := &benchFleet{bodies: make([]string, members)}
	for i, mem := range ms {
		body, err := json.Marshal(mem.Request())
		if err != nil {
			b.Fatal(err)
		}
		f.bodies[i] = string(body)
	}
	return f
}

// paths returns route's path (with %s for the member id) of every member.
func (f *benchFleet) paths(route string) []string {
	ps := make([]string, len(f.bodies))
	for i := range ps {
		ps[i] = fmt.Sprintf(route, fmt.Sprintf("member-%05d", i))
	}
	return ps
}

// serve posts member i's body to its path and
// fails unless the answer is 200 with a status OK.
func (f *benchFleet) serve(b *testing.B, api http.Handler, paths []string, i int) {
	req := httptest.NewRequest(http.MethodPost, paths[i], strings.NewReader(f.bodies[i]))
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"OK"`) {
		b.Fatalf("%s: %d %s", req.URL.Path, rec.Code, rec.Body)
	}
}

// cpuTime is the CPU time (user + system) this process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHeartbeatVsNoop measures the heartbeat route end to end (HTTP
// handler, metrics, actor ask, domain, commit on the memory store, answer)
// beside the no-op route of the load harness (the same stack without the
// actor), for a settled group of 1,000 members and 1,000 shards. cpu-ns/op
// is the process's CPU time per request (every goroutine, GC included):
// the P3b ratio of issue #12 is heartbeat cpu-ns/op ÷ noop cpu-ns/op.
// "serial" sends one request at a time, "parallel" 32 per core.
func BenchmarkHeartbeatVsNoop(b *testing.B) {
	c := coordtest.Start(b, benchOptions(coordtest.Options{ID: "bench"}))
	f := newBenchFleet(b, c, benchMembers)
	routes := []struct{ name, path string }{
		{"heartbeat", heartbeatRoute},
		{"noop", "/coord/v1" + strings.NewReplacer("{streamPrefix}", "orders", "{consumerGroup}", "orders-consumer", "{memberId}", "%s").Replace(contract.BenchNoopTemplate)},
	}
	for _, rt := range routes {
		f.bench(b, rt.name, c.API, f.paths(rt.path))
	}
}

const (
	// benchMembers is the bench fleet's group size.
	benchMembers = 1000
	// heartbeatRoute is the bench group's heartbeat path, %s the member.
	heartbeatRoute = "/coord/v1/streams/orders/groups/orders-consumer/members/%s/heartbeat"
)

// bench runs name/serial (one request at a time) and name/parallel (32
// callers per core) of the members' requests to paths served by api,
// reporting cpu-ns/op: the process's CPU time per request (every
// goroutine, GC included).
func (f *benchFleet) bench(b *testing.B, name string, api http.Handler, paths []string) {
	const perCore = 32
	members := len(paths)
	b.Run(name+"/serial", func(b *testing.B) {
		i := 0
		b.ReportAllocs()
		cpu := cpuTime(b)
		for b.Loop() {
			f.serve(b, api, paths, i)
			i = (i + 1) % members
		}
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run(name+"/parallel", func(b *testing.B) {
		callers := perCore * runtime.GOMAXPROCS(0)
		var next atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(perCore)
		cpu := cpuTime(b)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			// Caller k drives members k, k+callers, …
			first := int(next.Add(1)-1) % members
			for i := first; pb.Next(); {
				f.serve(b, api, paths, i)
				if i += callers; i >= members {
					i = first
				}
			}
		})
		b.StopTimer()
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	})
}
