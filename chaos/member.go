package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// sim is one simulated member process: a membersim.Member (the member
// state machine of package client/member: requests, answers and the local lease)
// plus the record of what it reads for the oracle, and the member-side
// faults.
//
// Contract: the member reads a shard only after an OK answer assigned it;
// it stops reading a shard before it sends the heartbeat that reports the
// release; after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID it stops reading
// and rejoins with epoch 0; RETRY or no answer changes nothing; and it
// stops reading everything once no heartbeat has been answered for one
// lease TTL since the send time of its last answered heartbeat.
//
// Only the member's goroutine (loop) sends; the scheduler calls crash,
// restart, partition and heal. mu guards everything below it.
type sim struct {
	id string
	r  *run

	mu sync.Mutex
	// rng drives routing, lost answers and duplicates of this member.
	rng *rand.Rand
	// route is the owner the member follows (Options.Routing).
	route membersim.Route
	m     *membersim.Member
	// gen changes on crash and partition: an answer to a request of an
	// older generation is never seen by the member.
	gen                  int
	crashed, partitioned bool
	// reads: shard → offset since which the member reads it.
	reads map[int]time.Duration
	// last is the last answer the member applied.
	last *contract.HeartbeatResponse
}

func newSim(r *run, i int) *sim {
	return &sim{
		id: fmt.Sprintf("m-%02d", i), r: r,
		rng:   rand.New(rand.NewPCG(uint64(r.opts.Seed), uint64(i)+1)),
		m:     membersim.NewWithLease(fmt.Sprintf("m-%02d", i), r.opts.LeaseTTL, nil),
		reads: map[int]time.Duration{},
	}
}

// logf adds an event of this member at offset at.
func (s *sim) logf(at time.Duration, format string, args ...any) {
	s.r.log.add(at, s.id, fmt.Sprintf(format, args...))
}

// loop heartbeats every interval until ctx ends.
func (s *sim) loop(ctx context.Context) {
	tick := time.NewTicker(s.r.opts.Interval)
	defer tick.Stop()
	for {
		s.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// beat sends one heartbeat, unless the member is down or cut off, and
// applies its answer.
func (s *sim) beat(ctx context.Context) {
	s.mu.Lock()
	now := s.r.now()
	s.checkLease(now)
	if s.crashed || s.partitioned {
		s.mu.Unlock()
		return
	}
	owner := s.route.Target(s.r.opts.Routing)
	coord, root, ok := s.r.cluster.route(owner, s.rng)
	if !ok {
		s.mu.Unlock()
		return
	}
	if owner != "" {
		s.r.count("heartbeat to the owner followed")
	}
	req := s.m.Request()
	gen := s.gen
	faulty := !s.r.healed.Load()
	lost := faulty && s.rng.Float64() < s.r.opts.LostRate
	var dupDelay time.Duration
	if faulty && s.rng.Float64() < s.r.opts.DupRate {
		dupDelay = s.r.opts.Interval + time.Duration(s.rng.Int64N(int64(9*s.r.opts.Interval)))
	}
	s.logf(now, "send %s → %s epoch %d owned %v released %v%s", req.RequestID, coord, req.MemberEpoch,
		req.OwnedShards, revoked(req), map[bool]string{true: " (answer will be lost)"}[lost])
	s.mu.Unlock()

	if dupDelay > 0 {
		s.r.count("duplicated heartbeat")
		s.r.duplicate(ctx, s, req, dupDelay)
	}
	resp, h, err := membersim.PostHeader(ctx, s.r.client, root+contract.BasePath, s.r.key, req)
	recv := s.r.now()
	if err == nil {
		s.r.answers.add(answer{member: s.id, req: req.RequestID, coord: coord, sent: now, recv: recv, resp: resp, lost: lost})
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkLease(recv)
	switch {
	case gen != s.gen:
		s.logf(recv, "answer to %s dropped: the member crashed or was cut off meanwhile", req.RequestID)
	case lost:
		s.r.count("lost answer")
		s.logf(recv, "answer to %s lost (%s)", req.RequestID, describe(resp, err))
		s.route.Failed()
	case err != nil:
		s.logf(recv, "no answer to %s: %v", req.RequestID, err)
		s.route.Failed()
	default:
		s.route.Answered(root, resp.Status, h)
		s.apply(req, resp, now, recv)
	}
}

// apply applies resp, the answer to req sent at sent, received at recv.
func (s *sim) apply(req contract.HeartbeatRequest, resp contract.HeartbeatResponse, sent, recv time.Duration) {
	before := s.m.Owned()
	s.m.ApplyAt(req, resp, s.r.at(sent), s.r.at(recv))
	if resp.Status != contract.StatusRetry {
		s.last = &resp
	}
	lease := ""
	if end, ok := s.m.LeaseEnd(); ok {
		lease = "; local lease until " + fmtOffset(s.r.offset(end))
	}
	s.logf(recv, "answer to %s: %s%s", req.RequestID, describe(resp, nil), lease)
	s.track(before, s.m.Owned(), recv)
}

// checkLease applies the local lease rule at offset now: when the lease
// ran out, the member stopped reading at its end (recorded at that
// instant even when noticed later; nothing else of this member happened
// in between, as only the member's own steps start reads).
func (s *sim) checkLease(now time.Duration) {
	endAt, ok := s.m.LeaseEnd()
	if !ok || s.r.opts.IgnoreLease {
		return
	}
	end, owned := s.r.offset(endAt), s.m.Owned()
	if !s.m.Tick(s.r.at(now)) {
		return
	}
	s.r.count("local lease lapse")
	s.logf(end, "local lease ran out (last answered heartbeat sent at %v): stops reading %v", fmtOffset(end-s.r.opts.LeaseTTL), owned)
	s.track(owned, nil, end)
}

// track records the change from reading before to reading after at at:
// closed read intervals go to the oracle.
func (s *sim) track(before, after contract.ShardSet, at time.Duration) {
	stopped, started := before.Minus(after), after.Minus(before)
	for _, sh := range stopped {
		s.r.oracle.Read(s.r.key.String(), s.id, sh, s.reads[sh], at)
		delete(s.reads, sh)
	}
	for _, sh := range started {
		s.reads[sh] = at
	}
	if len(started) > 0 {
		s.r.wall.mark(at) // the history check compares the start with entries' wall-clock times
	}
	if len(stopped) > 0 || len(started) > 0 {
		s.logf(at, "reads %v (stopped %v, started %v)", after, stopped, started)
	}
}

// crash kills the process: it stops reading and heartbeating at once and
// loses its state.
func (s *sim) crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.r.now()
	s.checkLease(at)
	s.logf(at, "FAULT crash (was reading %v)", s.m.Owned())
	s.track(s.m.Owned(), nil, at)
	s.gen++
	s.crashed, s.partitioned = true, false
	s.m = membersim.NewWithLease(s.id, s.r.opts.LeaseTTL, nil)
	s.route = membersim.Route{}
	s.last = nil
}

// restart starts a new process of the member (epoch 0, reads nothing).
func (s *sim) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashed {
		s.crashed = false
		s.logf(s.r.now(), "FAULT end: new process starts (epoch 0)")
	}
}

// partition cuts the member off: no heartbeat and no answer gets through,
// but it keeps reading until its local lease ends.
func (s *sim) partition() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashed || s.partitioned {
		return
	}
	s.gen++
	s.partitioned = true
	end, _ := s.m.LeaseEnd()
	s.logf(s.r.now(), "FAULT partition (reading %v, lease until %v)", s.m.Owned(), fmtOffset(s.r.offset(end)))
}

