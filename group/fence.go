package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// Fencing tokens (docs/protocol.md §4.1, assignment.fencingTokens;
// docs/client.md, "Fencing").
//
// A shard's token is the group epoch at which it was granted to the member
// that holds it: a heartbeat answer that grants a shard the member was not
// granted before records the group epoch beside it (Member.GrantEpochs),
// and every later answer that keeps the grant repeats it. The tokens of a
// shard grow strictly from one holder to the next because:
//
//   - a member is granted only shards of its target that no other owner
//     holds (revoke before assign), so between the grants of a shard to two
//     members the shard's target owner changed;
//   - targets change only on a G bump (reconcile: join, leave, expiry,
//     fencing, scale activation and rollback, pause and resume, a live
//     reset's start and end, a work rebalance), and the group epoch never
//     goes back;
//   - the grant is stored with the member record before the answer leaves
//     (group commit), so a restart or a takeover of the group by another
//     coordinator keeps the token, and a later grant is made at a later
//     epoch.
//
// A live reset revokes its shards (G bump) and grants them again after the
// positions are set (another G bump), so the first grant after a reset
// carries a token above every grant before it; so does every grant after a
// scale activation. One grant keeps its token while it lasts, across other
// members' joins and leaves. A grant lost and made again to the same member
// at the same epoch (a SYNC_METADATA answer dropped it, or a join replay of
// a restarted process that kept its member id) carries the same token:
// processes sharing a member id are not told apart (docs/protocol.md
// improvement 8b), so each process needs a member id of its own.

// grant sets m's granted set to assigned: a shard m was already granted
// keeps its grant epoch, any other gets the current group epoch.
func (t *tx) grant(m *Member, assigned contract.ShardSet) {
	if len(m.GrantEpochs) == len(assigned) && m.GrantedAssignment.Equal(assigned) {
		return // the steady heartbeat: the same grant, nothing to allocate
	}
	var epochs []int64
	if len(assigned) > 0 {
		epochs = make([]int64, len(assigned))
		for i, s := range assigned {
			if e, ok := m.grantEpoch(s); ok {
				epochs[i] = e
			} else {
				epochs[i] = t.g.GroupEpoch
			}
		}
	}
	m.GrantedAssignment, m.GrantEpochs = assigned, epochs
}

// grantEpoch returns the epoch at which shard was granted to m, false when
// m is not granted it (or its record predates grant epochs).
func (m *Member) grantEpoch(shard int) (int64, bool) {
	if len(m.GrantEpochs) != len(m.GrantedAssignment) {
		return 0, false
	}
	for i, s := range m.GrantedAssignment {
		if s == shard {
			return m.GrantEpochs[i], m.GrantEpochs[i] > 0
		}
	}
	return 0, false
}

// fences returns the fencing tokens of m's granted shards, in shard order.
func (m *Member) fences() contract.ShardFences {
	if len(m.GrantedAssignment) == 0 || len(m.GrantEpochs) != len(m.GrantedAssignment) {
		return nil
	}
	out := make(contract.ShardFences, len(m.GrantedAssignment))
	for i, s := range m.GrantedAssignment {
		out[i] = contract.ShardFence{ShardIndex: s, FencingToken: m.GrantEpochs[i]}
	}
	return out
}
