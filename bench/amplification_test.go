package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// measureOne reads one scrape's size, series and gzip size, and the
// allocation per scrape from go_memstats_alloc_bytes_total; scrapeRounds
// counts rounds of concurrent scrapes.
func TestScrapeFigures(t *testing.T) {
	var alloc atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			fmt.Fprint(w, "12345") // stands for a compressed body
			return
		}
		fmt.Fprintf(w, "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n\ngo_memstats_alloc_bytes_total{coordinator=\"c1\"} %d\n", alloc.Add(1000))
	}))
	defer srv.Close()
	f := &ScrapeFigures{}
	if err := f.measureOne(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	if f.GzipBytes != 5 || f.Series != 2 || f.AllocBytes != 1000 || f.Bytes < 60 {
		t.Errorf("measureOne: %+v, want 5 gzip bytes, 2 series, 1000 B allocated per scrape", f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.scrapeRounds(ctx, srv.URL, 3, time.Millisecond) }()
	eventually.True(t, "ten rounds of scrapes", func() bool { return alloc.Load() >= 30_000 })
	cancel()
	<-done
	if f.Rounds < 1 || f.Scrapes < 3*f.Rounds || f.Failed != 0 || f.MaxBytes < f.Bytes {
		t.Errorf("scrapeRounds: %+v, want complete rounds of 3 scrapes", f)
	}
}
