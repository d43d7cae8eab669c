package bench

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/membersim"
)

// Fleet is the simulated members of one group. It tracks who reads which
// shard (for the membersim.Oracle, convergence and shard moves) from the members'
// own view: a member starts and stops reading when it applies an answer.
type Fleet struct {
	api *API
	// apis, when set, spread the members over several coordinators:
	// member i sends to apis[i % len(apis)].
	apis   []*API
	key    group.Key
	group  string // key.String(): the oracle's name of the group
	shards int
	ttl    time.Duration
	// now is the current offset from the fleet's epoch, time zero of
	// every offset the fleet records (tests set their own clock).
	now    func() time.Duration
	oracle *membersim.Oracle
	sims   []*Sim

	mu      sync.Mutex
	readers map[int][]string // shard → members reading it now
	joins   []time.Duration  // measured join convergence times
	watches []*crashWatch
}

// Sim is one simulated member process. Only one goroutine drives it at a
// time; converged and lastOK may be read by others.
type Sim struct {
	ID string
	f  *Fleet
	n  int // index in the fleet
	m  *membersim.Member
	// reads holds the shards the member reads and since when.
	reads map[int]time.Duration
	// [liveFrom, liveTo) is the current window during which the member is
	// surely live (see membersim.Oracle).
	liveFrom, liveTo time.Duration
	// measureJoin: the next heartbeat is a join to measure, sent at
	// joinedAt; joinedAt is −1 when no measured join is pending.
	measureJoin bool
	joinedAt    time.Duration
	// released: the last answer made the member stop reading shards it
	// has not reported yet.
	released bool

	converged atomic.Bool  // the last answer was OK with nothing pending
	lastOK    atomic.Int64 // offset of the last OK answer
}

// crashWatch measures how long the shards of a crashed member stay unread.
type crashWatch struct {
	at     time.Duration
	unread map[int]bool
	took   time.Duration // set once every shard is read by another member
	done   bool
}

// NewFleet returns the fleet of members 0..members-1 of key, none joined.
func NewFleet(api *API, key group.Key, members, shards int, ttl time.Duration, oracle *membersim.Oracle, epoch time.Time) *Fleet {
	f := &Fleet{api: api, key: key, group: key.StreamPrefix + "/" + key.ConsumerGroup, shards: shards, ttl: ttl, oracle: oracle, readers: map[int][]string{}}
	f.now = func() time.Duration { return time.Since(epoch) }
	f.sims = make([]*Sim, members)
	for i := range f.sims {
		f.sims[i] = f.newSim(memberID(i))
		f.sims[i].n = i
	}
	return f
}

func (f *Fleet) newSim(id string) *Sim {
	return &Sim{ID: id, f: f, m: membersim.New(id, nil), reads: map[int]time.Duration{}, joinedAt: -1}
}

// fire is a fireFunc: member i heartbeats once.
func (f *Fleet) fire(ctx context.Context, i int, intended time.Time, rec *Recorder) {
	f.sims[i].Beat(ctx, intended, rec)
}

// Beat sends the member's next heartbeat, scheduled at intended, records
// it in rec and applies the answer.
func (s *Sim) Beat(ctx context.Context, intended time.Time, rec *Recorder) {
	f := s.f
	before := s.m.Owned()
	sent := f.now()
	if s.measureJoin {
		s.measureJoin, s.joinedAt = false, sent
	}
	api := f.api
	if len(f.apis) > 0 {
		api = f.apis[s.n%len(f.apis)]
	}
	resp, err := membersim.Heartbeat(ctx, api.Client, api.Base, f.key, s.m)
	done := f.now()
	rec.Observe(time.Since(intended), statusLabel(resp, err), err)
	if err != nil {
		return
	}
	switch resp.Status {
	case group.StatusOK, group.StatusRevokePending, group.StatusSyncMetadata:
		s.renew(sent)
	}
	after := s.m.Owned()
	s.released = len(before.Minus(after)) > 0
	s.track(before, after, done)
	ok := resp.Status == group.StatusOK
	s.converged.Store(ok && len(resp.Assignment.PendingShards) == 0)
	if ok {
		s.lastOK.Store(int64(done))
	}
	if s.joinedAt >= 0 && s.converged.Load() {
		f.mu.Lock()
		f.joins = append(f.joins, done-s.joinedAt)
		f.mu.Unlock()
		s.joinedAt = -1
	}
}

// statusLabel names the outcome of a heartbeat for the status counts.
func statusLabel(resp group.HeartbeatResponse, err error) string {
	if se, ok := errors.AsType[*membersim.StatusError](err); ok {
		return "HTTP " + strconv.Itoa(se.Code)
	}
	if err != nil {
		return "transport"
	}
	return string(resp.Status)
}

// renew extends the member's live window with a heartbeat the coordinator
// accepted, sent at sent.
func (s *Sim) renew(sent time.Duration) {
	if sent > s.liveTo {
		s.f.oracle.Live(s.f.group, s.ID, s.liveFrom, s.liveTo)
		s.liveFrom = sent
	}
	s.liveTo = max(s.liveTo, sent+s.f.ttl)
}

