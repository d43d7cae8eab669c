package actors

import (
	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// workMsg hands a group assigned by work one measure of its shards
// (group.Rebalance, docs/assignment.md). It is an admin request: it runs
// alone in the critical section and stores the remembered weights and any
// move. Nobody waits for its answer.
type workMsg struct {
	routed
	Measure group.Measure
	Reply   replyTo[contract.WorkView]
}

// NotInfluenceReceiveTimeout: measures, like ticks, do not keep a group
// actor alive.
func (*workMsg) NotInfluenceReceiveTimeout() {}

func (m *workMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpRebalance, func(op core.Op) (contract.WorkView, error) {
		if g := a.core.Committed(); !g.Exists() || g.AssignorOf() != group.AssignorWork {
			return contract.WorkView{}, nil
		}
		d := a.step(op, core.Rebalance{Measure: m.Measure})
		return d.Work, d.Err
	})
}

// Rebalance sends a group one measure of its shards' work without waiting:
// a group assigned by work remembers the weights and may move shards
// (group.Rebalance); any other group ignores it. The lag refresher calls
// it after each read of a work-assigned group's streams.
func (c *System) Rebalance(key group.Key, m group.Measure) error {
	return c.send(&workMsg{routed: routed{Key: key}, Measure: m, Reply: newReplyTo[contract.WorkView]()})
}
