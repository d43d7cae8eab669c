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
	m.Last, m.Header = m.c.heartbeat(m.Key, m.Member)
	return m.Last
}

// Heartbeat sends the next heartbeat of sim, a member of key's group (one
// a test drives itself, e.g. with an oracle), through c, applies the
// answer and returns it; a transport failure or an answer other than 200
// fails the test.
func (c *Coordinator) Heartbeat(key group.Key, sim *membersim.Member) contract.HeartbeatResponse {
	c.t.Helper()
	resp, _ := c.heartbeat(key, sim)
	return resp
}

func (c *Coordinator) heartbeat(key group.Key, sim *membersim.Member) (contract.HeartbeatResponse, http.Header) {
	c.t.Helper()
	resp, h, err := membersim.HeartbeatHeader(c.t.Context(), c.Server.Client(), c.Base, key, sim)
	if err != nil {
		c.t.Fatalf("%s heartbeat to %s of %s: %v", sim.ID, c.ID, key, err)
	}
	return resp, h
}

// Leave sends the graceful leave (epoch −1, nothing owned) and returns the
// answer.
func (m *Member) Leave() contract.HeartbeatResponse {
	m.c.t.Helper()
	m.Member.Leave()
	return m.Heartbeat()
}
