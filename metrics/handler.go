package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves g's series in the Prometheus exposition formats, one
// scrape at a time: a scrape builds every series it sends, so concurrent
// scrapes would each hold a copy (the coordinator's memory would grow with
// the number of scrapers). A scrape that waits for another gives up when
// its client does.
func Handler(g prometheus.Gatherer) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	one := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case one <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-one }()
		h.ServeHTTP(w, r)
	})
}
