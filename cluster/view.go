package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// handoverLog keeps the last handoverLogSize handovers.
type handoverLog struct {
	mu   sync.Mutex
	last []contract.Handover
}

const handoverLogSize = 32

func (l *handoverLog) add(h contract.Handover) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.last) == handoverLogSize {
		l.last = slices.Delete(l.last, 0, 1)
	}
	l.last = append(l.last, h)
}

func (l *handoverLog) list() []contract.Handover {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.last)
}

// View answers GET contract.ClusterTemplate: the live coordinators, the
// groups and their ownership records read from the store, and this
// coordinator's recent handovers.
func (n *Node) View(ctx context.Context) (contract.ClusterView, error) {
	keys, err := n.opts.Store.List(ctx)
	if err != nil {
		return contract.ClusterView{}, fmt.Errorf("cluster view: list groups: %w", err)
	}
	owners, err := n.opts.Store.Owners(ctx, keys)
	if err != nil {
		return contract.ClusterView{}, fmt.Errorf("cluster view: %w", err)
	}
	live := n.Live()
	v := contract.ClusterView{Self: n.opts.ID, Coordinators: make([]contract.ClusterCoordinator, len(live)), Groups: make([]contract.ClusterGroup, len(keys)), Handovers: n.handovers.list()}
	owned := map[string]int{}
	for i, k := range keys {
		g := contract.ClusterGroup{StreamPrefix: k.StreamPrefix, ConsumerGroup: k.ConsumerGroup, Owner: owners[i].Coordinator, OwnershipEpoch: owners[i].Epoch}
		if p, ok := n.Placed(k.StreamPrefix); ok {
			g.PlacedOn = p.ID
		}
		owned[g.Owner]++
		v.Groups[i] = g
	}
	refused := n.refusals.of(live)
	for i, c := range live {
		r := refused[c.ID]
		v.Coordinators[i] = contract.ClusterCoordinator{ID: c.ID, URL: c.URL, LeaseExpiresAt: c.ExpiresAt, GroupsOwned: owned[c.ID],
			ForwardingRefused: r.cause, ForwardsRefused: r.count}
	}
	if v.Handovers == nil {
		v.Handovers = []contract.Handover{}
	}
	return v, nil
}
