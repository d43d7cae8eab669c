package membersim

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/member"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Member is one simulated consumer process: the member state machine of
// package member (the one used by the Go client) whose reads end at once
// (nothing is ever in flight), reporting every change of what it reads to
// its Oracle. It reads only the shards an OK answer assigned, reports a
// shard it stopped reading REVOKED until an answer arrives, starts over
// with epoch 0 after UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
// INVALID_REQUEST or UNSUPPORTED_PROTOCOL, and changes nothing on RETRY
// or no answer. A Member is not safe for concurrent use.
type Member struct {
	// ID is the member id.
	ID string
	// Oracle, when non-nil, is told every change of what the member reads.
	Oracle *Oracle

	st *member.State
}

// New returns a member that has never heartbeated (epoch 0, reads nothing).
func New(id string, o *Oracle) *Member { return NewWithLease(id, 0, o) }

// NewWithLease returns a new member whose local lease lasts ttl (0: what
// the coordinator answers).
func NewWithLease(id string, ttl time.Duration, o *Oracle) *Member {
	return &Member{ID: id, Oracle: o, st: member.New(member.Config{ID: id, LeaseTTL: ttl})}
}

// Epoch is the member epoch the next heartbeat echoes.
func (m *Member) Epoch() int64 { return m.st.Epoch() }

// Owned returns the shards the member reads.
func (m *Member) Owned() contract.ShardSet { return m.st.Owned() }

// Released returns the shards the member stopped reading whose release no
// answer has acknowledged yet: the next heartbeat reports them as REVOKED.
func (m *Member) Released() contract.ShardSet { return m.st.Released() }

// Done reports whether the member left: a leave request was answered.
func (m *Member) Done() bool { return m.st.Done() }

// LeaseEnd is the end of the member's local lease (ok false: none).
func (m *Member) LeaseEnd() (end time.Time, ok bool) { return m.st.LeaseEnd() }

// Leave stops reading every shard; the following heartbeats are leave
// requests (epoch −1) until one is answered.
func (m *Member) Leave() { m.step(m.st.Leave()) }

// StopReading stops reading every shard and keeps everything else (epoch,
// metadata version): the next heartbeats report the shards as REVOKED
// until an answer acknowledges them. A process does this when its local
// lease lapses; an OK answer may then assign shards again.
func (m *Member) StopReading() { m.step(m.st.StopReading()) }

// Tick applies the local lease at now: once it has ended the member stops
// reading (lapsed reports that it did).
func (m *Member) Tick(now time.Time) (lapsed bool) { return m.step(m.st.Tick(now)).Lapsed }

// Request returns the member's next heartbeat.
func (m *Member) Request() contract.HeartbeatRequest {
	req := m.st.Request()
	req.RuntimeConsumerCapacity = &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}
	return req
}

// Apply applies resp, the answer to req, where time does not matter.
func (m *Member) Apply(req contract.HeartbeatRequest, resp contract.HeartbeatResponse) {
	m.ApplyAt(req, resp, time.Time{}, time.Time{})
}

// ApplyAt applies resp, the answer to req sent at sent, at now.
func (m *Member) ApplyAt(req contract.HeartbeatRequest, resp contract.HeartbeatResponse, sent, now time.Time) {
	m.step(m.st.Apply(req, resp, sent, now))
}

// step completes the effects of one step of the state machine: the
// shards stopped are released at once (nothing is in flight) and the
// oracle hears of every stop and start.
func (m *Member) step(e member.Effects) member.Effects {
	stopped := contract.NewShardSet(e.Stop...)
	if len(stopped) > 0 {
		for _, s := range stopped {
			m.st.SetInFlight(s, 0)
		}
		if m.Oracle != nil {
			m.Oracle.stop(m.ID, stopped)
		}
	}
	if m.Oracle != nil && len(e.Start) > 0 {
		m.Oracle.start(m.ID, contract.NewShardSet(e.Start...))
	}
	return e
}

// Settled reports whether members together read each shard 0…shards−1
// exactly once, and how many shards each reads differs by at most one.
func Settled(shards int, members []*Member) bool {
	read := make(map[int]bool, shards)
	lo, hi := shards, 0
	for _, m := range members {
		for _, s := range m.Owned() {
			if read[s] || s < 0 || s >= shards {
				return false
			}
			read[s] = true
		}
		lo, hi = min(lo, len(m.Owned())), max(hi, len(m.Owned()))
	}
	return len(read) == shards && hi-lo <= 1
}

// SettleAll starts n members (member-00000, …) and heartbeats them, one
// pass over all of them at a time through send, until a whole pass is
// answered OK with nothing pending; after maxPasses passes it fails.
func SettleAll(n, maxPasses int, send func(*contract.HeartbeatRequest) (contract.HeartbeatResponse, error)) ([]*Member, error) {
	ms := make([]*Member, n)
	for i := range ms {
		ms[i] = New(fmt.Sprintf("member-%05d", i), nil)
	}
	for range maxPasses {
		settled := true
		for _, m := range ms {
			req := m.Request()
			resp, err := send(&req)
			if err != nil {
				return nil, err
			}
			m.Apply(req, resp)
			settled = settled && resp.Status == contract.StatusOK && len(resp.Assignment.PendingShards) == 0
		}
		if settled {
			return ms, nil
		}
	}
	return nil, fmt.Errorf("%d members did not settle in %d passes", n, maxPasses)
}

// Heartbeat sends m's next heartbeat for group key to the API at base
// (scheme, host and base path, e.g. http://127.0.0.1:8080 + contract.BasePath)
// through c and applies the answer. A transport failure, an answer other
// than 200 (a *client.APIError) or an undecodable body is returned as an
// error and changes nothing, like a lost answer.
func Heartbeat(ctx context.Context, c *http.Client, base string, key group.Key, m *Member) (contract.HeartbeatResponse, error) {
	resp, _, err := HeartbeatHeader(ctx, c, base, key, m)
	return resp, err
}

// HeartbeatHeader is Heartbeat that also returns the answer's header (nil
// when no answer arrived), e.g. the group's owner a coordinator names.
func HeartbeatHeader(ctx context.Context, c *http.Client, base string, key group.Key, m *Member) (contract.HeartbeatResponse, http.Header, error) {
	req := m.Request()
	resp, h, err := PostHeader(ctx, c, base, key, req)
	if err != nil {
		return resp, h, err
	}
	m.Apply(req, resp)
	return resp, h, nil
}

// Post sends heartbeat req of member req.MemberID for group key to the API
// at base through c and returns the answer without applying it (callers
// that lose, duplicate or delay answers apply them themselves). A
// transport failure, an answer other than 200 (a *client.APIError), an
// undecodable body or one that does not echo req is an error.
func Post(ctx context.Context, c *http.Client, base string, key group.Key, req contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
	resp, _, err := PostHeader(ctx, c, base, key, req)
	return resp, err
}

// PostHeader is Post that also returns the answer's header (nil when no
// answer arrived), e.g. for a Route: the member protocol's
// client.Transport.
func PostHeader(ctx context.Context, c *http.Client, base string, key group.Key, req contract.HeartbeatRequest) (contract.HeartbeatResponse, http.Header, error) {
	t := client.Transport{Client: c}
	return t.Heartbeat(ctx, base, key.StreamPrefix, key.ConsumerGroup, &req)
}
