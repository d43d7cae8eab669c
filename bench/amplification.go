package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScrapeFigures are the scrape scenario's figures (goals P9a–c, issue 21):
// what one default scrape of /metrics costs with Groups groups of Shards
// shards on one coordinator, and what rounds of Clients concurrent scrapes
// did to it while members heartbeated.
type ScrapeFigures struct {
	Groups  int `json:"groups"`
	Shards  int `json:"shards"`
	Clients int `json:"clients"`
	// CreateSeconds is how long creating the groups took.
	CreateSeconds float64 `json:"createSeconds"`
	// Bytes is one scrape's body as served to a client that does not ask
	// for compression; GzipBytes the same scrape gzip-encoded (what
	// Prometheus, which asks for gzip, transfers); Series its sample lines.
	Bytes     int64 `json:"bytes"`
	GzipBytes int64 `json:"gzipBytes"`
	Series    int   `json:"series"`
	// Seconds is how long that single scrape took.
	Seconds float64 `json:"seconds"`
	// AllocBytes is what the coordinator allocated per scrape (the growth
	// of go_memstats_alloc_bytes_total over back-to-back scrapes without
	// load, divided by their number): an upper bound, since background
	// work allocates too.
	AllocBytes float64 `json:"allocBytesPerScrape"`
	// Rounds of concurrent scrapes during scrape/scraped, how many of
	// their scrapes failed, the longest one and the largest body.
	Rounds     int     `json:"rounds"`
	Scrapes    int     `json:"scrapes"`
	Failed     int     `json:"failed"`
	MaxSeconds float64 `json:"maxSeconds"`
	MaxBytes   int64   `json:"maxBytes"`
}

// runScrape is the scrape amplification run (issue 21): ScrapeGroups
// groups of ScrapeShards shards, one member each, on one coordinator with
// the default metrics configuration (no per-shard or per-member series)
// and no group cap (defaults.max-groups 0, the default: with a cap, every
// create reads every group to count them, so creating 10,000 groups is
// quadratic — 3,300 groups after five minutes, then store timeouts). After the members settle it
// measures one scrape alone (size, gzip size, series, allocation), then
// the members' heartbeats in an open loop three times: scrape/warm to
// reach the steady state (unscored), scrape/quiet unscraped,
// scrape/scraped while rounds of ScrapeClients concurrent scrapes start
// every ScrapeInterval (the peak RSS of that phase is goal P9b).
func (r *Runner) runScrape(ctx context.Context) error {
	o := r.opts
	n := o.ScrapeGroups
	// Leases outlast the run: the phases compare heartbeats of settled
	// members, and no member may expire while scrapes run between them.
	s, err := r.openSession(ctx, "scrape-"+o.Store, o.Store, true, o.ScrapeShards, max(r.setupTTL(n), scrapeLeaseTTL))
	if err != nil {
		return err
	}
	defer s.close(ctx)
	fig := &ScrapeFigures{Groups: n, Shards: o.ScrapeShards, Clients: o.ScrapeClients}
	r.report.Scrape = fig
	t0 := time.Now()
	if err := s.createGroups(ctx, n, 1, o.ScrapeShards); err != nil {
		return err
	}
	fig.CreateSeconds = time.Since(t0).Seconds()
	r.logf("scrape: created %d groups of %d shards in %.1f s", n, o.ScrapeShards, fig.CreateSeconds)
	if err := r.phase(s.settle(ctx, "scrape/settle")); err != nil {
		return err
	}
	url := s.srv.Root + "/metrics"
	if err := fig.measureOne(ctx, url); err != nil {
		return err
	}
	r.logf("scrape: one scrape %.1f MB (gzip %.1f MB), %d series, %.2f s, ≤ %.1f MB allocated per scrape",
		float64(fig.Bytes)/1e6, float64(fig.GzipBytes)/1e6, fig.Series, fig.Seconds, fig.AllocBytes/1e6)
	rate := o.OpenRate
	if rate <= 0 {
		rate = float64(s.size()) / o.Interval.Seconds()
	}
	// Both phases last Duration, or long enough for scrapeRounds rounds of
	// scrapes as long as the one alone (the coordinator serves them one at
	// a time), with a fifth as margin.
	d := max(o.Duration, time.Duration(1.2*scrapeRounds*float64(o.ScrapeClients)*fig.Seconds*float64(time.Second)))
	open := func(name string) (Phase, error) {
		return s.measure(ctx, name, "open", rate, func() (*Recorder, error) {
			return openLoop(ctx, s.size(), rate, d, s.fire), nil
		})
	}
	// scrape/warm (unscored) takes the one-time costs that follow settle
	// out of both scored phases: every group's first commit after it
	// settled, the lag refresher's first round (which fills the offset
	// cache and grows the live heap to its steady size). Without it they
	// fell in scrape/quiet only, which measured a different coordinator
	// from scrape/scraped.
	if err := r.phase(open("scrape/warm")); err != nil {
		return err
	}
	if err := r.phase(open("scrape/quiet")); err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fig.scrapeRounds(sctx, url, o.ScrapeClients, o.ScrapeInterval) }()
	p, err := open("scrape/scraped")
	stop()
	<-done
	r.logf("scrape: %d rounds of %d concurrent scrapes, %d failed, longest %.2f s, largest %.1f MB",
		fig.Rounds, o.ScrapeClients, fig.Failed, fig.MaxSeconds, float64(fig.MaxBytes)/1e6)
	return r.phase(p, err)
}

// scrapeRounds is how many rounds of concurrent scrapes scrape/scraped
// lasts at least.
const scrapeRounds = 2

// scrapeLeaseTTL is the scrape scenario's member lease TTL.
const scrapeLeaseTTL = 10 * time.Minute

