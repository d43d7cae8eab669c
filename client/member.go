package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/streams"
)

// DefaultLeaseTTL is the lease TTL a Member assumes when its config names
// none: the coordinator's default coordination.member-lease-ttl.
const DefaultLeaseTTL = 10 * time.Second

// MemberConfig configures a Member.
type MemberConfig struct {
	// Coordinator is the API connection (required).
	Coordinator *Coordinator
	// StreamPrefix and Group name the consumer group (required).
	StreamPrefix, Group string
	// MemberID identifies this process in the group; it must be unique
	// among running processes. Default: host name, process id and a random
	// suffix.
	MemberID string
	// MemberName is the memberName sent (default: Group).
	MemberName string
	// LeaseTTL must equal the coordinator's coordination.member-lease-ttl
	// (default DefaultLeaseTTL): the member stops reading every shard when
	// no heartbeat was answered for this long since the send time of the
	// last answered one (docs/safety.md, rule 3).
	LeaseTTL time.Duration
	// MaxConcurrency is the runtimeMaxConcurrency reported (default 1).
	MaxConcurrency int
	// LeaveTimeout bounds how long a leave waits for in-flight work and for
	// the coordinator's answer (default 30 s).
	LeaveTimeout time.Duration
	// Hooks are called from the member's heartbeat goroutine.
	Hooks Hooks
	// Logger receives the member's log records (default slog.Default()).
	Logger *slog.Logger
}

// Hooks connect a Member to what reads the shards. Every hook may be nil.
// They are called one at a time from the goroutine running Member.Run and
// must not block for long.
type Hooks struct {
	// OnAssigned is called when the member may start reading shard.
	OnAssigned func(shard int)
	// OnRevoked is called when the member must stop reading shard: it must
	// stop fetching new entries before it returns. Entries already fetched
	// may still be handled: InFlight counts them, and the revocation
	// completes only when it reports 0.
	OnRevoked func(shard int)
	// InFlight returns how many entries of a revoked shard are still being
	// handled. While it is above 0 the shard is reported DRAINING.
	InFlight func(shard int) int
	// OnReleased is called once a revoked shard has no entry in flight,
	// just before it is reported REVOKED.
	OnReleased func(shard int)
	// OnFenced is called after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID,
	// once every shard was revoked and drained; the member then rejoins.
	OnFenced func(status Status)
	// Progress returns the consumption progress of an owned shard for the
	// heartbeat's shardProgress (ok false: none to report).
	Progress func(shard int) (p ShardProgress, ok bool)
	// AvailableConcurrency returns the free worker count reported as
	// availableConcurrency (default: MaxConcurrency).
	AvailableConcurrency func() int
}

// ShardProgress is what a member reports about one shard it reads.
type ShardProgress struct {
	LastDeliveredID, LastAckedID string
	PendingCount                 int64
}

// ProtocolError is a heartbeat answered UNSUPPORTED_PROTOCOL or
// INVALID_REQUEST: the member cannot go on.
type ProtocolError struct {
	Status Status
}

func (e *ProtocolError) Error() string {
	return "coordinator rejected the heartbeat: " + string(e.Status)
}

// Member is one consumer-group member: it joins the group and heartbeats
// at the interval the coordinator answers, tells its Hooks which shards to
// start and stop reading, and follows the member's side of the safety
// contract (docs/safety.md): it reads a shard only after an OK answer
// assigned it, reports a shard released only after it stopped reading it
// (DRAINING with the in-flight count while entries are being handled, then
// REVOKED/0), stops reading everything when its local lease lapses, starts
// over with epoch 0 after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, and
// leaves the group (epoch −1) after it stopped reading.
//
// Create it with NewMember and run it with Run.
type Member struct {
	cfg MemberConfig
	log *slog.Logger

	mu       sync.Mutex // guards snapshot
	snapshot []int

	// State of the Run goroutine.
	epoch, version int64
	owned          map[int]bool
	draining       map[int]int  // revoked, in-flight count at the last poll
	released       map[int]bool // drained; REVOKED not yet answered
	interval       time.Duration
	lastAnswered   time.Time // send time of the last accepted heartbeat
	urgent         bool      // send the next heartbeat now
	seq            int64
	joined         bool
}

// NewMember checks cfg and fills in its defaults.
func NewMember(cfg MemberConfig) (*Member, error) {
	if cfg.Coordinator == nil || cfg.StreamPrefix == "" || cfg.Group == "" {
		return nil, errors.New("client: MemberConfig needs Coordinator, StreamPrefix and Group")
	}
	if cfg.MemberID == "" {
		cfg.MemberID = DefaultMemberID()
	}
	cfg.MemberName = cmp.Or(cfg.MemberName, cfg.Group)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.MaxConcurrency = max(cfg.MaxConcurrency, 1)
	cfg.LeaveTimeout = cmp.Or(cfg.LeaveTimeout, 30*time.Second)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Member{
		cfg: cfg, log: log.With("member", cfg.MemberID, "group", cfg.Group),
		owned: map[int]bool{}, draining: map[int]int{}, released: map[int]bool{},
		interval: time.Second,
	}, nil
}

