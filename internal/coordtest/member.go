package coordtest

import (
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/membersim"
)

// Member is a protocol-following member (internal/membersim) of one group
// that heartbeats through one coordinator's API.
type Member struct {
	*membersim.Member
	c   *Coordinator
	Key group.Key
	// Last is the last answer, Header its header.
	Last   contract.HeartbeatResponse
	Header http.Header
}

// Member returns member id of key's group, heartbeating through c.
func (c *Coordinator) Member(key group.Key, id string) *Member {
	return &Member{Member: membersim.New(id, nil), c: c, Key: key}
}

// Through makes m heartbeat through c from now on.
func (m *Member) Through(c *Coordinator) { m.c = c }

// Heartbeat sends m's next heartbeat, applies the answer and returns it;
// a transport failure or an answer other than 200 fails the test.
func (m *Member) Heartbeat() contract.HeartbeatResponse {
	m.c.t.Helper()
	resp, h, err := membersim.HeartbeatHeader(m.c.t.Context(), m.c.Server.Client(), m.c.Base, m.Key, m.Member)
	if err != nil {
		m.c.t.Fatalf("%s heartbeat to %s of %s: %v", m.ID, m.c.ID, m.Key, err)
	}
	m.Last, m.Header = resp, h
	return resp
}

// Leave sends the graceful leave (epoch −1, nothing owned) and returns the
// answer.
func (m *Member) Leave() contract.HeartbeatResponse {
	m.c.t.Helper()
	m.Member.Leave()
	return m.Heartbeat()
}
