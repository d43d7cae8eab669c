package group_test

import (
	memberstate "github.com/redis-stream-coordinator/coordinator/client/member"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// client is a consumer process following the protocol: it runs the member
// state machine of package client/member (what each heartbeat reports, what the
// process reads, its local lease) against a grouptest.Context, on the
// context's clock, the heartbeat being answered at the instant it is sent.
// What the process does with the shards member.State stops is the test's
// choice: a fast client has nothing in flight and releases them at once, a
// slow one keeps handling them (reported DRAINING) until finishDrain.
type client struct {
	id   string
	st   *memberstate.State
	slow bool
	// gone is set by tests that took the process out of their rounds.
	gone bool
}

func newClient(id string) *client {
	return &client{id: id, st: memberstate.New(memberstate.Config{ID: id})}
}

// holding returns a client of c that reads shards at epoch and metadata
// version mv, as if an OK answer at c.Now had assigned them.
func holding(c *grouptest.Context, id string, epoch, mv int64, shards contract.ShardSet) *client {
	cl := newClient(id)
	resp := contract.HeartbeatResponse{Status: contract.StatusOK, MemberEpoch: epoch, MetadataVersion: mv, MemberLeaseTtlMs: c.Settings.MemberLeaseTTL.Milliseconds()}
	resp.Assignment.AssignedShards = shards
	cl.handle(cl.request(), resp, c.Now)
	return cl
}

// request builds the next heartbeat.
func (cl *client) request() contract.HeartbeatRequest { return cl.st.Request() }

// handle applies resp, the answer to req, which was sent and answered at now.
func (cl *client) handle(req contract.HeartbeatRequest, resp contract.HeartbeatResponse, now contract.Instant) {
	cl.st.Apply(req, resp, now.Time(), now.Time())
	cl.settle()
}

// settle releases what a fast client stopped: nothing of it is in flight.
func (cl *client) settle() {
	if !cl.slow {
		cl.finishDrain()
	}
}

// leave asks to leave: the process stops reading; it sends the leave once
// nothing is in flight.
func (cl *client) leave() {
	cl.st.Leave()
	cl.settle()
}

// finishDrain ends every handler call in flight: the stopped shards are
// released (reported REVOKED).
func (cl *client) finishDrain() {
	for _, sh := range cl.st.Draining() {
		cl.st.SetInFlight(sh, 0)
	}
}

// lapse applies the local lease at now: once it has ended the process
// stops reading and cancels what it still handles.
func (cl *client) lapse(now contract.Instant) {
	if end, ok := cl.st.LeaseEnd(); ok && now >= contract.InstantOf(end) {
		cl.st.Tick(now.Time())
		cl.finishDrain()
	}
}

// leaseEnd is when the local lease ends (0 while there is none).
func (cl *client) leaseEnd() contract.Instant {
	if end, ok := cl.st.LeaseEnd(); ok {
		return contract.InstantOf(end)
	}
	return 0
}

func (cl *client) owned() contract.ShardSet    { return cl.st.Owned() }
func (cl *client) draining() contract.ShardSet { return cl.st.Draining() }
func (cl *client) reading() contract.ShardSet  { return cl.st.Reading() }
func (cl *client) epoch() int64                { return cl.st.Epoch() }

// restart drops the process state: a new process with the same id.
func (cl *client) restart() { cl.st.Restart() }

// beat sends the client's next heartbeat through c and applies the answer.
func (cl *client) beat(c *grouptest.Context) contract.HeartbeatResponse {
	req := cl.request()
	resp := c.Heartbeat(req)
	cl.handle(req, resp, c.Now)
	return resp
}