// DefaultMemberID returns "<host>-<pid>-<random>".
func DefaultMemberID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%04x", cmp.Or(host, "member"), os.Getpid(), rand.Uint32()&0xffff)
}

// ID is the member id.
func (m *Member) ID() string { return m.cfg.MemberID }

// Owned returns the shards the member reads now, ascending.
func (m *Member) Owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.snapshot)
}

// Run joins the group and heartbeats until ctx is cancelled; then it stops
// reading every shard, waits for their in-flight entries, leaves the group
// and returns nil. Cancel ctx on SIGTERM (signal.NotifyContext) for a
// graceful leave. Transport errors and HTTP errors are retried with
// jittered exponential backoff; Run returns a *ProtocolError after
// UNSUPPORTED_PROTOCOL or INVALID_REQUEST (having stopped every shard).
func (m *Member) Run(ctx context.Context) error {
	failures := 0
	for {
		if ctx.Err() != nil {
			return m.leave()
		}
		m.checkLease()
		m.pollDrains()
		req := m.request(false)
		sent := time.Now()
		resp, err := m.post(ctx, req)
		var wait time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			return m.leave()
		case err != nil:
			failures++
			wait = backoff(failures, m.interval)
			m.log.Warn("heartbeat failed", "err", err, "retryIn", wait)
		default:
			failures = 0
			if err := m.apply(req, resp, sent); err != nil {
				m.revokeAll()
				m.awaitDrained(m.cfg.LeaveTimeout)
				return err
			}
			wait = m.interval
		}
		m.sleep(ctx, wait)
	}
}

func (m *Member) post(ctx context.Context, req *heartbeatRequest) (heartbeatResponse, error) {
	timeout := max(time.Second, min(5*time.Second, m.cfg.LeaseTTL/3))
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return m.cfg.Coordinator.heartbeat(hctx, m.cfg.StreamPrefix, m.cfg.Group, req)
}

