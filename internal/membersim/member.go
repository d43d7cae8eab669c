package membersim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Member is one simulated consumer process. It reads only the shards an
// OK answer assigned (REVOKE_PENDING and SYNC_METADATA only shrink what it
// reads), reports them as owned, reports every shard it stopped reading as
// REVOKED/0 until an answer arrives, and echoes the epoch and metadata
// version of the last accepted answer. After UNKNOWN_MEMBER_ID,
// FENCED_MEMBER_EPOCH, INVALID_REQUEST or UNSUPPORTED_PROTOCOL it stops
// reading and starts over with epoch 0. RETRY, or no answer at all,
// changes nothing. A Member is not safe for concurrent use.
type Member struct {
	// ID is the member id.
	ID string
	// Oracle, when non-nil, is told every change of what the member reads.
	Oracle *Oracle

	epoch, version int64
	owned          group.ShardSet // what the process reads
	released       group.ShardSet // stopped reading, release not yet answered
	leaving        bool           // Leave was called
	done           bool           // a leave request was answered: the process is gone
	seq            int
}

// New returns a member that has never heartbeated (epoch 0, reads nothing).
func New(id string, o *Oracle) *Member { return &Member{ID: id, Oracle: o} }

// Epoch is the member epoch the next heartbeat echoes.
func (m *Member) Epoch() int64 { return m.epoch }

// Owned returns the shards the member reads.
func (m *Member) Owned() group.ShardSet { return m.owned }

// Released returns the shards the member stopped reading whose release no
// answer has acknowledged yet: the next heartbeat reports them as REVOKED.
func (m *Member) Released() group.ShardSet { return m.released }

// Done reports whether the member left: a leave request was answered.
func (m *Member) Done() bool { return m.done }

// Leave stops reading every shard; the following heartbeats are leave
// requests (epoch −1) until one is answered.
func (m *Member) Leave() {
	m.StopReading()
	m.leaving = true
}

// StopReading stops reading every shard and keeps everything else (epoch,
// metadata version): the next heartbeats report the shards as REVOKED
// until an answer acknowledges them. A process does this when its local
// lease lapses (no heartbeat answered for a lease TTL since the send time
// of its last answered one); an OK answer may then assign shards again.
func (m *Member) StopReading() {
	m.stop(m.owned)
	m.released = m.released.Union(m.owned)
	m.owned = nil
}

// Request returns the member's next heartbeat.
func (m *Member) Request() group.HeartbeatRequest {
	m.seq++
	req := group.HeartbeatRequest{
		ProtocolVersion:         1,
		RequestID:               fmt.Sprintf("%s-%d", m.ID, m.seq),
		MemberID:                m.ID,
		MemberEpoch:             m.epoch,
		MetadataVersion:         m.version,
		RuntimeConsumerCapacity: &group.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1},
		OwnedShards:             m.owned,
	}
	if m.leaving {
		req.MemberEpoch = -1
	}
	for _, s := range m.released {
		req.RevokingShards = append(req.RevokingShards, group.RevokeReport{Shard: group.Shard{ShardIndex: s}, State: group.RevokeRevoked})
	}
	return req
}

// Apply applies resp, the answer to req.
func (m *Member) Apply(req group.HeartbeatRequest, resp group.HeartbeatResponse) {
	if resp.Status == group.StatusRetry {
		return
	}
	var reported []int
	for _, r := range req.RevokingShards {
		reported = append(reported, r.Shard.ShardIndex)
	}
	m.released = m.released.Minus(group.NewShardSet(reported...))
	if m.leaving {
		switch resp.Status {
		case group.StatusOK, group.StatusUnknownMemberID, group.StatusFencedMemberEpoch:
			m.done = true
		}
		return
	}
	var keep group.ShardSet
	switch resp.Status {
	case group.StatusOK:
		keep = resp.Assignment.AssignedShards
	case group.StatusRevokePending, group.StatusSyncMetadata:
		keep = m.owned.Intersect(resp.Assignment.AssignedShards)
	default: // rejected or fenced: start over
		m.stop(m.owned)
		m.owned, m.released, m.epoch = nil, nil, 0
		if resp.MetadataVersion > 0 {
			m.version = resp.MetadataVersion
		}
		return
	}
	dropped := m.owned.Minus(keep)
	m.stop(dropped)
	m.start(keep.Minus(m.owned))
	// A shard read again is no longer released (only after StopReading can
	// an answer to an older request assign a shard still reported REVOKED).
	m.released = m.released.Union(dropped).Minus(keep)
	m.owned = keep
	m.epoch, m.version = resp.MemberEpoch, resp.MetadataVersion
}

