package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// fleet is the real members of a run: client.Consumers of a group of their
// own ("real", of the run's stream prefix) over real shard streams in the
// run's Redis, fed by a client.Producer. Their heartbeats go through a
// proxy that sends each request to a randomly chosen live coordinator.
// Each member handles entries slowly, and now and then shuts down
// gracefully (context cancelled: it drains and leaves) or crashes (its
// Redis and HTTP connections fail at once, what it was handling is cut
// short) and comes back as a new process with a new id.
//
// The handling oracle checks, per entry, that no two processes handled it
// at overlapping times, and, per key, that the first deliveries handled by
// one process in a row come in stream order; after the heal phase every
// entry written must have been handled.
type fleet struct {
	r      *run
	prefix string
	proxy  *http.Server
	base   string

	mu       sync.Mutex
	rng      *rand.Rand
	handled  map[string][]handling // stream/id → handlings
	written  map[string]bool       // stream/id of every acknowledged XADD
	procs    int                   // processes started
	counters map[string]int
}

// handling is one handler call of one process: [start, end), cut short at
// the crash when the process crashed meanwhile.
type handling struct {
	proc       string
	key        string
	stream, id string
	deliveries int64
	start, end time.Duration
	complete   bool
}

// proc is one running consumer process.
type proc struct {
	id      string
	cancel  context.CancelFunc
	dead    chan struct{} // closed at the crash
	crashAt time.Duration
	rdb     *redis.Client
	done    chan error
}

const realGroup = "real"

// discard drops the real consumers' logs (the run's log has their faults).
var discard = slog.New(slog.DiscardHandler)

// quietRedis drops go-redis's own log lines (dial failures while Redis is
// down are part of the faults).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// silenceRedis sets quietRedis as go-redis's logger, once per process:
// go-redis's SetLogger writes a plain global, and runs started at once
// (TestChaosShort's stores) would race on it.
var silenceRedis = sync.OnceFunc(func() { redis.SetLogger(quietRedis{}) })

