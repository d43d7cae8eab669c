package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// Ping checks that Redis answers, within ctx: PING on every master of a
// Redis Cluster (concurrently, after reading the cluster's layout), or on
// the one server of any other client. When only some masters answer it
// returns an *UnreachableError naming the others; when none answers, or
// the layout cannot be read, another error.
func Ping(ctx context.Context, client goredis.UniversalClient) error {
	cc, ok := client.(*goredis.ClusterClient)
	if !ok {
		return client.Ping(ctx).Err()
	}
	var (
		mu      sync.Mutex
		masters int
		down    []string
		errs    []error
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *goredis.Client) error {
		err := node.Ping(ctx).Err()
		mu.Lock()
		defer mu.Unlock()
		masters++
		if err != nil {
			addr := node.Options().Addr
			down = append(down, addr)
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		}
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("redis cluster layout: %w", err)
	case len(down) == 0:
		return nil
	case len(down) == masters:
		return fmt.Errorf("redis cluster: no master answered: %w", errors.Join(errs...))
	}
	slices.Sort(down)
	return &UnreachableError{Nodes: down, Masters: masters, Err: errors.Join(errs...)}
}

// UnreachableError is a partial outage of a Redis Cluster: Nodes (sorted
// addresses) of its Masters did not answer while the others did, so the
// groups in their slots can be neither read nor written.
type UnreachableError struct {
	Nodes   []string
	Masters int
	// Err joins the failure of each node.
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("redis cluster: %d of %d masters unreachable (%s): %v", len(e.Nodes), e.Masters, strings.Join(e.Nodes, ", "), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable returns Nodes (it makes e an httpapi.PartialOutage).
func (e *UnreachableError) Unreachable() []string { return e.Nodes }
