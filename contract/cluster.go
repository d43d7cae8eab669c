package contract

import "time"

// ClusterView is the body of GET ClusterTemplate (docs/cluster.md): the
// live coordinators, every group's owner and placement, and the answering
// coordinator's recent handovers.
type ClusterView struct {
	Self         string               `json:"self"`
	Coordinators []ClusterCoordinator `json:"coordinators"`
	Groups       []ClusterGroup       `json:"groups"`
	Handovers    []Handover           `json:"recentHandovers"`
}

// ClusterCoordinator is one live coordinator, how many groups it owns, and
// whether the answering coordinator refuses to forward requests to it.
type ClusterCoordinator struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// LeaseExpiresAt is when its registry lease ends, on the store's clock.
	LeaseExpiresAt time.Time `json:"leaseExpiresAt"`
	GroupsOwned    int       `json:"groupsOwned"`
	// ForwardingRefused is why requests are not forwarded to it, if they
	// are not; ForwardsRefused counts the requests refused so since it
	// advertised its URL.
	ForwardingRefused string `json:"forwardingRefused,omitempty"`
	ForwardsRefused   int64  `json:"forwardsRefused,omitempty"`
}

// ClusterGroup is one group's ownership record and where it is placed.
type ClusterGroup struct {
	StreamPrefix   string `json:"streamPrefix"`
	ConsumerGroup  string `json:"consumerGroup"`
	Owner          string `json:"owner"` // "" while no coordinator owns it
	OwnershipEpoch int64  `json:"ownershipEpoch"`
	PlacedOn       string `json:"placedOn"`
}

// Handover is one group the answering coordinator handed over.
type Handover struct {
	At            time.Time `json:"at"`
	StreamPrefix  string    `json:"streamPrefix"`
	ConsumerGroup string    `json:"consumerGroup"`
	From          string    `json:"from"`
	To            string    `json:"to"`
	Cause         string    `json:"cause"` // placement or shutdown
}
