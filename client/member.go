package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client/member"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// DefaultLeaseTTL is the lease TTL a Member assumes until the coordinator
// has answered one (memberLeaseTtlMs): the coordinator's default
// coordination.member-lease-ttl.
const DefaultLeaseTTL = member.DefaultLeaseTTL

// ErrGroupNotFound is returned by Run when the group does not exist (and
// MemberConfig.CreateGroup is not set).
var ErrGroupNotFound = errors.New("client: consumer group not found")

// ErrLeaveNotAnswered is returned by Run when no coordinator answered the
// leave within LeaveTimeout, or before the local lease ended, whichever
// came first; the member stopped reading, and the coordinator expires it
// at the end of its lease.
var ErrLeaveNotAnswered = errors.New("client: the leave was not answered")

// ErrLeaveTimeout is returned by Run when handler calls were still running
// twice LeaveTimeout after the leave began (their contexts were cancelled
// after one): the member stopped heartbeating without leaving.
var ErrLeaveTimeout = errors.New("client: in-flight handler calls did not return; left without a leave")

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
	// LeaseTTL, when set, overrides the lease TTL the coordinator answers
	// (memberLeaseTtlMs): the member stops reading every shard when no
	// heartbeat was accepted for this long since the send time of the last
	// accepted one (docs/safety.md, rule 3). Until the first answer the
	// member assumes DefaultLeaseTTL.
	LeaseTTL time.Duration
	// MaxConcurrency is the runtimeMaxConcurrency reported (default 1).
	MaxConcurrency int
	// LeaveTimeout bounds a leave: after it, the contexts of handler calls
	// still running are cancelled (or, when none runs and the leave was
	// not answered, Run returns ErrLeaveNotAnswered, as it does as soon as
	// the local lease ends with nothing in flight); after twice it, Run
	// gives up and returns ErrLeaveTimeout (default 30 s).
	LeaveTimeout time.Duration
	// CreateGroup makes the member create the group (with CreateShards
	// shards, 0: the coordinator's default) when the coordinator does not
	// know it, instead of Run returning ErrGroupNotFound. The credentials
	// need the right to create groups.
	CreateGroup  bool
	CreateShards int
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
	// stop fetching before it returns, and drop what it fetched but did not
	// start handling (the next owner claims it from the pending list).
	// Handler calls already running may finish: InFlight counts them, and
	// the shard is released only when it reports 0.
	OnRevoked func(shard int)
	// InFlight returns how many handler calls of a revoked shard are still
	// running. While it is above 0 the shard is reported DRAINING.
	InFlight func(shard int) int
	// OnReleased is called once a revoked shard has nothing in flight, just
	// before it is reported REVOKED.
	OnReleased func(shard int)
	// CancelInFlight is called when running handler calls must end: the
	// local lease is about to lapse (its last tenth), or a leave outlasted
	// LeaveTimeout. It should cancel their contexts.
	CancelInFlight func()
	// OnFenced is called after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID,
	// when every shard was revoked; the member then rejoins.
	OnFenced func(status Status)
	// OnLeft is called with the status that answered the leave.
	OnLeft func(status Status)
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

// Member is one consumer-group member. It runs the protocol state machine
// of package member (which says what to report, what may be read and when
// the local lease ends) over HTTP: it joins the group and heartbeats at
// the interval the coordinator answers, tells its Hooks which shards to
// start and stop reading, keeps heartbeating while revoked shards drain
// (DRAINING with the in-flight count, then REVOKED), stops reading
// everything when its local lease lapses (also while a heartbeat still
// awaits its answer), rejoins after
// FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, and leaves (epoch −1) only
// after it stopped reading. Every failed or refused heartbeat is retried
// with capped, jittered exponential backoff.
//
// Heartbeats follow the group's owner: when an answer names another
// coordinator in the X-Coordinator-Owner header, the next heartbeats go
// there (with the configured base path), and back to the configured base
// URL after a connection error, an HTTP error or a RETRY.
//
// Create it with NewMember and run it with Run.
type Member struct {
	cfg MemberConfig
	log *slog.Logger

	mu  sync.Mutex // guards st
	st  *member.State
	now func() time.Time // the clock of the lease and every wait (time.Now; tests set a fake)
	// onWait, when set (by tests), is called each time Run starts waiting
	// for its next heartbeat, with the instant the wait ends.
	onWait func(until time.Time)

	// State of the Run goroutine.
	base      string // where heartbeats go ("": the configured base URL)
	urgent    bool   // send the next heartbeat now
	cancelled bool   // CancelInFlight was called for the current lease
	// leaveFailed: the last heartbeat of a leave under way failed or was
	// answered RETRY.
	leaveFailed bool
	fails       failureLog
	// describeRefused: checkGroup was answered 403 (logged once).
	describeRefused bool
}