// measureOne scrapes url alone: once gzip-encoded, then three times as a
// plain client, the last of which gives the size, series and time.
func (f *ScrapeFigures) measureOne(ctx context.Context, url string) error {
	gz, err := scrapeOnce(ctx, url, true, false)
	if err != nil {
		return err
	}
	f.GzipBytes = gz.bytes
	const scrapes = 3
	var first, last scrapeResult
	for i := range scrapes {
		if last, err = scrapeOnce(ctx, url, false, true); err != nil {
			return err
		}
		if i == 0 {
			first = last
		}
	}
	f.Bytes, f.Series, f.Seconds = last.bytes, last.series, last.seconds
	f.AllocBytes = (last.allocTotal - first.allocTotal) / (scrapes - 1)
	return nil
}

// scrapeRounds starts a round of clients concurrent scrapes of url every
// interval (or as soon as the previous round ended, when later) until ctx
// ends; a scrape cut by the end of ctx is not counted.
func (f *ScrapeFigures) scrapeRounds(ctx context.Context, url string, clients int, interval time.Duration) {
	var mu sync.Mutex
	for ctx.Err() == nil {
		next := time.Now().Add(interval)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				// The body is counted, not kept or parsed: this process is
				// also the members' load generator, and three bodies of
				// 2.6 MB buffered and parsed at once can stall it (its open
				// loop measures from the scheduled time, so a stall of the
				// generator reads as a stall of the coordinator).
				res, err := scrapeOnce(ctx, url, false, false)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				f.Scrapes++
				if err != nil {
					f.Failed++
					return
				}
				f.MaxSeconds, f.MaxBytes = max(f.MaxSeconds, res.seconds), max(f.MaxBytes, res.bytes)
			})
		}
		wg.Wait()
		if ctx.Err() == nil {
			f.Rounds++
		}
		if !sleepUntil(ctx, next) {
			return
		}
	}
}

// scrapeResult is one scrape: body length, duration, sample lines and the
// scraped process's go_memstats_alloc_bytes_total.
type scrapeResult struct {
	bytes      int64
	seconds    float64
	series     int
	allocTotal float64
}

// scrapeOnce GETs url. With gzip it asks for a gzip-encoded body, else for
// the body as served to a client that asks for no encoding; with parse the
// body is kept and parsed for its series and allocation total, else only
// its length is measured.
func scrapeOnce(ctx context.Context, url string, gzip, parse bool) (scrapeResult, error) {
	var res scrapeResult
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return res, err
	}
	if gzip {
		req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body compressed
	} else {
		req.Header.Set("Accept-Encoding", "identity")
	}
	t0 := time.Now()
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	sink := io.Discard
	if parse {
		sink = &body
	}
	res.bytes, err = io.Copy(sink, resp.Body)
	res.seconds = time.Since(t0).Seconds()
	if err != nil {
		return res, err
	}
	if resp.StatusCode != http.StatusOK {
		return res, &httpStatusError{resp.StatusCode}
	}
	if parse {
		res.series, res.allocTotal = parseExposition(&body)
	}
	return res, nil
}

// scrapeClient has no overall timeout: a scrape of many groups may be slow,
// and the run's context bounds it.
var scrapeClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// parseExposition counts the sample lines of a text exposition and reads
// go_memstats_alloc_bytes_total (with or without labels).
func parseExposition(r io.Reader) (series int, allocTotal float64) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series++
		if rest, ok := strings.CutPrefix(line, "go_memstats_alloc_bytes_total"); ok && rest != "" && (rest[0] == '{' || rest[0] == ' ') {
			allocTotal, _ = strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		}
	}
	return series, allocTotal
}

// scrapeGoals evaluates P9a–c (issue 21) from the scrape scenario.
func (r *Report) scrapeGoals() []Goal {
	f := r.Scrape
	ok := f != nil && f.Bytes > 0
	if f == nil {
		f = &ScrapeFigures{}
	}
	quiet, okQ := r.phase("scrape/quiet")
	scraped, okS := r.phase("scrape/scraped")
	size := fmt.Sprintf("%d groups × %d shards", f.Groups, f.Shards)
	return []Goal{
		goal("P9a", "default /metrics scrape (MB), "+size, float64(f.Bytes)/1e6, 10, true, ok,
			fmt.Sprintf("%d series, gzip %.2f MB, %.2f s alone; ≤ %.1f MB allocated per scrape (%.1f× its output)",
				f.Series, float64(f.GzipBytes)/1e6, f.Seconds, f.AllocBytes/1e6, ratio(f.AllocBytes, float64(f.Bytes)))),
		goal("P9b", fmt.Sprintf("coordinator peak RSS (MiB) under rounds of %d concurrent scrapes", f.Clients), scraped.PeakRSSMB, 400, true,
			okS && f.Rounds > 0 && f.Failed == 0,
			fmt.Sprintf("%d rounds, %d scrapes, %d failed, longest %.2f s; unscraped phase %.0f MiB", f.Rounds, f.Scrapes, f.Failed, f.MaxSeconds, quiet.PeakRSSMB)),
		goal("P9c", "heartbeat p99 scraped over unscraped, open loop", ratio(scraped.Latency.P99, quiet.Latency.P99), 2, true,
			okQ && okS && quiet.Latency.P99 > 0,
			fmt.Sprintf("%.0f/s offered: p50/p99 %.2f/%.2f ms scraped ÷ %.2f/%.2f ms unscraped; coordinator %.2f vs %.2f cores",
				scraped.OfferedRate, scraped.Latency.P50, scraped.Latency.P99, quiet.Latency.P50, quiet.Latency.P99, scraped.CPUCores, quiet.CPUCores)),
	}
}
