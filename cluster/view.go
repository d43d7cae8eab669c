package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// View is the body of GET contract.ClusterTemplate: the live coordinators, every
// group's owner and placement, and this coordinator's recent handovers.
type View struct {
	Self         string            `json:"self"`
	Coordinators []CoordinatorView `json:"coordinators"`
	Groups       []GroupView       `json:"groups"`
	Handovers    []Handover        `json:"recentHandovers"`
}

// CoordinatorView is one live coordinator, how many groups it owns, and
// whether this coordinator refuses to forward requests to it.
type CoordinatorView struct {
	persistence.Coordinator
	GroupsOwned int `json:"groupsOwned"`
	// ForwardingRefused is why this coordinator does not forward requests
	// to it (InsecurePeer), if it does not; ForwardsRefused counts the
	// requests refused so since it advertised its URL.
	ForwardingRefused string `json:"forwardingRefused,omitempty"`
	ForwardsRefused   int64  `json:"forwardsRefused,omitempty"`
}

// GroupView is one group's ownership record and where it is placed.
type GroupView struct {
	StreamPrefix   string `json:"streamPrefix"`
	ConsumerGroup  string `json:"consumerGroup"`
	Owner          string `json:"owner"` // "" while no coordinator owns it
	OwnershipEpoch int64  `json:"ownershipEpoch"`
	PlacedOn       string `json:"placedOn"`
}

// Handover is one group this coordinator handed over.
type Handover struct {
	At            time.Time `json:"at"`
	StreamPrefix  string    `json:"streamPrefix"`
	ConsumerGroup string    `json:"consumerGroup"`
	From          string    `json:"from"`
	To            string    `json:"to"`
	Cause         string    `json:"cause"` // placement or shutdown
}

// handoverLog keeps the last handoverLogSize handovers.
type handoverLog struct {
	mu   sync.Mutex
	last []Handover
}

const handoverLogSize = 32

func (l *handoverLog) add(h Handover) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.last) == handoverLogSize {
		l.last = slices.Delete(l.last, 0, 1)
	}
	l.last = append(l.last, h)
}

func (l *handoverLog) list() []Handover {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.last)
}

// View reads the groups and their ownership records from the store.
func (n *Node) View(ctx context.Context) (View, error) {
	keys, err := n.opts.Store.List(ctx)
	if err != nil {
		return View{}, fmt.Errorf("cluster view: list groups: %w", err)
	}
	owners, err := n.opts.Store.Owners(ctx, keys)
	if err != nil {
		return View{}, fmt.Errorf("cluster view: %w", err)
	}
	live := n.Live()
	v := View{Self: n.opts.ID, Coordinators: make([]CoordinatorView, len(live)), Groups: make([]GroupView, len(keys)), Handovers: n.handovers.list()}
	owned := map[string]int{}
	for i, k := range keys {
		g := GroupView{StreamPrefix: k.StreamPrefix, ConsumerGroup: k.ConsumerGroup, Owner: owners[i].Coordinator, OwnershipEpoch: owners[i].Epoch}
		if p, ok := n.Placed(k.StreamPrefix); ok {
			g.PlacedOn = p.ID
		}
		owned[g.Owner]++
		v.Groups[i] = g
	}
	refused := n.refusals.of(live)
	for i, c := range live {
		c.Token = ""
		r := refused[c.ID]
		v.Coordinators[i] = CoordinatorView{Coordinator: c, GroupsOwned: owned[c.ID], ForwardingRefused: r.cause, ForwardsRefused: r.count}
	}
	if v.Handovers == nil {
		v.Handovers = []Handover{}
	}
	return v, nil
}
