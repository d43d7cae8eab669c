package httpapi

import (
	"context"
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// StatusSource answers the consumption status and the scaling signal of
// the groups this coordinator evaluates (docs/observability.md,
// "Consumption status", "Scaling signal"); monitoring.Statuses
// implements it. The rules are its; the edge only asks.
type StatusSource interface {
	// Status is the body of GET GroupStatus for g (UNKNOWN before its
	// first evaluation).
	Status(g *group.Group) contract.StatusView
	// Scaling is the body of GET GroupScaling for g.
	Scaling(g *group.Group) contract.ScalingView
	// Summary is the status and desiredMembers of a group's view; ok is
	// false before its first evaluation.
	Summary(key group.Key) (status contract.ConsumptionStatus, desired int, ok bool)
}

// statusRoutes lists the consumption status and scaling routes, templates
// relative to the base path.
func (a *API) statusRoutes() []route {
	return []route{
		{Route{Method: http.MethodGet, Template: contract.GroupStatus}, read(a, a.groupStatus, asIs[contract.StatusView])},
		{Route{Method: http.MethodGet, Template: contract.GroupScaling}, read(a, a.groupScaling, asIs[contract.ScalingView])},
	}
}

// groupStatus answers GET GroupStatus: 404 for an unknown group, 503
// REDIS_NOT_CONFIGURED without Redis (nothing is evaluated).
func (a *API) groupStatus(ctx context.Context, key group.Key) (contract.StatusView, error) {
	g, err := a.evaluated(ctx, key)
	if err != nil {
		return contract.StatusView{}, err
	}
	return a.status.Status(g), nil
}

// groupScaling answers GET GroupScaling, as groupStatus.
func (a *API) groupScaling(ctx context.Context, key group.Key) (contract.ScalingView, error) {
	g, err := a.evaluated(ctx, key)
	if err != nil {
		return contract.ScalingView{}, err
	}
	return a.status.Scaling(g), nil
}

// evaluated returns key's committed snapshot, or why its status cannot be
// answered.
func (a *API) evaluated(ctx context.Context, key group.Key) (*group.Group, error) {
	g, err := a.runtime.Snapshot(ctx, key)
	if err != nil {
		return nil, err
	}
	if a.status == nil {
		return nil, errRedisNotConfigured
	}
	return g, nil
}

// group answers GET GroupTemplate: the group's view with its status
// (withStatus).
func (a *API) group(ctx context.Context, key group.Key) (contract.GroupView, error) {
	v, err := a.runtime.Group(ctx, key)
	if err != nil {
		return contract.GroupView{}, err
	}
	return a.withStatus(v), nil
}

// withStatus adds to v the status and desiredMembers of its group's last
// evaluation, when there is one.
func (a *API) withStatus(v contract.GroupView) contract.GroupView {
	if a.status == nil {
		return v
	}
	if status, desired, ok := a.status.Summary(group.Key{StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup}); ok {
		v.Status, v.DesiredMembers = status, &desired
	}
	return v
}