// NewMember checks cfg and fills in its defaults.
func NewMember(cfg MemberConfig) (*Member, error) {
	if cfg.Coordinator == nil || cfg.StreamPrefix == "" || cfg.Group == "" {
		return nil, errors.New("client: MemberConfig needs Coordinator, StreamPrefix and Group")
	}
	cfg.MemberID = cmp.Or(cfg.MemberID, DefaultMemberID())
	cfg.MemberName = cmp.Or(cfg.MemberName, cfg.Group)
	cfg.MaxConcurrency = max(cfg.MaxConcurrency, 1)
	cfg.LeaveTimeout = cmp.Or(cfg.LeaveTimeout, 30*time.Second)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("member", cfg.MemberID, "group", cfg.Group)
	return &Member{
		cfg: cfg, log: log, fails: failureLog{log: log}, now: time.Now,
		st: member.New(member.Config{ID: cfg.MemberID, Name: cfg.MemberName, LeaseTTL: cfg.LeaseTTL, MaxConcurrency: cfg.MaxConcurrency}),
	}, nil
}

// DefaultMemberID returns "<host>-<pid>-<random>".
func DefaultMemberID() string {
	host, _ := os.Hostname()
	// #nosec G404 -- the suffix only keeps ids of one host and pid apart; it is not a secret
	return fmt.Sprintf("%s-%d-%04x", cmp.Or(host, "member"), os.Getpid(), rand.Uint32()&0xffff)
}

// ID is the member id.
func (m *Member) ID() string { return m.cfg.MemberID }

// Owned returns the shards the member reads now, ascending.
func (m *Member) Owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int{}, m.st.Owned()...)
}

// LeaseTTL is the lease TTL in force: the override, the one the
// coordinator answered, or DefaultLeaseTTL.
func (m *Member) LeaseTTL() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.LeaseTTL()
}

// leaseLive reports whether the local lease runs for more than its last
// tenth: the window in which handler calls may start, and in which a
// revoked shard's pending entries may still be written to (no other
// member can have been given the shard).
func (m *Member) leaseLive() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.st.LeaseEnd()
	return ok && !m.st.Expiring(m.now())
}

// leaveMoot reports whether a leave under way cannot matter any more: its
// last heartbeat failed, nothing is in flight and the local lease has
// ended (or never began), so the coordinator drops the member at the end
// of its lease whether or not a leave arrives.
func (m *Member) leaveMoot() bool {
	if !m.leaveFailed {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	end, ok := m.st.LeaseEnd()
	return m.st.Leaving() && len(m.st.Draining()) == 0 && (!ok || !m.now().Before(end))
}

// token is the fencing token of the grant under which the member reads
// shard (0 when it does not own it, or the coordinator sent none).
func (m *Member) token(shard int) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Token(shard)
}

// MayRead reports whether a handler call for shard may start now: the
// member owns it, is not leaving, and its local lease is not about to
// lapse. Readers ask it before every handler call.
func (m *Member) MayRead(shard int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.MayRead(shard, m.now())
}

