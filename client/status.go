package client

import (
	"context"
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Status reads the consumption status of group g of stream prefix p (GET
// …/status): the group's and each shard's, with since when and the
// evidence (docs/observability.md, "Consumption status").
func (c *Coordinator) Status(ctx context.Context, p, g string) (contract.StatusView, error) {
	var out contract.StatusView
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.GroupStatus, p, g), nil, &out)
	return out, err
}

// Scaling reads the scaling signal of group g of stream prefix p (GET
// …/scaling): desiredMembers and its inputs (docs/observability.md,
// "Scaling signal").
func (c *Coordinator) Scaling(ctx context.Context, p, g string) (contract.ScalingView, error) {
	var out contract.ScalingView
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.GroupScaling, p, g), nil, &out)
	return out, err
}
