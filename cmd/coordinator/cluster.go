package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/config"
)

// joinCluster registers this coordinator in the store's registry and
// returns the node the actors and the HTTP layer consult. It does not
// wait: while the store is down, or after a crash until the previous
// run's lease has ended, the node retries and serves nothing.
func joinCluster(ctx context.Context, cfg *config.Config, back *backend, addr net.Addr, obs cluster.Observer, logger *slog.Logger) (*cluster.Node, error) {
	node, err := cluster.New(cluster.Options{
		Store:         back.cluster,
		ID:            cfg.ID,
		URL:           advertiseURL(cfg.Cluster.AdvertiseURL, addr, scheme(cfg.Server.TLS.Enabled())),
		LeaseTTL:      cfg.Cluster.LeaseTTL.Duration(),
		RenewInterval: cfg.Cluster.RenewInterval.Duration(),
		StoreTimeout:  cfg.Store.Timeout.Duration(),
		Observer:      obs,
		Logger:        logger,
	})
	if err != nil {
		return nil, err
	}
	node.Start(ctx)
	return node, nil
}

// advertiseURL is configured, or scheme:// and the listen address, with
// the host name for an address that listens on every interface.
func advertiseURL(configured string, addr net.Addr, scheme string) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// leaveCluster hands every group over to the coordinators it is placed on
// now (each group actor flushes, releases its group and stops; requests
// arriving meanwhile are forwarded), then deregisters. Groups still held
// when ctx ends, and a registry entry that cannot be removed (the store is
// down), are left to their lease: that is logged, not an error.
func leaveCluster(ctx context.Context, node *cluster.Node, coord *actors.System, logger *slog.Logger) {
	start := time.Now()
	node.Leave()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for coord.Actors() > 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-poll.C:
		}
	}
	if n := coord.Actors(); n > 0 {
		logger.Warn("cluster: leaving with groups not handed over; they move when the lease ends", "groups", n)
	} else {
		logger.Info("cluster: groups handed over", "took", time.Since(start).Round(time.Millisecond))
	}
	if err := node.Stop(ctx); err != nil {
		logger.Warn("cluster: deregister; the entry ends with its lease", "err", err)
	}
}
