package coordtest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Member is a protocol-following member (internal/testkit/membersim) of one group
// that heartbeats through one coordinator's API.
type Member struct {
	*membersim.Member
	c   *Server
	Key group.Key
	// Last is the last answer, Header its header.
	Last   contract.HeartbeatResponse
	Header http.Header
}

// Member returns member id of key's group, heartbeating through c.
func (c *Server) Member(key group.Key, id string) *Member {
	return &Member{Member: membersim.New(id, nil), c: c, Key: key}
}

// Through makes m heartbeat through c from now on.
func (m *Member) Through(c *Server) { m.c = c }

// Heartbeat sends m's next heartbeat, applies the answer and returns it;
// a transport failure, an answer other than 200 or a status a
// protocol-following member never meets (INVALID_REQUEST,
// UNSUPPORTED_PROTOCOL) fails the test.
func (m *Member) Heartbeat() contract.HeartbeatResponse {
	m.c.t.Helper()
	m.Last, m.Header = m.c.heartbeat(m.Key, m.Member)
	return m.Last
}

// Heartbeat sends the next heartbeat of sim, a member of key's group (one
// a test drives itself, e.g. with an oracle), through c, applies the
// answer and returns it; it fails the test as Member.Heartbeat does.
func (c *Server) Heartbeat(key group.Key, sim *membersim.Member) contract.HeartbeatResponse {
	c.t.Helper()
	resp, _ := c.heartbeat(key, sim)
	return resp
}

func (c *Server) heartbeat(key group.Key, sim *membersim.Member) (contract.HeartbeatResponse, http.Header) {
	c.t.Helper()
	resp, h, err := membersim.HeartbeatHeader(c.t.Context(), c.HTTP.Client(), c.Base, key, sim)
	if err != nil {
		c.t.Fatalf("%s heartbeat to %s of %s: %v", sim.ID, c.ID, key, err)
	}
	if resp.Status == contract.StatusInvalidRequest || resp.Status == contract.StatusUnsupportedProtocol {
		c.t.Fatalf("%s heartbeat to %s of %s: status %s", sim.ID, c.ID, key, resp.Status)
	}
	return resp, h
}

// JoinHeartbeat is the path (under the base path) and JSON body of member
// id's first heartbeat to key's group, for tests that send it by hand
// (through another client, with other headers, to a fake cluster).
func JoinHeartbeat(t testing.TB, key group.Key, id string) (path, body string) {
	t.Helper()
	b, err := json.Marshal(membersim.New(id, nil).Request())
	if err != nil {
		t.Fatal(err)
	}
	return contract.HeartbeatPath(key.StreamPrefix, key.ConsumerGroup, id), string(b)
}

// Leave sends the graceful leave (epoch −1, nothing owned) and returns the
// answer.
func (m *Member) Leave() contract.HeartbeatResponse {
	m.c.t.Helper()
	m.Member.Leave()
	return m.Heartbeat()
}
