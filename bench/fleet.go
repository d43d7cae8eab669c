package bench

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Fleet is the simulated members of one group. It tracks who reads which
// shard (for the membersim.Oracle, convergence and shard moves) from the members'
// own view: a member starts and stops reading when it applies an answer.
type Fleet struct {
	api *API
	// coords, when set, are several coordinators the members send to
	// instead of api (see Coordinators).
	coords *Coordinators
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
	joins   []Join           // measured joins
	watches []*crashWatch
	// moves counts the shards members started or stopped reading.
	moves int64
	// maxWait is the longest wait for an OK answer finished since the
	// last Waits (see Sim.wait).
	maxWait time.Duration
	// okWatch, when ≥ 0, is the time after which the first OK answer to a
	// heartbeat sent then or later is recorded as okAfter (−1: none yet).
	okWatch, okAfter time.Duration
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
	// joinedAt; joinedAt is −1 when no measured join is pending, and
	// joinBeats counts the heartbeats sent since it, the join included.
	measureJoin bool
	joinedAt    time.Duration
	joinBeats   int
	// released: the last answer made the member stop reading shards it
	// has not reported yet.
	released bool
	// route is the coordinator the member follows when the fleet's
	// coordinators route by owner.
	route membersim.Route

	converged atomic.Bool  // the last answer was OK with nothing pending
	lastOK    atomic.Int64 // offset of the last OK answer
	// waitFrom is the offset at which the member sent its first heartbeat
	// after its last OK answer, −1 when it waits for none.
	waitFrom atomic.Int64
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
	f := &Fleet{api: api, key: key, group: key.StreamPrefix + "/" + key.ConsumerGroup, shards: shards, ttl: ttl, oracle: oracle,
		readers: map[int][]string{}, okWatch: -1, okAfter: -1}
	f.now = func() time.Duration { return time.Since(epoch) }
	f.sims = make([]*Sim, members)
	for i := range f.sims {
		f.sims[i] = f.newSim(memberID(i))
		f.sims[i].n = i
	}
	return f
}

func (f *Fleet) newSim(id string) *Sim {
	s := &Sim{ID: id, f: f, m: membersim.New(id, nil), reads: map[int]time.Duration{}, joinedAt: -1}
	s.waitFrom.Store(-1)
	return s
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
		s.measureJoin, s.joinedAt, s.joinBeats = false, sent, 0
	}
	if s.joinedAt >= 0 {
		s.joinBeats++
	}
	api := f.api
	if f.coords != nil {
		api = f.coords.route(&s.route)
	}
	resp, h, err := membersim.HeartbeatHeader(ctx, api.Client, api.Base, f.key, s.m)
	done := f.now()
	rec.Observe(time.Since(intended), statusLabel(resp, err), err)
	if err != nil {
		s.route.Failed()
	} else {
		s.route.Answered(api.Root, resp.Status, h)
	}
	s.wait(sent, done, err == nil && resp.Status == contract.StatusOK)
	if err != nil {
		return
	}
	switch resp.Status {
	case contract.StatusOK, contract.StatusRevokePending, contract.StatusSyncMetadata:
		s.renew(sent)
	}
	after := s.m.Owned()
	s.released = len(before.Minus(after)) > 0
	s.track(before, after, done)
	ok := resp.Status == contract.StatusOK
	s.converged.Store(ok && len(resp.Assignment.PendingShards) == 0)
	if ok {
		s.lastOK.Store(int64(done))
	}
	if s.joinedAt >= 0 && s.converged.Load() {
		f.mu.Lock()
		f.joins = append(f.joins, Join{Took: done - s.joinedAt, Rounds: s.joinBeats - 1})
		f.mu.Unlock()
		s.joinedAt = -1
	}
}

// statusLabel names the outcome of a heartbeat for the status counts.
func statusLabel(resp contract.HeartbeatResponse, err error) string {
	if se, ok := errors.AsType[*client.APIError](err); ok {
		return "HTTP " + strconv.Itoa(se.StatusCode)
	}
	if err != nil {
		return "transport"
	}
	return string(resp.Status)
}

// wait tracks how long the member waits for an OK answer: from the send
// of its first heartbeat after an OK answer to the next OK answer (an OK
// at the first try waits its latency). The fleet keeps the longest, and
// the first OK of a heartbeat sent at or after its okWatch.
func (s *Sim) wait(sent, done time.Duration, ok bool) {
	from := time.Duration(s.waitFrom.Load())
	if from < 0 {
		from = sent
		s.waitFrom.Store(int64(from))
	}
	if !ok {
		return
	}
	f := s.f
	f.mu.Lock()
	f.maxWait = max(f.maxWait, done-from)
	if f.okWatch >= 0 && f.okAfter < 0 && sent >= f.okWatch {
		f.okAfter = done
	}
	f.mu.Unlock()
	s.waitFrom.Store(-1)
}

// Waits returns the longest wait for an OK answer (see Sim.wait) since the
// last call, counting the members still waiting as waiting until now, and
// starts over.
func (f *Fleet) Waits() time.Duration {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	longest := f.maxWait
	for _, s := range f.sims {
		if from := time.Duration(s.waitFrom.Load()); from >= 0 {
			longest = max(longest, now-from)
		}
	}
	f.maxWait = 0
	return longest
}

// WatchOK starts watching for the group's first OK answer to a heartbeat
// sent at or after at.
func (f *Fleet) WatchOK(at time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.okWatch, f.okAfter = at, -1
}

// FirstOK returns when the watched first OK answer arrived, false while
// none did.
func (f *Fleet) FirstOK() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.okAfter, f.okAfter >= 0
}

// Moves returns how many times a member started or stopped reading a
// shard so far.
func (f *Fleet) Moves() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.moves
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
func (s *Sim) track(before, after contract.ShardSet, at time.Duration) {
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
func (f *Fleet) moved(id string, stopped, started contract.ShardSet, at time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moves += int64(len(stopped) + len(started))
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
	s.waitFrom.Store(-1)
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
	s.waitFrom.Store(-1)
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

// Join is one measured join: from the join's heartbeat until the answer
// that granted the member its full target, the time it took and the
// heartbeat rounds after the join's own (0: the join's answer granted it;
// 2: the answer to the second heartbeat after the join). Rounds do not
// depend on timer jitter: a join granted by the answer to the heartbeat
// sent two intervals after it took 2 rounds, however many milliseconds
// over two intervals that answer came.
type Join struct {
	Took   time.Duration
	Rounds int
}

// Joins returns and forgets the joins measured so far.
func (f *Fleet) Joins() []Join {
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
