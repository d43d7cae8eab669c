package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
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

// Scrapes that arrive while another of their format is being gathered
// share its answer (one gather, the same bytes); a scrape of another
// format waits for the gather and runs its own; a waiting scrape returns
// when its client gives up.
func TestHandlerGathersOneScrapeAtATime(t *testing.T) {
	g := &blockingGatherer{release: make(chan struct{})}
	h := Handler(g)
	scrape := func(accept string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.Header.Set("Accept", accept)
		h.ServeHTTP(rec, r)
		return rec
	}
	const text, protobuf = "text/plain", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
	var wg sync.WaitGroup
	answers := make([]*httptest.ResponseRecorder, 4)
	wg.Go(func() { answers[0] = scrape(text) })
	eventually.True(t, "the first scrape gathering", func() bool { return g.calls.Load() == 1 })
	for i := range 2 {
		wg.Go(func() { answers[1+i] = scrape(text) })
	}
	wg.Go(func() { answers[3] = scrape(protobuf) })
	eventually.True(t, "two scrapes joined the gather", func() bool { return h.(*scrapes).joined.Load() == 2 })
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
	for i, a := range answers {
		if a.Code != http.StatusOK || a.Header().Get("Content-Type") == "" {
			t.Errorf("scrape %d: %d %v", i, a.Code, a.Header())
		}
	}
	if answers[1].Header().Get("Content-Type") != answers[0].Header().Get("Content-Type") || answers[3].Header().Get("Content-Type") == answers[0].Header().Get("Content-Type") {
		t.Errorf("content types %q, %q, %q", answers[0].Header().Get("Content-Type"), answers[1].Header().Get("Content-Type"), answers[3].Header().Get("Content-Type"))
	}
	if g.calls.Load() != 2 || g.most.Load() != 1 {
		t.Errorf("%d gathers, at most %d at once; want 2 (one per format), one at a time", g.calls.Load(), g.most.Load())
	}
}