// track records the change from reading before to reading after at at.
func (s *Sim) track(before, after group.ShardSet, at time.Duration) {
	stopped, started := before.Minus(after), after.Minus(before)
	if len(stopped)+len(started) == 0 {
		return
	}
	for _, sh := range stopped {
		s.f.oracle.Read(s.f.group, s.ID, sh, s.reads[sh], at)
		delete(s.reads, sh)
	}
	for _, sh := range started {
		s.reads[sh] = at
	}
	s.f.moved(s.ID, stopped, started, at)
}

// moved updates the readers and the crash watches.
func (f *Fleet) moved(id string, stopped, started group.ShardSet, at time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sh := range stopped {
		rs := f.readers[sh]
		for i, r := range rs {
			if r == id {
				rs = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(f.readers, sh)
		} else {
			f.readers[sh] = rs
		}
	}
	for _, sh := range started {
		f.readers[sh] = append(f.readers[sh], id)
		for _, w := range f.watches {
			if !w.done && w.unread[sh] {
				delete(w.unread, sh)
				if len(w.unread) == 0 {
					w.done, w.took = true, at-w.at
				}
			}
		}
	}
}

// Crash stops the member at once, as a killed process: it stops reading
// and never sends again; its shards are watched until others read them.
// The caller must have stopped the goroutine driving it.
func (s *Sim) Crash() {
	at := s.f.now()
	owned := s.m.Owned()
	s.track(owned, nil, at)
	s.f.oracle.Live(s.f.group, s.ID, s.liveFrom, s.liveTo)
	s.liveFrom, s.liveTo = 0, 0
	s.m = membersim.New(s.ID, nil) // the process is gone, and its state with it
	if len(owned) > 0 {
		w := &crashWatch{at: at, unread: map[int]bool{}}
		for _, sh := range owned {
			w.unread[sh] = true
		}
		s.f.mu.Lock()
		s.f.watches = append(s.f.watches, w)
		s.f.mu.Unlock()
	}
	s.converged.Store(false)
}

// Leave starts a graceful leave: the member stops reading; the following
// heartbeats are leave requests until one is answered (Done).
func (s *Sim) Leave() {
	owned := s.m.Owned()
	s.m.Leave()
	s.track(owned, nil, s.f.now())
	s.converged.Store(false)
}

// Done reports whether the member's leave was answered.
func (s *Sim) Done() bool { return s.m.Done() }

// Rejoin replaces the member's process by a new one, which knows nothing
// and reads nothing; with measure, its join is measured: the time from its
// next heartbeat until it owns its full target. The caller must have stopped the goroutine
// driving it.
func (s *Sim) Rejoin(measure bool) {
	at := s.f.now()
	s.track(s.m.Owned(), nil, at)
	// The old process is gone: its live window ends here. The new one is
	// live from its first accepted heartbeat, for the lease TTL in force
	// then (a window kept from a longer setup lease would count the new
	// process live after its lease may have lapsed).
	s.f.oracle.Live(s.f.group, s.ID, s.liveFrom, min(s.liveTo, at))
	s.liveFrom, s.liveTo = 0, 0
	s.m = membersim.New(s.ID, nil)
	s.converged.Store(false)
	s.measureJoin, s.joinedAt = measure, -1
}

// Owners returns who reads each shard now (the first reader of a shard
// read twice).
func (f *Fleet) Owners() Owners {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(Owners, len(f.readers))
	for sh, rs := range f.readers {
		out[sh] = rs[0]
	}
	return out
}

// Settled reports whether every member of live has had an OK answer with
// nothing pending since since, and every shard is read by exactly one
// member.
func (f *Fleet) Settled(live []*Sim, since time.Duration) bool {
	for _, s := range live {
		if !s.converged.Load() || time.Duration(s.lastOK.Load()) < since {
			return false
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.readers) != f.shards {
		return false
	}
	for _, rs := range f.readers {
		if len(rs) != 1 {
			return false
		}
	}
	return true
}

// Joins returns and forgets the join convergence times measured so far.
func (f *Fleet) Joins() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.joins
	f.joins = nil
	return out
}

// CrashMoves returns and forgets the time each finished crash watch took,
// and the number of watches still open.
func (f *Fleet) CrashMoves() (took []time.Duration, open int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []*crashWatch
	for _, w := range f.watches {
		if w.done {
			took = append(took, w.took)
		} else {
			keep = append(keep, w)
		}
	}
	f.watches = keep
	return took, len(keep)
}

// Close ends every open read and live window at the current time, so the
// oracle sees the whole run.
func (f *Fleet) Close() {
	at := f.now()
	for _, s := range f.sims {
		for sh, from := range s.reads {
			f.oracle.Read(f.group, s.ID, sh, from, at)
		}
		s.reads = map[int]time.Duration{}
		f.oracle.Live(f.group, s.ID, s.liveFrom, min(s.liveTo, at))
		s.liveFrom, s.liveTo = 0, 0
	}
}
