package group

import (
	"maps"
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// ShardOwners are the members in each ownership role of one shard, sorted
// by id. Target: the target assignment holds the shard. Current and
// Revoking: the member's current or revoking set holds it and the member
// still holds what it holds (Member.Holds: not EXPIRED, nor FENCED with
// nothing left).
type ShardOwners struct {
	Target, Current, Revoking []string
}

// State classifies o (the Grafana shard rows' ownerState,
// docs/protocol.md §2.7).
func (o ShardOwners) State() contract.OwnerState {
	switch {
	case len(o.Target) == 0 && len(o.Current) == 0:
		return contract.OwnerUnassigned
	case len(o.Current) == 0:
		return contract.OwnerPendingAck
	case slices.Equal(o.Target, o.Current):
		return contract.OwnerCurrent
	}
	return contract.OwnerTransitioning
}

// Owners maps every shard that has an owner in some role to its owners; a
// shard without any maps to the zero ShardOwners. It reads g only.
func (g *Group) Owners() map[int]ShardOwners {
	out := map[int]ShardOwners{}
	add := func(shards contract.ShardSet, id string, role func(*ShardOwners) *[]string) {
		for _, s := range shards {
			o := out[s]
			*role(&o) = append(*role(&o), id)
			out[s] = o
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.Targets)) {
		add(g.Targets[id], id, func(o *ShardOwners) *[]string { return &o.Target })
	}
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		if m := g.Members[id]; m.Holds() {
			add(m.CurrentAssignment, id, func(o *ShardOwners) *[]string { return &o.Current })
			add(m.Revoking, id, func(o *ShardOwners) *[]string { return &o.Revoking })
		}
	}
	return out
}
