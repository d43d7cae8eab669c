package member

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// DefaultLeaseTTL is the lease TTL assumed until an answer carries one:
// the coordinator's default coordination.member-lease-ttl.
const DefaultLeaseTTL = 10 * time.Second

// Config configures a State.
type Config struct {
	// ID is the member id (required).
	ID string
	// Name is the memberName reported (none when empty).
	Name string
	// LeaseTTL, when positive, overrides the lease TTL the coordinator
	// answers.
	LeaseTTL time.Duration
	// MaxConcurrency is the runtimeMaxConcurrency reported (default 1); the
	// request reports it as available too, callers adjust that.
	MaxConcurrency int
}

// Effects say what a step changed in what the member reads.
type Effects struct {
	// Start lists the shards the member may start reading.
	Start []int
	// Stop lists the shards it must stop fetching now: they are draining
	// until SetInFlight reports nothing in flight for them.
	Stop []int
	// Reset is FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, INVALID_REQUEST or
	// UNSUPPORTED_PROTOCOL when the answer made the member start over.
	Reset contract.HeartbeatStatus
	// Lapsed is set when the local lease ran out in this step.
	Lapsed bool
	// Left is set when the answer acknowledged the leave.
	Left bool
}

// State is one member process's side of the protocol. It is not safe for
// concurrent use.
type State struct {
	cfg      Config
	learned  time.Duration // lease TTL answered by the coordinator
	interval time.Duration

	epoch, version int64
	seq            int64
	owned          contract.ShardSet // may be read
	tokens         map[int]int64     // fencing token of each owned shard's grant
	draining       map[int]int       // stopped; handler calls in flight
	released       contract.ShardSet // stopped; REVOKED not yet answered
	leaseFrom      time.Time         // send time of the last accepted heartbeat
	leased         bool              // leaseFrom counts (an accepted answer since the last lapse)
	leaving, left  bool
}

// New returns a member that has never heartbeated (epoch 0, reads nothing).
func New(cfg Config) *State {
	cfg.MaxConcurrency = max(cfg.MaxConcurrency, 1)
	return &State{cfg: cfg, draining: map[int]int{}, tokens: map[int]int64{}, interval: time.Second}
}

// ID is the member id.
func (s *State) ID() string { return s.cfg.ID }

// Epoch is the member epoch the next heartbeat echoes (before a leave).
func (s *State) Epoch() int64 { return s.epoch }

// Owned is what the member reads and may go on reading.
func (s *State) Owned() contract.ShardSet { return s.owned }

// Token is the fencing token of the grant under which the member reads
// shard (docs/protocol.md §4.1, assignment.fencingTokens): the one the
// answer that started the shard carried, kept while the member owns it; 0
// when the member does not own shard or the coordinator sent no token.
func (s *State) Token(shard int) int64 {
	if !s.owned.Contains(shard) {
		return 0
	}
	return s.tokens[shard]
}

// Draining is what the member stopped fetching but still handles.
func (s *State) Draining() contract.ShardSet {
	return contract.NewShardSet(slices.Collect(maps.Keys(s.draining))...)
}

// Reading is every shard the member reads or still handles.
func (s *State) Reading() contract.ShardSet { return s.owned.Union(s.Draining()) }

// Released is what the member stopped reading whose release no answer has
// acknowledged yet: the next heartbeat reports it REVOKED.
func (s *State) Released() contract.ShardSet { return s.released }

// Interval is the heartbeat interval the coordinator answered (1 s until
// it answers one).
func (s *State) Interval() time.Duration { return s.interval }

// LeaseTTL is the lease TTL in force: the override, the answered one, or
// DefaultLeaseTTL.
func (s *State) LeaseTTL() time.Duration {
	switch {
	case s.cfg.LeaseTTL > 0:
		return s.cfg.LeaseTTL
	case s.learned > 0:
		return s.learned
	}
	return DefaultLeaseTTL
}

// LeaseEnd is when the local lease ends; ok is false while there is none.
func (s *State) LeaseEnd() (end time.Time, ok bool) {
	return s.leaseFrom.Add(s.LeaseTTL()), s.leased
}