// heal ends a partition: the member resumes with its old epoch and sets.
func (s *sim) heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.partitioned {
		s.partitioned = false
		s.logf(s.r.now(), "FAULT end: partition healed (epoch %d, reading %v)", s.m.Epoch(), s.m.Owned())
	}
}

// state returns what the member reads and its last applied answer, and
// whether it runs connected.
func (s *sim) state() (contract.ShardSet, *contract.HeartbeatResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.Owned(), s.last, !s.crashed && !s.partitioned
}

// close ends every open read interval at offset at.
func (s *sim) close(at time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkLease(at)
	s.track(s.m.Owned(), nil, at)
}

// duplicate re-sends req of s after delay to a live coordinator; the
// answer is recorded but the member never applies it.
func (r *run) duplicate(ctx context.Context, s *sim, req contract.HeartbeatRequest, delay time.Duration) {
	r.bg.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		s.mu.Lock()
		coord, base, ok := r.cluster.pick(s.rng)
		s.mu.Unlock()
		if !ok {
			return
		}
		sent := r.now()
		s.logf(sent, "duplicate of %s (epoch %d owned %v) re-sent → %s", req.RequestID, req.MemberEpoch, req.OwnedShards, coord)
		resp, err := membersim.Post(ctx, r.client, base, r.key, req)
		recv := r.now()
		if err == nil {
			r.answers.add(answer{member: s.id, req: req.RequestID + " (duplicate)", coord: coord, sent: sent, recv: recv, resp: resp, dup: true})
		}
		s.logf(recv, "duplicate of %s answered, ignored: %s", req.RequestID, describe(resp, err))
	})
}

// revoked lists the shards req reports as revoked.
func revoked(req contract.HeartbeatRequest) contract.ShardSet {
	var out []int
	for _, r := range req.RevokingShards {
		out = append(out, r.Shard.ShardIndex)
	}
	return contract.NewShardSet(out...)
}

// describe is a one-line summary of an answer.
func describe(resp contract.HeartbeatResponse, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s memberEpoch %d gE %d aE %d mV %d assigned %v pending %v", resp.Status, resp.MemberEpoch,
		resp.GroupEpoch, resp.AssignmentEpoch, resp.MetadataVersion, resp.Assignment.AssignedShards, resp.Assignment.PendingShards)
}

// fmtOffset prints an offset from the start of the run.
func fmtOffset(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
