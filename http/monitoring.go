package httpapi

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// healthReport serves #13: always 200 (docs/protocol.md §10.2).
func (a *API) healthReport(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeJSON(w, http.StatusOK, a.health.Check(r.Context()))
}

// compatibilityBody is the constant body of #14 (docs/protocol.md §2.6).
var compatibilityBody = contract.Compatibility{
	CurrentCoordinationVersion:    1,
	SupportedCoordinationVersions: contract.VersionRange{Min: 1, Max: 1},
	CoordinationVersions: []contract.CoordinationVersion{{
		Version: 1, Status: "ACTIVE",
		IntroducedIn:          contract.ReleaseVersion{Major: 0, Minor: 1, Patch: 0, Version: "0.1.0"},
		MinimumSupportedUntil: contract.ReleaseVersion{Major: 1, Minor: 0, Patch: 0, Version: "1.0.0"},
		TimingDefaults:        contract.TimingDefaults{HeartbeatInterval: "PT3S", MemberLeaseTTL: "PT15S", RebalanceTimeout: "PT1M"},
	}},
}

// compatibility serves #14.
func compatibility(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	writeJSON(w, http.StatusOK, compatibilityBody)
}

// listGroups serves #15.
func (a *API) listGroups(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	groups, err := a.groups(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, contract.GroupList{Groups: nonNil(groups)})
}

// groups returns the views of the groups the caller of ctx may see
// (visible): every group without access control, each with its status
// (withStatus).
func (a *API) groups(ctx context.Context) ([]contract.GroupView, error) {
	views, err := a.runtime.Groups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]contract.GroupView, 0, len(views))
	for _, v := range views {
		if visible(ctx, group.Key{StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup}) {
			out = append(out, a.withStatus(v))
		}
	}
	return out, nil
}

// groupWithMutations fetches #16's body: the group and its latest audit
// events (API.recentMutations).
func (a *API) groupWithMutations(ctx context.Context, key group.Key) (contract.MonitoredGroup, error) {
	v, err := a.runtime.Group(ctx, key)
	if err != nil {
		return contract.MonitoredGroup{}, err
	}
	events := a.recentMutations(ctx, key)
	out := contract.MonitoredGroup{GroupView: a.withStatus(v), RecentMutations: make([]contract.AuditEvent, len(events))}
	for i, e := range events {
		out.RecentMutations[i] = contract.AuditEvent(e)
	}
	return out, nil
}

func membersBody(_ group.Key, members []group.Member) any { return group.MemberViews(members) }

func consumptionBody(key group.Key, members []group.Member) any {
	return group.Consumption(key, members)
}

// nonNil makes a nil slice encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