// margin is how long before its end the lease counts as expiring: no new
// read starts then, and running ones are cancelled.
func (s *State) margin() time.Duration { return s.LeaseTTL() / 10 }

// Expiring reports whether the local lease is about to end (its last
// tenth) or has ended while the member still reads something: the
// caller cancels what it still handles.
func (s *State) Expiring(now time.Time) bool {
	end, ok := s.LeaseEnd()
	return ok && len(s.Reading()) > 0 && !now.Before(end.Add(-s.margin()))
}

// MayRead reports whether a read (a handler call) of shard may start at
// now: the member owns it, is not leaving, and its local lease runs for
// more than its last tenth.
func (s *State) MayRead(shard int, now time.Time) bool {
	end, ok := s.LeaseEnd()
	return ok && !s.leaving && s.owned.Contains(shard) && now.Before(end.Add(-s.margin()))
}

// Leaving reports whether Leave was called; Done whether the leave was
// answered (or there was nothing to leave).
func (s *State) Leaving() bool { return s.leaving }

// Done reports whether the member has left.
func (s *State) Done() bool { return s.left }

// Leave stops every shard; the member keeps heartbeating, reporting what
// is in flight, and sends the leave (epoch −1) once nothing is. A member
// that never joined (epoch 0) and handles nothing is done at once.
func (s *State) Leave() Effects {
	s.leaving = true
	e := Effects{Stop: s.stopAll()}
	s.settleLeave()
	return e
}

// StopReading stops every shard the member owns, keeping its epoch: the
// process stopped reading on its own. An OK answer may assign shards again.
func (s *State) StopReading() Effects { return Effects{Stop: s.stopAll()} }

// Restart drops everything, as a new process with the same id would
// (keeping the metadata version it knew).
func (s *State) Restart() {
	*s = State{cfg: s.cfg, learned: s.learned, interval: s.interval, version: s.version, draining: map[int]int{}, tokens: map[int]int64{}}
}

// SetInFlight reports how many reads of a stopped shard are still in
// flight. At 0 the shard is released (reported REVOKED from now on, unless
// the member is at epoch 0); released says so. Shards that are not
// draining are ignored.
func (s *State) SetInFlight(shard, n int) (released bool) {
	if _, ok := s.draining[shard]; !ok {
		return false
	}
	if n > 0 {
		s.draining[shard] = n
		return false
	}
	delete(s.draining, shard)
	if s.epoch != 0 { // at epoch 0 nothing is reported: the next heartbeat after the join releases it by omission
		s.released = s.released.Union(contract.NewShardSet(shard))
	}
	s.settleLeave()
	return true
}

// settleLeave ends a leave with nothing to leave: no epoch (the member
// never joined, or was reset) and nothing in flight.
func (s *State) settleLeave() {
	if s.leaving && s.epoch == 0 && len(s.draining) == 0 {
		s.left = true
	}
}

// Tick applies the local lease at now: once it has ended, every shard is
// stopped.
func (s *State) Tick(now time.Time) Effects {
	end, ok := s.LeaseEnd()
	if !ok || now.Before(end) {
		return Effects{}
	}
	s.leased = false
	if len(s.owned) == 0 {
		return Effects{}
	}
	return Effects{Stop: s.stopAll(), Lapsed: true}
}

