package main

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/config"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// The data plane: the coordinator's access to the Redis streams it
// coordinates, on the shared Redis client (nil when Redis is not
// configured, see config.RedisRequired).

// provisioner returns the stream provisioner when
// streams.provisioning-enabled is set (docs/protocol.md §6.6), nil otherwise. Provisioning
// makes Redis required, so the client is there whenever it is enabled.
func provisioner(cfg *config.Config, client goredis.UniversalClient) actors.Provisioner {
	if !cfg.Streams.ProvisioningEnabled || client == nil {
		return nil
	}
	return streams.NewProvisioner(client)
}

// drainChecker returns the Redis drain check of scale-ins (docs/protocol.md §6.4), nil
// without Redis (domainSettings then turns the check off).
func drainChecker(client goredis.UniversalClient) actors.DrainChecker {
	if client == nil {
		return nil
	}
	return streams.NewObserver(client)
}

// resetPositions returns the Redis steps of offset resets (live, forced,
// dry run), nil without Redis (the API then answers resets 503
// REDIS_NOT_CONFIGURED).
func resetPositions(client goredis.UniversalClient) actors.Positions {
	if client == nil {
		return nil
	}
	return streams.NewResetPositions(streams.NewOperator(client))
}

// dataPlane returns the reader behind /offsets, the message explorers and
// the Grafana rows, whose offset cache keeps observations for
// monitoring.offset-cache-ttl; nil without Redis (the API then answers
// the Redis reads 503 REDIS_NOT_CONFIGURED and the Grafana rows with
// unknown offsets).
func dataPlane(cfg *config.Config, client goredis.UniversalClient) *monitoring.Reader {
	if client == nil {
		return nil
	}
	return monitoring.NewReader(streams.NewObserver(client), nil, cfg.Monitoring.OffsetCacheTTL.Duration())
}

// streamOperator returns the offset-reset and dead-letter operations, nil
// without Redis (the API then answers them 503 REDIS_NOT_CONFIGURED).
func streamOperator(client goredis.UniversalClient) httpapi.StreamOperator {
	if client == nil {
		return nil
	}
	return streams.NewOperator(client)
}