func newFleet(r *run) (*fleet, error) {
	silenceRedis()
	f := &fleet{r: r, prefix: r.key.StreamPrefix, rng: rand.New(rand.NewPCG(uint64(r.opts.Seed), 0xc0)),
		handled: map[string][]handling{}, written: map[string]bool{}, counters: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			f.mu.Lock()
			_, base, ok := r.cluster.pick(f.rng)
			f.mu.Unlock()
			if !ok {
				base = "http://127.0.0.1:1" + contract.BasePath // nothing up: the request fails
			}
			u, _ := pr.In.URL.Parse(base)
			pr.Out.URL.Scheme, pr.Out.URL.Host = u.Scheme, u.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	f.proxy = &http.Server{Handler: rp, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = f.proxy.Serve(ln) }()
	f.base = "http://" + ln.Addr().String() + contract.BasePath
	return f, nil
}

func (f *fleet) count(kind string) {
	f.mu.Lock()
	f.counters[kind]++
	f.mu.Unlock()
}

// run creates the group, writes records and runs n members through their
// faults until ctx ends, then keeps n members running until every written
// entry was handled (or healed is over) and stops them gracefully.
func (f *fleet) run(ctx, healed context.Context, n int) {
	admin := client.NewCoordinator(f.base, client.WithBasicAuth("admin", "password"))
	if _, err := admin.CreateGroup(ctx, f.prefix, realGroup, 4, "coord-chaos"); err != nil {
		f.r.log.add(f.r.now(), "", "real group not created: "+err.Error())
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.produce(ctx) })
	var mu sync.Mutex
	var running []*proc
	for i := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(f.r.opts.Seed), uint64(1000+i)))
			p := f.start()
			for {
				select {
				case <-ctx.Done():
					mu.Lock()
					running = append(running, p)
					mu.Unlock()
					return
				case <-time.After(time.Duration(2000+rng.IntN(4000)) * time.Millisecond):
				}
				if rng.IntN(2) == 0 {
					f.stop(p)
				} else {
					f.crash(p)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(200+rng.IntN(1500)) * time.Millisecond):
				}
				p = f.start()
			}
		})
	}
	wg.Wait()
	for !f.allHandled() && healed.Err() == nil {
		select {
		case <-healed.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, p := range running {
		f.stop(p)
	}
	f.proxy.Close()
}

// produce writes keyed records (20 keys, a sequence number each) at about
// 100 a second until ctx ends.
func (f *fleet) produce(ctx context.Context) {
	rdb := redis.NewClient(&redis.Options{Addr: f.r.redis.Addr, MaxRetries: -1})
	defer rdb.Close()
	p, err := client.NewProducer(client.ProducerConfig{Coordinator: client.NewCoordinator(f.base, client.WithBasicAuth("admin", "password")),
		Redis: rdb, StreamPrefix: f.prefix, Group: realGroup})
	if err != nil {
		return
	}
	seq := 0
	for ctx.Err() == nil {
		var recs []client.Record
		for range 10 {
			recs = append(recs, client.Record{Key: fmt.Sprintf("k%02d", seq%20), Values: map[string]any{"seq": seq}})
			seq++
		}
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		for _, res := range p.PublishBatch(wctx, recs) {
			if res.Err == nil {
				f.mu.Lock()
				f.written[fmt.Sprintf("%s:%d/%s", f.prefix, res.Shard, res.ID)] = true
				f.mu.Unlock()
			} else {
				f.count("real record not written")
			}
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// start starts a new consumer process.
func (f *fleet) start() *proc {
	f.mu.Lock()
	f.procs++
	n := f.procs
	f.mu.Unlock()
	p := &proc{id: fmt.Sprintf("real-%03d", n), dead: make(chan struct{}), done: make(chan error, 1)}
	p.rdb = redis.NewClient(&redis.Options{Addr: f.r.redis.Addr, MaxRetries: -1})
	hc := &http.Client{Timeout: time.Second, Transport: deadTransport{p.dead, http.DefaultTransport}}
	rng := rand.New(rand.NewPCG(uint64(f.r.opts.Seed), uint64(n)))
	var rmu sync.Mutex
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{
			Coordinator:  client.NewCoordinator(f.base, client.WithHTTPClient(hc)),
			StreamPrefix: f.prefix, Group: realGroup, MemberID: p.id, LeaveTimeout: 5 * time.Second,
			Logger: discard,
		},
		Redis: p.rdb, Workers: 3, BatchSize: 20, ClaimMinIdle: time.Second, MaxDeliveries: 1000,
		Handler: func(ctx context.Context, m client.Message) error {
			rmu.Lock()
			work := time.Duration(rng.IntN(30)) * time.Millisecond
			rmu.Unlock()
			h := handling{proc: p.id, key: m.Key, stream: m.Stream, id: m.ID, deliveries: m.Deliveries, start: f.r.now()}
			select {
			case <-p.dead:
				return errors.New("crashed")
			default:
			}
			select {
			case <-time.After(work):
			case <-ctx.Done():
			case <-p.dead:
			}
			h.end = f.r.now()
			select {
			case <-p.dead: // cut short by the crash
				h.end = min(h.end, p.crashAt)
			default:
				h.complete = ctx.Err() == nil
			}
			f.mu.Lock()
			f.handled[m.Stream+"/"+m.ID] = append(f.handled[m.Stream+"/"+m.ID], h)
			f.mu.Unlock()
			if !h.complete {
				return errors.New("not handled")
			}
			return nil
		},
	})
	if err != nil {
		p.done <- err
		return p
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.done <- c.Run(ctx) }()
	f.r.log.add(f.r.now(), p.id, "real consumer starts")
	return p
}

// stop shuts p down gracefully and waits for it.
func (f *fleet) stop(p *proc) {
	f.count("real consumer graceful shutdown")
	f.r.log.add(f.r.now(), p.id, "real consumer: graceful shutdown")
	if p.cancel != nil {
		p.cancel()
	}
	if err := <-p.done; err != nil {
		f.r.log.add(f.r.now(), p.id, "real consumer: Run returned "+err.Error())
	}
	_ = p.rdb.Close()
}

// crash kills p: its connections fail from now on and what it handles is
// cut short; its Run is left to end on its own.
func (f *fleet) crash(p *proc) {
	f.count("real consumer crash")
	p.crashAt = f.r.now()
	close(p.dead)
	f.r.log.add(p.crashAt, p.id, "real consumer: crash")
	_ = p.rdb.Close()
	if p.cancel != nil {
		p.cancel()
	}
}

// allHandled reports whether every written entry was handled completely.
func (f *fleet) allHandled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range f.written {
		if !slices.ContainsFunc(f.handled[id], func(h handling) bool { return h.complete }) {
			return false
		}
	}
	return true
}

// check returns the handling oracle's violations and the run's figures.
func (f *fleet) check() (vs []Violation, figures string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	concurrent, unhandled, orderBreaks, handlings := 0, 0, 0, 0
	byKey := map[string][]handling{} // stream/key → handlings
	for id, hs := range f.handled {
		handlings += len(hs)
		for i, a := range hs {
			for _, b := range hs[i+1:] {
				if a.proc != b.proc && a.start < b.end && b.start < a.end {
					concurrent++
					vs = append(vs, Violation{Kind: "double handling", At: max(a.start, b.start), Members: []string{a.proc, b.proc},
						Text: fmt.Sprintf("entry %s handled by %s (%s–%s) and %s (%s–%s)", id, a.proc, fmtOffset(a.start), fmtOffset(a.end), b.proc, fmtOffset(b.start), fmtOffset(b.end))})
				}
			}
			byKey[a.stream+"/"+a.key] = append(byKey[a.stream+"/"+a.key], a)
		}
	}
	for id := range f.written {
		if !slices.ContainsFunc(f.handled[id], func(h handling) bool { return h.complete }) {
			unhandled++
		}
	}
	if unhandled > 0 {
		vs = append(vs, Violation{Kind: "unhandled", At: f.r.now(), Text: fmt.Sprintf("%d of %d written entries never handled", unhandled, len(f.written))})
	}
	// Within a tenure (handlings of one key by one process in a row), first
	// deliveries come in stream order, unless a live reset moved the
	// shard back in between (liveops.go).
	for k, hs := range byKey {
		slices.SortFunc(hs, func(a, b handling) int { return cmp.Compare(a.start, b.start) })
		for i := 1; i < len(hs); i++ {
			a, b := hs[i-1], hs[i]
			if a.proc == b.proc && a.deliveries == 1 && b.deliveries == 1 && streamIDLess(b.id, a.id) && !f.r.live.across(a.stream, a.start, b.start) {
				orderBreaks++
				vs = append(vs, Violation{Kind: "key order", At: b.start, Members: []string{b.proc},
					Text: fmt.Sprintf("%s: %s handled %s after %s", k, b.proc, b.id, a.id)})
			}
		}
	}
	return vs, fmt.Sprintf("real consumers: %d processes, %d entries written, %d handler calls, %d entries handled concurrently by two processes, %d per-key order breaks, %d never handled",
		f.procs, len(f.written), handlings, concurrent, orderBreaks, unhandled)
}

// streamIDLess compares two stream entry ids "ms-seq".
func streamIDLess(a, b string) bool {
	var am, as, bm, bs int64
	_, _ = fmt.Sscanf(a, "%d-%d", &am, &as)
	_, _ = fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return am < bm || (am == bm && as < bs)
}

// deadTransport fails every request once dead is closed: a crashed
// process sends nothing.
type deadTransport struct {
	dead <-chan struct{}
	next http.RoundTripper
}

func (t deadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-t.dead:
		return nil, errors.New("the process crashed")
	default:
		return t.next.RoundTrip(req)
	}
}
