package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
)

// blockingGatherer counts the gathers in progress (and the most at once)
// and blocks each until release is closed.
type blockingGatherer struct {
	calls, active, most atomic.Int32
	release             chan struct{}
}

func (g *blockingGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.calls.Add(1)
	n := g.active.Add(1)
	defer g.active.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	<-g.release
	return nil, nil
}

// Concurrent scrapes are served one at a time, and a scrape waiting for
// another returns when its client gives up.
func TestHandlerServesOneScrapeAtATime(t *testing.T) {
	g := &blockingGatherer{release: make(chan struct{})}
	h := Handler(g)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != http.StatusOK {
				t.Errorf("scrape: %d", rec.Code)
			}
		})
	}
	eventually.True(t, "the first scrape gathering", func() bool { return g.calls.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan struct{})
	go func() {
		defer close(gaveUp)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx))
	}()
	cancel()
	<-gaveUp
	close(g.release)
	wg.Wait()
	if g.calls.Load() != 3 || g.most.Load() != 1 {
		t.Errorf("%d gathers, at most %d at once; want 3, one at a time", g.calls.Load(), g.most.Load())
	}
}