// Request builds the next heartbeat. A member at epoch 0 (joining or
// rejoining) reports nothing; a leaving member sends epoch −1 once nothing
// is in flight. RuntimeConsumerCapacity reports MaxConcurrency as both
// maximum and available; ShardProgress is left to the caller.
func (s *State) Request() contract.HeartbeatRequest {
	s.seq++
	req := contract.HeartbeatRequest{
		ProtocolVersion:         1,
		RequestID:               s.cfg.ID + "-" + strconv.FormatInt(s.seq, 10),
		MemberID:                s.cfg.ID,
		MemberEpoch:             s.epoch,
		MetadataVersion:         s.version,
		RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: s.cfg.MaxConcurrency, AvailableConcurrency: s.cfg.MaxConcurrency},
		OwnedShards:             contract.ShardSet{},
		RevokingShards:          []contract.RevokeReport{},
		ShardProgress:           []contract.ShardProgress{},
	}
	if s.cfg.Name != "" {
		name := s.cfg.Name
		req.MemberName = &name
	}
	if s.epoch == 0 {
		return req
	}
	if s.leaving && len(s.draining) == 0 {
		req.MemberEpoch = -1
	} else {
		req.OwnedShards = s.owned
	}
	for _, sh := range s.Draining() {
		req.RevokingShards = append(req.RevokingShards, contract.RevokeReport{Shard: contract.Shard{ShardIndex: sh}, State: contract.RevokeDraining, InFlight: int64(max(s.draining[sh], 1))})
	}
	for _, sh := range s.released {
		req.RevokingShards = append(req.RevokingShards, contract.RevokeReport{Shard: contract.Shard{ShardIndex: sh}, State: contract.RevokeRevoked})
	}
	return req
}

// Accepted reports whether an answer with status renews the local lease.
func Accepted(status contract.HeartbeatStatus) bool {
	switch status {
	case contract.StatusOK, contract.StatusRevokePending, contract.StatusSyncMetadata:
		return true
	}
	return false
}

// Apply applies resp, the answer to req, which was sent at sent and is
// applied at now. RETRY changes nothing.
func (s *State) Apply(req contract.HeartbeatRequest, resp contract.HeartbeatResponse, sent, now time.Time) Effects {
	if resp.Status == contract.StatusRetry {
		return Effects{}
	}
	if resp.HeartbeatIntervalMs > 0 {
		s.interval = time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond
	}
	if resp.MemberLeaseTtlMs > 0 {
		s.learned = time.Duration(resp.MemberLeaseTtlMs) * time.Millisecond
	}
	// Every answer but RETRY has seen the REVOKED reports of its request.
	var acked []int
	for _, r := range req.RevokingShards {
		if r.Terminal() {
			acked = append(acked, r.Shard.ShardIndex)
		}
	}
	s.released = s.released.Minus(contract.NewShardSet(acked...))
	if req.MemberEpoch == -1 {
		s.left, s.owned, s.released = true, nil, nil
		return Effects{Left: true}
	}
	if !Accepted(resp.Status) { // fenced, unknown or rejected: start over
		e := Effects{Stop: s.stopAll(), Reset: resp.Status}
		s.released, s.epoch = nil, 0
		if resp.MetadataVersion > 0 {
			s.version = resp.MetadataVersion
		}
		s.settleLeave()
		return e
	}
	if !s.leased || sent.After(s.leaseFrom) {
		s.leaseFrom, s.leased = sent, true
	}
	keep := s.owned.Intersect(resp.Assignment.AssignedShards)
	var e Effects
	e.Stop = s.stop(s.owned.Minus(keep))
	if resp.Status == contract.StatusOK && !s.leaving && now.Before(s.leaseFrom.Add(s.LeaseTTL()-s.margin())) {
		for _, sh := range resp.Assignment.AssignedShards.Minus(keep) {
			if _, busy := s.draining[sh]; !busy {
				e.Start = append(e.Start, sh)
				s.tokens[sh] = resp.Assignment.FencingTokens.Token(sh)
			}
		}
		keep = keep.Union(contract.NewShardSet(e.Start...))
		s.released = s.released.Minus(keep)
	}
	s.owned = keep
	s.epoch, s.version = resp.MemberEpoch, resp.MetadataVersion
	return e
}

// stop moves shards from owned to draining (in flight unknown until
// SetInFlight) and returns them.
func (s *State) stop(shards contract.ShardSet) []int {
	for _, sh := range shards {
		s.draining[sh] = 1
		delete(s.tokens, sh)
	}
	s.owned = s.owned.Minus(shards)
	return slices.Clone([]int(shards))
}

func (s *State) stopAll() []int { return s.stop(s.owned) }
