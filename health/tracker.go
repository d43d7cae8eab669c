package health

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Round is one reading of a group: a Sample per shard, by shard index.
type Round struct {
	At     time.Time
	Shards []Sample
	// Members is the number of live members holding at least one shard.
	Members int
}

// ShardReport is one shard's status.
type ShardReport struct {
	Shard  int
	Status contract.ConsumptionStatus
	// Since is the time of the round at which the shard took Status.
	Since    time.Time
	Evidence Evidence
}

// Report is a group's status and scaling signal after a round.
type Report struct {
	// At is the round's time.
	At time.Time
	// Status is the most severe of the shards' (OK without shards), taken
	// at Since; Counts holds the shards in each status of
	// contract.ConsumptionStatuses (0 included).
	Status contract.ConsumptionStatus
	Since  time.Time
	Counts map[contract.ConsumptionStatus]int
	Shards []ShardReport
	// Scaling is the signal computed from the same windows.
	Scaling Signal
}

// Tracker keeps one group's shard windows, statuses and scaling signal
// between rounds. Its memory is bounded by the shard count times
// Config.Window samples (56 bytes each). It is not safe for concurrent
// use.
type Tracker struct {
	cfg    Config
	shards []shardState
	status contract.ConsumptionStatus
	since  time.Time
	scaler scaler
	last   Report
	seen   bool
}

type shardState struct {
	w      window
	status contract.ConsumptionStatus
	since  time.Time
}

// NewTracker returns a Tracker with c (its unset fields defaulted, see
// Config).
func NewTracker(c Config) *Tracker { return &Tracker{cfg: c.normalized()} }

// Config returns the tracker's configuration, defaults applied.
func (t *Tracker) Config() Config { return t.cfg }

// Observe adds a round's samples to the windows and returns the report.
// A round not after the last one changes nothing and returns the last
// report. A change of the shard count keeps the windows of the shards
// that remain (by index) and starts empty ones for new shards.
func (t *Tracker) Observe(r Round) Report {
	if t.seen && !r.At.After(t.last.At) {
		return t.last
	}
	if len(t.shards) > len(r.Shards) {
		clear(t.shards[len(r.Shards):])
		t.shards = t.shards[:len(r.Shards)]
	}
	for len(t.shards) < len(r.Shards) {
		t.shards = append(t.shards, shardState{})
	}
	rep := Report{At: r.At, Status: contract.ConsumptionOK, Counts: make(map[contract.ConsumptionStatus]int, len(contract.ConsumptionStatuses)),
		Shards: make([]ShardReport, len(r.Shards))}
	for _, s := range contract.ConsumptionStatuses {
		rep.Counts[s] = 0
	}
	in := inputs{members: r.Members, shards: len(r.Shards)}
	in.span = span{ok: t.seen, lagsKnown: true, members: r.Members, seconds: r.At.Sub(t.last.At).Seconds()}
	for i, s := range r.Shards {
		st := &t.shards[i]
		cur := pointOf(r.At, s)
		if n := len(st.w.points); t.seen && n > 0 && st.w.points[n-1].at == t.last.At.UnixNano() {
			in.span.add(st.w.points[n-1], cur)
		}
		st.w.add(cur, t.cfg.Window)
		status := classify(st.w.points, t.cfg)
		if status != st.status {
			st.status, st.since = status, r.At
		}
		ev := evidence(st.w.points)
		rep.Shards[i] = ShardReport{Shard: i, Status: status, Since: st.since, Evidence: ev}
		rep.Counts[status]++
		if status.Severity() > rep.Status.Severity() {
			rep.Status = status
		}
		if ev.LagEnd != nil {
			in.backlog += *ev.LagEnd
		}
	}
	if !t.seen || rep.Status != t.status {
		t.status, t.since = rep.Status, r.At
	}
	rep.Since = t.since
	rep.Scaling = t.scaler.step(r.At, in, t.cfg.Window-1, t.cfg.Scaling)
	t.last, t.seen = rep, true
	return rep
}

// Last returns the last report; ok is false before the first round.
func (t *Tracker) Last() (r Report, ok bool) { return t.last, t.seen }
