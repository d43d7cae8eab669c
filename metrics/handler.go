package metrics

import (
	"bytes"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves g's series in the Prometheus exposition formats. A scrape
// builds every series it sends, so scrapes are gathered one at a time (the
// coordinator's memory does not grow with the number of scrapers), and a
// scrape that arrives while another one asking for the same format
// (Accept and Accept-Encoding) is being gathered is sent that one's answer
// instead of gathering again: N scrapers at once cost one gather and one
// encoding, and an answer is at most one gather old. A scrape that waits
// gives up when its client does.
func Handler(g prometheus.Gatherer) http.Handler {
	return &scrapes{
		serve:    promhttp.HandlerFor(g, promhttp.HandlerOpts{}),
		one:      make(chan struct{}, 1),
		gathered: map[string]*scrape{},
	}
}

// scrapes is the Handler.
type scrapes struct {
	serve http.Handler
	one   chan struct{} // held by the scrape gathering
	mu    sync.Mutex
	// gathered is the scrape being gathered, by format, while it holds one.
	gathered map[string]*scrape
	// joined counts the scrapes waiting for another's answer.
	joined atomic.Int32
}

// scrape is one gather; answer is set before done is closed.
type scrape struct {
	done   chan struct{}
	answer *scrapeAnswer
}

func (s *scrapes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	format := r.Header.Get("Accept") + "\n" + r.Header.Get("Accept-Encoding")
	s.mu.Lock()
	joined := s.gathered[format]
	s.mu.Unlock()
	if joined != nil {
		s.joined.Add(1)
		defer s.joined.Add(-1)
		select {
		case <-joined.done:
			joined.answer.writeTo(w)
		case <-r.Context().Done():
		}
		return
	}
	select {
	case s.one <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	sc := &scrape{done: make(chan struct{}), answer: &scrapeAnswer{header: http.Header{}, status: http.StatusOK}}
	s.mu.Lock()
	s.gathered[format] = sc
	s.mu.Unlock()
	s.serve.ServeHTTP(sc.answer, r)
	s.mu.Lock()
	delete(s.gathered, format)
	s.mu.Unlock()
	close(sc.done)
	<-s.one
	sc.answer.writeTo(w)
}

// scrapeAnswer is one gather's whole answer, kept to be sent to every
// scraper that joined it (writeTo) once the gather ends. It is no
// pass-through recorder (the HTTP edge's statusRecorder): there is no one
// writer below it, the answer goes to several after it is complete.
type scrapeAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *scrapeAnswer) Header() http.Header         { return a.header }
func (a *scrapeAnswer) Write(p []byte) (int, error) { return a.body.Write(p) }
func (a *scrapeAnswer) WriteHeader(status int)      { a.status = status }

// writeTo sends the answer to w.
func (a *scrapeAnswer) writeTo(w http.ResponseWriter) {
	maps.Copy(w.Header(), a.header)
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body.Bytes())
}
