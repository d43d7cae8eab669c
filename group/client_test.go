package group_test

import (
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/grouptest"
)

// client is a protocol-following consumer process (docs/protocol.md §4.9): it reads only the
// shards an OK response assigned (REVOKE_PENDING and SYNC_METADATA only
// shrink what it reads), reports them as owned, reports shards it stopped
// reading once as REVOKED/0, echoes the epoch and metadata version of the
// last response, and starts over with epoch 0 after FENCED or UNKNOWN.
type client struct {
	id      string
	epoch   int64
	mv      int64
	owned   group.ShardSet // what the process reads
	revoked group.ShardSet // stopped reading, not yet reported
	// slow clients drain what they must release (as the starter does): the
	// shards stay read and are reported DRAINING/1 until finishDrain.
	slow     bool
	draining group.ShardSet
	// leaving is set once the process asked to leave; it then reads nothing
	// and sends epoch −1 until an answer arrives.
	leaving bool
	// done is set when a leaving process got its answer: it is gone.
	done bool
	// leaseEnd is the member's local lease: one lease TTL after the send
	// time of its last answered heartbeat. The process reads nothing once
	// it has passed (the member's side of the safety contract).
	leaseEnd group.Instant
}

func newClient(id string) *client { return &client{id: id} }

// request builds the next heartbeat.
func (cl *client) request() group.HeartbeatRequest {
	req := group.HeartbeatRequest{
		MemberID:        cl.id,
		MemberEpoch:     cl.epoch,
		MetadataVersion: cl.mv,
		OwnedShards:     cl.owned,
		RevokingShards:  append(grouptest.Revoked(cl.revoked...), grouptest.Draining(cl.draining...)...),
	}
	if cl.leaving {
		req.MemberEpoch = -1
		req.OwnedShards = nil
	}
	return req
}

// handle applies the response to the request req.
func (cl *client) handle(req group.HeartbeatRequest, resp group.HeartbeatResponse) {
	sent := make([]int, 0, len(req.RevokingShards))
	drained := true
	for _, r := range req.RevokingShards {
		if r.Terminal() {
			sent = append(sent, r.Shard.ShardIndex)
		} else {
			drained = false
		}
	}
	cl.revoked = cl.revoked.Minus(group.NewShardSet(sent...))
	if cl.leaving {
		switch resp.Status {
		case group.StatusOK:
			cl.done = drained && len(cl.draining) == 0
		case group.StatusUnknownMemberID, group.StatusFencedMemberEpoch:
			cl.done = true
		}
		if cl.done {
			cl.draining, cl.revoked = nil, nil
		}
		return
	}
	var keep group.ShardSet
	switch resp.Status {
	case group.StatusOK:
		keep = resp.Assignment.AssignedShards
	case group.StatusRevokePending, group.StatusSyncMetadata:
		keep = cl.owned.Intersect(resp.Assignment.AssignedShards)
	case group.StatusRetry:
		return
	default: // FENCED, UNKNOWN, INVALID, UNSUPPORTED: drop everything
		cl.owned, cl.revoked, cl.draining, cl.epoch = nil, nil, nil, 0
		if resp.MetadataVersion > 0 {
			cl.mv = resp.MetadataVersion
		}
		return
	}
	if cl.slow {
		cl.draining = cl.draining.Union(cl.owned.Minus(keep))
	} else {
		cl.revoked = cl.revoked.Union(cl.owned.Minus(keep))
	}
	cl.owned = keep
	cl.epoch = resp.MemberEpoch
	cl.mv = resp.MetadataVersion
}

// leave asks to leave: a slow client drains what it reads first, any other
// stops reading at once and reports everything REVOKED.
func (cl *client) leave() {
	if cl.slow {
		cl.draining = cl.draining.Union(cl.owned)
	} else {
		cl.revoked = cl.revoked.Union(cl.owned)
	}
	cl.owned = nil
	cl.leaving = true
}

// finishDrain stops reading the draining shards; they are reported REVOKED.
func (cl *client) finishDrain() {
	cl.revoked = cl.revoked.Union(cl.draining)
	cl.draining = nil
}

// lapse stops reading everything: the local lease ran out. What was read
// is reported REVOKED from now on.
func (cl *client) lapse() {
	cl.revoked = cl.revoked.Union(cl.owned).Union(cl.draining)
	cl.owned, cl.draining = nil, nil
}

// reading is every shard the process reads.
func (cl *client) reading() group.ShardSet { return cl.owned.Union(cl.draining) }

// restart drops the process state: a new process with the same id.
func (cl *client) restart() { *cl = client{id: cl.id, mv: cl.mv, slow: cl.slow} }

// answered reports whether resp renews the member's local lease.
func answered(resp group.HeartbeatResponse) bool {
	switch resp.Status {
	case group.StatusOK, group.StatusRevokePending, group.StatusSyncMetadata:
		return true
	}
	return false
}

// beat sends the client's next heartbeat through c and applies the answer.
func (cl *client) beat(c *grouptest.Context) group.HeartbeatResponse {
	req := cl.request()
	resp := c.Heartbeat(req)
	cl.handle(req, resp)
	return resp
}
