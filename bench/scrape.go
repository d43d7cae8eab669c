package bench

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// scraper GETs a Prometheus endpoint every interval, as Prometheus does,
// so that the coordinator's memory is measured while it is scraped.
type scraper struct {
	url string

	mu  sync.Mutex
	res Scrapes
}

// Scrapes summarises the scrapes of a run.
type Scrapes struct {
	Count     int   `json:"count"`
	Failed    int   `json:"failed"`
	LastBytes int64 `json:"lastBytes"`
	MaxBytes  int64 `json:"maxBytes"`
}

// run scrapes at once and then every interval until ctx ends.
func (s *scraper) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.scrape(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *scraper) scrape(ctx context.Context) {
	n, err := get(ctx, s.url, io.Discard)
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.res.Failed++
		return
	}
	s.res.Count++
	s.res.LastBytes, s.res.MaxBytes = n, max(s.res.MaxBytes, n)
}

func (s *scraper) result() Scrapes {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res
}

// get copies the body of a GET of url to w and returns its length; an
// answer other than 200 is an error.
func get(ctx context.Context, url string, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(w, res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = &httpStatusError{res.StatusCode}
	}
	return n, err
}

type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string { return "HTTP " + strconv.Itoa(e.code) }

// parseMetric finds the value of a custom benchmark metric (b.ReportMetric)
// of benchmark name in `go test -bench` output.
func parseMetric(out, name, unit string) (float64, bool) {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != name && !strings.HasPrefix(f[0], name+"-")) {
			continue
		}
		for i := 1; i < len(f); i++ {
			if f[i] == unit {
				v, err := strconv.ParseFloat(f[i-1], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
