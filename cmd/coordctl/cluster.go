package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

func init() {
	register(command{
		name: "cluster", synopsis: "", minArgs: 0, maxArgs: 0,
		summary: "the live coordinators, the groups each owns, handovers",
		help: `Shows the coordinator cluster (GET /cluster): each live coordinator with
the number of groups it owns and the number placed on it (they differ
while groups move), its registry lease, and which one answered (STATE self); then how many
groups have no owner or are owned away from their placement, and the
answering coordinator's recent handovers. -o json prints the whole
view, every group's owner and placement included.`,
		setup: func(*flag.FlagSet) func(*call) error { return clusterView },
	})
}

// clusterSummary counts the groups of a cluster view.
type clusterSummary struct {
	placed    map[string]int // groups placed on each coordinator
	unowned   int            // groups no coordinator owns
	elsewhere int            // owned by a coordinator other than their placement
}

func summarize(v contract.ClusterView) clusterSummary {
	s := clusterSummary{placed: map[string]int{}}
	for _, g := range v.Groups {
		s.placed[g.PlacedOn]++
		switch {
		case g.Owner == "":
			s.unowned++
		case g.Owner != g.PlacedOn:
			s.elsewhere++
		}
	}
	return s
}

func clusterView(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	v, err := coord.Cluster(c.ctx)
	if ae, ok := errors.AsType[*client.APIError](err); ok && ae.StatusCode == http.StatusNotFound {
		return &exitError{exitNotFound, "this coordinator serves no cluster view (GET /cluster: 404): it predates clustering"}
	}
	if err != nil {
		return err
	}
	s := summarize(v)
	return c.print(v, func(t *tableWriter) {
		t.row("COORDINATOR", "URL", "STATE", "GROUPS-OWNED", "GROUPS-PLACED", "LEASE-UNTIL")
		for _, co := range v.Coordinators {
			state := "live"
			if co.ID == v.Self {
				state = "live, self"
			}
			t.row(co.ID, co.URL, state, co.GroupsOwned, s.placed[co.ID], co.LeaseExpiresAt.UTC().Format(time.RFC3339))
		}
		t.row("")
		t.row(fmt.Sprintf("Groups: %d; without an owner: %d; owned away from their placement (moving): %d", len(v.Groups), s.unowned, s.elsewhere))
		if len(v.Handovers) == 0 {
			return
		}
		t.row("")
		t.row("HANDED-OVER-AT", "GROUP", "FROM", "TO", "CAUSE")
		for _, h := range v.Handovers {
			t.row(h.At.UTC().Format(time.RFC3339), h.StreamPrefix+"/"+h.ConsumerGroup, h.From, h.To, h.Cause)
		}
	})
}