// backoff is the wait after the n-th consecutive failure: exponential from
// 100 ms up to the heartbeat interval (at least 1 s, at most 5 s), with
// jitter over its upper half.
func backoff(n int, interval time.Duration) time.Duration {
	ceiling := min(max(interval, time.Second), 5*time.Second)
	d := 100 * time.Millisecond << min(n-1, 10)
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d, returning early when ctx ends, the local lease lapses, a
// revoked shard has drained, or a heartbeat is urgent.
func (m *Member) sleep(ctx context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	for !m.urgent {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		t := time.NewTimer(min(left, 50*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		m.checkLease()
		m.pollDrains()
	}
}

// request builds the next heartbeat.
func (m *Member) request(leaving bool) *heartbeatRequest {
	m.seq++
	req := &heartbeatRequest{
		ProtocolVersion: 1,
		RequestID:       m.cfg.MemberID + "-" + strconv.FormatInt(m.seq, 10),
		MemberID:        m.cfg.MemberID,
		MemberName:      m.cfg.MemberName,
		MemberEpoch:     m.epoch,
		MetadataVersion: m.version,
		RuntimeConsumerCapacity: capacity{
			RuntimeMaxConcurrency: m.cfg.MaxConcurrency,
			AvailableConcurrency:  m.cfg.MaxConcurrency,
		},
		OwnedShards:    []shardRef{},
		RevokingShards: []revokeReport{},
		ShardProgress:  []progressReport{},
	}
	if f := m.cfg.Hooks.AvailableConcurrency; f != nil {
		req.RuntimeConsumerCapacity.AvailableConcurrency = max(0, f())
	}
	if leaving {
		req.MemberEpoch = -1
	}
	now := time.Now().UTC()
	for _, s := range sortedKeys(m.owned) {
		req.OwnedShards = append(req.OwnedShards, shardRef{ShardIndex: s})
		if f := m.cfg.Hooks.Progress; f != nil {
			if p, ok := f(s); ok {
				req.ShardProgress = append(req.ShardProgress, progressReport{
					Shard: shardRef{ShardIndex: s}, StreamKey: streams.StreamKey(m.cfg.StreamPrefix, s),
					LastDeliveredID: nonEmpty(p.LastDeliveredID), LastAckedID: nonEmpty(p.LastAckedID),
					PendingCount: p.PendingCount, UpdatedAt: now,
				})
			}
		}
	}
	for _, s := range sortedKeys(m.draining) {
		req.RevokingShards = append(req.RevokingShards, revokeReport{Shard: shardRef{ShardIndex: s}, State: revokeDraining, InFlight: max(m.draining[s], 1)})
	}
	for _, s := range sortedKeys(m.released) {
		req.RevokingShards = append(req.RevokingShards, revokeReport{Shard: shardRef{ShardIndex: s}, State: revokeRevoked, AckedAt: &now})
	}
	m.urgent = false
	return req
}

// apply applies resp, the answer to req sent at sent.
func (m *Member) apply(req *heartbeatRequest, resp heartbeatResponse, sent time.Time) error {
	if resp.Status == StatusRetry {
		return nil
	}
	m.joined = true
	// Any answer but RETRY has seen the REVOKED reports of its request.
	for _, r := range req.RevokingShards {
		if r.State == revokeRevoked {
			delete(m.released, r.Shard.ShardIndex)
		}
	}
	if resp.HeartbeatIntervalMs > 0 {
		m.interval = time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond
	}
	switch resp.Status {
	case StatusOK, StatusRevokePending, StatusSyncMetadata:
		m.lastAnswered = sent
		assigned := map[int]bool{}
		for _, s := range resp.Assignment.AssignedShards {
			assigned[s.ShardIndex] = true
		}
		for _, s := range sortedKeys(m.owned) {
			if !assigned[s] {
				m.revoke(s)
			}
		}
		if resp.Status == StatusOK && time.Since(sent) < m.cfg.LeaseTTL {
			for _, s := range sortedKeys(assigned) {
				if !m.owned[s] && m.draining[s] == 0 {
					m.start(s)
				}
			}
		}
		m.epoch, m.version = resp.MemberEpoch, resp.MetadataVersion
		m.publish()
		return nil
	case StatusFencedMemberEpoch, StatusUnknownMemberID:
		m.log.Warn("member must rejoin", "status", resp.Status, "epoch", m.epoch)
		m.revokeAll()
		m.awaitDrained(m.cfg.LeaseTTL)
		clear(m.released)
		clear(m.draining)
		m.epoch, m.version = 0, resp.MetadataVersion
		m.urgent = true
		if f := m.cfg.Hooks.OnFenced; f != nil {
			f(resp.Status)
		}
		return nil
	default: // UNSUPPORTED_PROTOCOL, INVALID_REQUEST, anything unknown
		return &ProtocolError{Status: resp.Status}
	}
}

func (m *Member) start(s int) {
	delete(m.released, s)
	m.owned[s] = true
	m.log.Info("shard assigned", "shard", s)
	if f := m.cfg.Hooks.OnAssigned; f != nil {
		f(s)
	}
}

// revoke stops reading s; it drains before it is reported REVOKED.
func (m *Member) revoke(s int) {
	delete(m.owned, s)
	m.draining[s] = 1
	m.log.Info("shard revoked", "shard", s)
	if f := m.cfg.Hooks.OnRevoked; f != nil {
		f(s)
	}
	m.pollDrains()
	m.publish()
}

func (m *Member) revokeAll() {
	for _, s := range sortedKeys(m.owned) {
		m.revoke(s)
	}
}

// pollDrains moves drained shards from draining to released.
func (m *Member) pollDrains() {
	for _, s := range sortedKeys(m.draining) {
		n := 0
		if f := m.cfg.Hooks.InFlight; f != nil {
			n = f(s)
		}
		if n > 0 {
			m.draining[s] = n
			continue
		}
		delete(m.draining, s)
		m.released[s] = true
		m.urgent = true
		if f := m.cfg.Hooks.OnReleased; f != nil {
			f(s)
		}
	}
}

// awaitDrained polls until no revoked shard has entries in flight, for at
// most d.
func (m *Member) awaitDrained(d time.Duration) {
	deadline := time.Now().Add(d)
	for m.pollDrains(); len(m.draining) > 0 && time.Now().Before(deadline); m.pollDrains() {
		time.Sleep(10 * time.Millisecond)
	}
}

// checkLease applies the local lease rule: once a lease TTL has passed
// since the send time of the last accepted heartbeat, stop reading.
func (m *Member) checkLease() {
	if len(m.owned) == 0 || m.lastAnswered.IsZero() || time.Since(m.lastAnswered) < m.cfg.LeaseTTL {
		return
	}
	m.log.Warn("local lease lapsed: stopping every shard", "sinceLastAnswered", time.Since(m.lastAnswered).Round(time.Millisecond))
	m.revokeAll()
}

// leave stops reading, drains, and sends epoch −1 until it is answered.
func (m *Member) leave() error {
	m.revokeAll()
	m.awaitDrained(m.cfg.LeaveTimeout)
	if !m.joined {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.LeaveTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		req := m.request(true)
		resp, err := m.post(ctx, req)
		if err == nil && resp.Status != StatusRetry {
			m.log.Info("left the group", "status", resp.Status)
			return nil
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusBadRequest {
			return fmt.Errorf("leave: %w", err)
		}
		t := time.NewTimer(backoff(attempt, m.interval))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("leave not answered: %w", cmp.Or(err, ctx.Err()))
		case <-t.C:
		}
	}
}

func (m *Member) publish() {
	s := sortedKeys(m.owned)
	m.mu.Lock()
	m.snapshot = s
	m.mu.Unlock()
}

func sortedKeys[V any](set map[int]V) []int {
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