// Run joins the group and heartbeats until ctx is cancelled; then it stops
// reading every shard, keeps heartbeating until nothing is in flight,
// leaves the group and returns nil. Cancel ctx on SIGTERM
// (signal.NotifyContext) for a graceful leave.
//
// Run returns ErrGroupNotFound when the group does not exist (unless
// CreateGroup is set; it asks GET group, so the credential needs describe
// on the group: a member whose user may only heartbeat logs a warning and
// keeps rejoining instead), a *ProtocolError after UNSUPPORTED_PROTOCOL or
// INVALID_REQUEST, ErrLeaveTimeout when in-flight work outlived the leave
// and ErrLeaveNotAnswered when no coordinator answered it; every other
// failure is retried.
func (m *Member) Run(ctx context.Context) error {
	bg := context.WithoutCancel(ctx)
	var leaveStart time.Time
	refused := 0 // consecutive refused or failed heartbeats
	for {
		if ctx.Err() != nil && leaveStart.IsZero() {
			leaveStart = m.now()
			m.log.Info("leaving: stopping every shard")
			m.effects(m.step(func(st *member.State) member.Effects { return st.Leave() }))
		}
		m.poll(m.now())
		if !leaveStart.IsZero() {
			if m.done() {
				return nil
			}
			if err := m.leaveTimeout(leaveStart); err != nil {
				return err
			}
		}
		req := m.request()
		sent := m.now()
		resp, owner, err := m.exchange(bg, req)
		wait := time.Duration(0)
		switch {
		case err != nil || resp.Status == StatusRetry:
			refused++
			m.leaveFailed = !leaveStart.IsZero()
			m.base = "" // back to the configured coordinator
			m.fails.fail(sent, cmp.Or(err, error(errRetry)))
			wait = backoff(refused, m.interval())
		default:
			m.leaveFailed = false
			if m.base == "" || owner != "" {
				m.base = m.cfg.Coordinator.ownerBase(owner)
			}
			e := m.apply(req, resp, sent)
			switch {
			case e.Left:
				m.log.Info("left the group", "status", resp.Status)
				if f := m.cfg.Hooks.OnLeft; f != nil {
					f(resp.Status)
				}
				return nil
			case e.Reset == StatusInvalidRequest || e.Reset == StatusUnsupportedProtocol:
				m.awaitDrained(m.cfg.LeaveTimeout)
				return &ProtocolError{Status: e.Reset}
			case e.Reset != "":
				refused++
				created := false
				if e.Reset == StatusUnknownMemberID && req.MemberEpoch == 0 && leaveStart.IsZero() {
					var err error
					if created, err = m.checkGroup(ctx); err != nil {
						m.awaitDrained(m.cfg.LeaveTimeout)
						return err
					}
				}
				if created { // the first join of a new group: the rejoin is the join
					refused = 0
				} else {
					m.fails.fail(sent, fmt.Errorf("heartbeat answered %s (epoch %d): rejoining", e.Reset, req.MemberEpoch))
				}
				if f := m.cfg.Hooks.OnFenced; f != nil {
					f(e.Reset)
				}
				if refused > 1 { // the first rejoin is immediate
					wait = backoff(refused-1, m.interval())
				}
			default:
				refused = 0
				m.fails.ok(sent)
				wait = m.interval()
			}
		}
		m.sleep(ctx, wait, !leaveStart.IsZero())
	}
}

var errRetry = errors.New("heartbeat answered RETRY")

// step runs f on the state machine under the lock.
func (m *Member) step(f func(*member.State) member.Effects) member.Effects {
	m.mu.Lock()
	defer m.mu.Unlock()
	return f(m.st)
}

func (m *Member) interval() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Interval()
}

func (m *Member) done() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Done()
}

// effects calls the hooks for e: stops first, then starts.
func (m *Member) effects(e member.Effects) {
	m.revoked(e.Stop)
	for _, s := range e.Start {
		m.log.Info("shard assigned", "shard", s)
		if f := m.cfg.Hooks.OnAssigned; f != nil {
			f(s)
		}
	}
	if len(e.Stop) > 0 {
		m.poll(m.now())
	}
}

// revoked tells OnRevoked about each stopped shard.
func (m *Member) revoked(shards []int) {
	for _, s := range shards {
		m.log.Info("shard revoked", "shard", s)
		if f := m.cfg.Hooks.OnRevoked; f != nil {
			f(s)
		}
	}
}

// apply applies resp, the answer to req sent at sent.
func (m *Member) apply(req contract.HeartbeatRequest, resp contract.HeartbeatResponse, sent time.Time) member.Effects {
	e := m.step(func(st *member.State) member.Effects { return st.Apply(req, resp, sent, m.now()) })
	if member.Accepted(resp.Status) {
		m.cancelled = false
	}
	m.effects(e)
	return e
}