func (m *Member) stop(shards group.ShardSet) {
	if m.Oracle != nil && len(shards) > 0 {
		m.Oracle.stop(m.ID, shards)
	}
}

func (m *Member) start(shards group.ShardSet) {
	if m.Oracle != nil && len(shards) > 0 {
		m.Oracle.start(m.ID, shards)
	}
}

// Settled reports whether members together read each shard 0…shards−1
// exactly once, and how many shards each reads differs by at most one.
func Settled(shards int, members []*Member) bool {
	read := make(map[int]bool, shards)
	lo, hi := shards, 0
	for _, m := range members {
		for _, s := range m.owned {
			if read[s] || s < 0 || s >= shards {
				return false
			}
			read[s] = true
		}
		lo, hi = min(lo, len(m.owned)), max(hi, len(m.owned))
	}
	return len(read) == shards && hi-lo <= 1
}

// SettleAll starts n members (member-00000, …) and heartbeats them, one
// pass over all of them at a time through send, until a whole pass is
// answered OK with nothing pending; after maxPasses passes it fails.
func SettleAll(n, maxPasses int, send func(*group.HeartbeatRequest) (group.HeartbeatResponse, error)) ([]*Member, error) {
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
			settled = settled && resp.Status == group.StatusOK && len(resp.Assignment.PendingShards) == 0
		}
		if settled {
			return ms, nil
		}
	}
	return nil, fmt.Errorf("%d members did not settle in %d passes", n, maxPasses)
}

// StatusError is a heartbeat answered with an HTTP status other than 200.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("heartbeat answered %d: %s", e.Code, e.Body) }

// Heartbeat sends m's next heartbeat for group key to the API at base
// (scheme, host and base path, e.g. http://127.0.0.1:8080/coord/v1)
// through c and applies the answer. A transport failure, an answer other
// than 200 (a *StatusError) or an undecodable body is returned as an error
// and changes nothing, like a lost answer.
func Heartbeat(ctx context.Context, c *http.Client, base string, key group.Key, m *Member) (group.HeartbeatResponse, error) {
	req := m.Request()
	resp, err := Post(ctx, c, base, key, req)
	if err != nil {
		return resp, err
	}
	m.Apply(req, resp)
	return resp, nil
}

// Post sends heartbeat req of member req.MemberID for group key to the API
// at base through c and returns the answer without applying it (callers
// that lose, duplicate or delay answers apply them themselves). A
// transport failure, an answer other than 200 (a *StatusError), an
// undecodable body or one that does not echo req is an error.
func Post(ctx context.Context, c *http.Client, base string, key group.Key, req group.HeartbeatRequest) (group.HeartbeatResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return group.HeartbeatResponse{}, err
	}
	u := base + "/streams/" + url.PathEscape(key.StreamPrefix) + "/groups/" + url.PathEscape(key.ConsumerGroup) +
		"/members/" + url.PathEscape(req.MemberID) + "/heartbeat"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return group.HeartbeatResponse{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.Do(hr)
	if err != nil {
		return group.HeartbeatResponse{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return group.HeartbeatResponse{}, err
	}
	if res.StatusCode != http.StatusOK {
		return group.HeartbeatResponse{}, &StatusError{Code: res.StatusCode, Body: string(b)}
	}
	var resp group.HeartbeatResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		return group.HeartbeatResponse{}, fmt.Errorf("heartbeat answer %s: %w", b, err)
	}
	if resp.ResponseTo != req.RequestID || resp.MemberID != req.MemberID {
		return group.HeartbeatResponse{}, fmt.Errorf("answer %+v does not echo request %s of %s", resp, req.RequestID, req.MemberID)
	}
	return resp, nil
}
