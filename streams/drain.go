package streams

import (
	"context"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// Drained reports whether every consumer group (not only the coordinator's
// group) of every shard key StreamKey(prefix, i), i in shards, has consumed
// and acknowledged everything: pending == 0 and a known lag == 0 (docs/protocol.md §6.4). A
// key whose XINFO GROUPS fails with an error reply (e.g. no such key) has no
// groups and is drained; an unknown lag is not drained. The keys are read in
// one pipeline; a transport failure is returned as an error, never as
// drained.
func (o *Observer) Drained(ctx context.Context, prefix string, shards []int) (bool, error) {
	pipe := o.client.Pipeline()
	cmds := make([]*redis.XInfoGroupsCmd, len(shards))
	for j, i := range shards {
		cmds[j] = pipe.XInfoGroups(ctx, contract.StreamKey(prefix, i))
	}
	_, _ = pipe.Exec(ctx)
	drained := true
	for j, cmd := range cmds {
		if err := replyOrNil(cmd.Err()); err != nil {
			return false, fmt.Errorf("streams: drain check of %s: %w", contract.StreamKey(prefix, shards[j]), err)
		}
		for _, g := range cmd.Val() {
			if lag := knownLag(g); g.Pending != 0 || lag == nil || *lag != 0 {
				drained = false
			}
		}
	}
	return drained, nil
}