// poll applies the local lease at now (cancelling running handler calls
// in its last tenth, stopping everything once it lapsed) and moves revoked
// shards with nothing in flight to released.
func (m *Member) poll(now time.Time) {
	var expiring bool
	var draining []int
	e := m.step(func(st *member.State) member.Effects {
		e := st.Tick(now)
		expiring, draining = st.Expiring(now), st.Draining()
		return e
	})
	if e.Lapsed {
		m.log.Warn("local lease lapsed: stopping every shard")
	}
	if expiring && !m.cancelled {
		m.cancelInFlight("local lease about to lapse")
	}
	m.revoked(e.Stop)
	if len(e.Stop) > 0 {
		draining = m.draining()
	}
	for _, s := range draining {
		n := 0
		if f := m.cfg.Hooks.InFlight; f != nil {
			n = f(s)
		}
		var released bool
		m.step(func(st *member.State) member.Effects { released = st.SetInFlight(s, n); return member.Effects{} })
		if released {
			m.urgent = true
			if f := m.cfg.Hooks.OnReleased; f != nil {
				f(s)
			}
		}
	}
}

func (m *Member) cancelInFlight(why string) {
	m.cancelled = true
	if f := m.cfg.Hooks.CancelInFlight; f != nil {
		m.log.Warn("cancelling in-flight handler calls: " + why)
		f()
	}
}

// leaveTimeout cancels what is in flight once a leave outlasted
// LeaveTimeout, and gives up after twice that, or when only the leave
// itself was not answered: at LeaveTimeout, or once the local lease has
// ended (leaveMoot).
func (m *Member) leaveTimeout(start time.Time) error {
	since := m.now().Sub(start)
	switch {
	case m.leaveMoot() || (since >= m.cfg.LeaveTimeout && len(m.draining()) == 0):
		return ErrLeaveNotAnswered
	case since >= 2*m.cfg.LeaveTimeout:
		return ErrLeaveTimeout
	}
	if since >= m.cfg.LeaveTimeout && !m.cancelled {
		m.cancelInFlight("the leave outlasted LeaveTimeout")
	}
	return nil
}

// awaitDrained polls until nothing is in flight, for at most d, without
// heartbeating (the coordinator refused the member).
func (m *Member) awaitDrained(d time.Duration) {
	deadline := m.now().Add(d)
	for m.poll(m.now()); len(m.draining()) > 0 && m.now().Before(deadline); m.poll(m.now()) {
		time.Sleep(pollEvery)
	}
}

func (m *Member) draining() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.Draining()
}

// request builds the next heartbeat with the capacity and progress the
// hooks report.
func (m *Member) request() contract.HeartbeatRequest {
	var req contract.HeartbeatRequest
	m.step(func(st *member.State) member.Effects { req = st.Request(); return member.Effects{} })
	m.urgent = false
	if f := m.cfg.Hooks.AvailableConcurrency; f != nil {
		req.RuntimeConsumerCapacity.AvailableConcurrency = max(0, f())
	}
	f := m.cfg.Hooks.Progress
	if f == nil {
		return req
	}
	now := contract.InstantOf(m.now())
	for _, s := range req.OwnedShards {
		if p, ok := f(s); ok {
			key := contract.StreamKey(m.cfg.StreamPrefix, s)
			req.ShardProgress = append(req.ShardProgress, contract.ShardProgress{
				Shard: contract.Shard{ShardIndex: s}, StreamKey: &key,
				LastDeliveredID: nonEmpty(p.LastDeliveredID), LastAckedID: nonEmpty(p.LastAckedID),
				PendingCount: p.PendingCount, UpdatedAt: now,
			})
		}
	}
	return req
}

// pollEvery is how often the local lease and the in-flight counts are
// polled while the member waits: for an answer, or for its next heartbeat.
const pollEvery = 20 * time.Millisecond

// exchange sends req to the owner followed, or the configured coordinator,
// and returns the answer and the owner it names. While the answer is
// awaited the local lease keeps being applied: a coordinator that does not
// answer must not keep the member reading past its lease.
func (m *Member) exchange(ctx context.Context, req contract.HeartbeatRequest) (contract.HeartbeatResponse, string, error) {
	type answer struct {
		resp  contract.HeartbeatResponse
		owner string
		err   error
	}
	timeout := max(time.Second, min(5*time.Second, m.LeaseTTL()/3))
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch := make(chan answer, 1)
	go func(base string) {
		resp, owner, err := m.cfg.Coordinator.heartbeat(hctx, base, m.cfg.StreamPrefix, m.cfg.Group, &req)
		ch <- answer{resp, owner, err}
	}(m.base)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case a := <-ch:
			return a.resp, a.owner, a.err
		case <-t.C:
			m.poll(m.now())
			if m.leaveMoot() {
				return contract.HeartbeatResponse{}, "", errLeaveMoot
			}
		}
	}
}

