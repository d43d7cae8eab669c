package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// healthReport serves #13: always 200 (docs/protocol.md §10.2).
func (a *API) healthReport(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeJSON(w, http.StatusOK, a.health.Check(r.Context()))
}

// compatibilityJSON is the constant body of #14 (docs/protocol.md §2.6).
var compatibilityJSON = json.RawMessage(`{"currentCoordinationVersion":1,"supportedCoordinationVersions":{"min":1,"max":1},` +
	`"coordinationVersions":[{"version":1,"status":"ACTIVE",` +
	`"introducedIn":{"major":0,"minor":1,"patch":0,"qualifier":null,"version":"0.1.0"},"deprecatedIn":null,` +
	`"minimumSupportedUntil":{"major":1,"minor":0,"patch":0,"qualifier":null,"version":"1.0.0"},"removedIn":null,` +
	`"timingDefaults":{"heartbeatInterval":"PT3S","memberLeaseTtl":"PT15S","rebalanceTimeout":"PT1M"}}]}`)

// compatibility serves #14.
func compatibility(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	writeJSON(w, http.StatusOK, compatibilityJSON)
}

// groupsResponse is the body of #15.
type groupsResponse struct {
	Groups []group.GroupView `json:"groups"`
}

// listGroups serves #15.
func (a *API) listGroups(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	groups, err := a.groups(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, groupsResponse{Groups: nonNil(groups)})
}

// groups returns the views of the groups the caller of ctx may see
// (visible): every group without access control.
func (a *API) groups(ctx context.Context) ([]group.GroupView, error) {
	views, err := a.coord.Groups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]group.GroupView, 0, len(views))
	for _, v := range views {
		if visible(ctx, group.Key{StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup}) {
			out = append(out, v)
		}
	}
	return out, nil
}

// monitoringGroup is the body of #16: the GroupResponse plus what operators
// look at next.
type monitoringGroup struct {
	group.GroupView
	// RecentMutations are the latest audit events of the group and its
	// stream, newest first (see API.recentMutations).
	RecentMutations []audit.Event `json:"recentMutations"`
}

// groupWithMutations fetches #16's body.
func (a *API) groupWithMutations(ctx context.Context, key group.Key) (monitoringGroup, error) {
	v, err := a.coord.Group(ctx, key)
	if err != nil {
		return monitoringGroup{}, err
	}
	return monitoringGroup{GroupView: v, RecentMutations: a.recentMutations(ctx, key)}, nil
}

// membersResponse is the body of #17.
type membersResponse struct {
	Members []group.Member `json:"members"`
}

func membersBody(_ group.Key, members []group.Member) any {
	return membersResponse{Members: nonNil(members)}
}

// progressRow is one row of #19 (docs/protocol.md §2.6 /consumption).
type progressRow struct {
	StreamPrefix    string            `json:"streamPrefix"`
	ConsumerGroup   string            `json:"consumerGroup"`
	MemberID        string            `json:"memberId"`
	MemberName      string            `json:"memberName"`
	MemberState     group.MemberState `json:"memberState"`
	Shard           contract.Shard    `json:"shard"`
	StreamKey       string            `json:"streamKey"`
	LastDeliveredID *string           `json:"lastDeliveredId"`
	LastAckedID     *string           `json:"lastAckedId"`
	PendingCount    int64             `json:"pendingCount"`
	UpdatedAt       contract.Instant  `json:"updatedAt"`
}

// consumptionResponse is the body of #19.
type consumptionResponse struct {
	Progress []progressRow `json:"progress"`
}

// consumptionBody flattens every member's reported shard progress, sorted
// by member id then shard index. A row without a reported stream key gets
// the shard's key "P:i".
func consumptionBody(key group.Key, members []group.Member) any {
	rows := []progressRow{}
	for _, m := range members {
		for _, p := range m.ShardProgress {
			sk := contract.StreamKey(key.StreamPrefix, p.Shard.ShardIndex)
			if p.StreamKey != nil {
				sk = *p.StreamKey
			}
			rows = append(rows, progressRow{
				StreamPrefix:    key.StreamPrefix,
				ConsumerGroup:   key.ConsumerGroup,
				MemberID:        m.MemberID,
				MemberName:      m.MemberName,
				MemberState:     m.State,
				Shard:           p.Shard,
				StreamKey:       sk,
				LastDeliveredID: p.LastDeliveredID,
				LastAckedID:     p.LastAckedID,
				PendingCount:    p.PendingCount,
				UpdatedAt:       p.UpdatedAt,
			})
		}
	}
	slices.SortStableFunc(rows, func(x, y progressRow) int {
		return cmp.Or(cmp.Compare(x.MemberID, y.MemberID), cmp.Compare(x.Shard.ShardIndex, y.Shard.ShardIndex))
	})
	return consumptionResponse{Progress: rows}
}

// nonNil makes a nil slice encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