var errLeaveMoot = errors.New("the local lease ended during the leave; its answer is no longer awaited")

// checkGroup runs after an UNKNOWN_MEMBER_ID answer to a join: when the
// coordinator does not know the group it is created (CreateGroup) or Run
// ends with ErrGroupNotFound. created reports that the group was missing
// and exists now (this member or another one created it): the answer was
// the expected first one of a new group. When the group exists, or the
// check fails, the member just rejoins.
func (m *Member) checkGroup(ctx context.Context) (created bool, err error) {
	_, err = m.cfg.Coordinator.Group(ctx, m.cfg.StreamPrefix, m.cfg.Group)
	if IsErrorCode(err, CodeForbidden) && !m.describeRefused {
		// A member's user may hold heartbeat only (the MEMBER role): it
		// cannot tell a missing group from one it may not read.
		m.describeRefused = true
		m.log.Warn("the join was answered UNKNOWN_MEMBER_ID and the member's credential may not read the group (403), "+
			"so a missing group cannot be told: rejoining with backoff; with describe on the group, Run would end with ErrGroupNotFound", "err", err)
	}
	if !IsErrorCode(err, CodeGroupNotFound) {
		return false, nil
	}
	if !m.cfg.CreateGroup {
		return false, fmt.Errorf("%w: %s/%s", ErrGroupNotFound, m.cfg.StreamPrefix, m.cfg.Group)
	}
	_, err = m.cfg.Coordinator.CreateGroup(ctx, m.cfg.StreamPrefix, m.cfg.Group, m.cfg.CreateShards, m.cfg.MemberID)
	switch {
	case err == nil:
		m.log.Info("created the group", "shards", m.cfg.CreateShards)
		return true, nil
	case IsErrorCode(err, CodeGroupAlreadyExists):
		m.log.Debug("the group was created meanwhile")
		return true, nil
	}
	m.log.Warn("could not create the group", "err", err)
	return false, nil
}

// backoff is the wait after the n-th consecutive failure: exponential from
// 100 ms up to the heartbeat interval (at least 1 s, at most 5 s), with
// jitter over its upper half.
func backoff(n int, interval time.Duration) time.Duration {
	ceiling := min(max(interval, time.Second), 5*time.Second)
	d := 100 * time.Millisecond << min(n-1, 10)
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1) // #nosec G404 -- jitter spreads retries; it need not be unpredictable
}

// sleep waits d, returning early when the first cancellation of ctx starts
// the leave, a revoked shard was released, the lease lapsed, or a leave
// became moot.
func (m *Member) sleep(ctx context.Context, d time.Duration, leaving bool) {
	deadline := m.now().Add(d)
	if m.onWait != nil {
		m.onWait(deadline)
	}
	for !m.urgent {
		left := deadline.Sub(m.now())
		if left <= 0 || (!leaving && ctx.Err() != nil) || (leaving && m.leaveMoot()) {
			return
		}
		done := ctx.Done()
		if leaving {
			done = nil
		}
		t := time.NewTimer(min(left, pollEvery))
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		m.poll(m.now())
	}
}

// failureLog logs the first failure of a run of them, then a summary at
// most every failureSummaryEvery, and the recovery.
type failureLog struct {
	log           *slog.Logger
	count         int
	first, logged time.Time
}

const failureSummaryEvery = 5 * time.Second

func (f *failureLog) fail(now time.Time, err error) {
	f.count++
	switch {
	case f.count == 1:
		f.first, f.logged = now, now
		f.log.Warn("heartbeat not accepted; retrying with backoff", "err", err)
	case now.Sub(f.logged) >= failureSummaryEvery:
		f.logged = now
		f.log.Warn("heartbeats still not accepted", "failures", f.count, "since", now.Sub(f.first).Round(time.Millisecond), "lastErr", err)
	}
}

func (f *failureLog) ok(now time.Time) {
	if f.count > 0 {
		f.log.Info("heartbeats accepted again", "failures", f.count, "after", now.Sub(f.first).Round(time.Millisecond))
	}
	f.count = 0
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
