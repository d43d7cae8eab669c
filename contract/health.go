package contract

// HealthReport is the body of GET /monitoring/health and /actuator/health
// (docs/protocol.md §10.2). The HTTP edge serves it and package metrics
// reads its status (observe.HealthChecker produces it).
type HealthReport struct {
	Status        string `json:"status"`
	CoordinatorID string `json:"coordinatorId"`
	Redis         string `json:"redis"`
	// RedisUnreachable names the Redis nodes that did not answer while
	// Redis is DEGRADED.
	RedisUnreachable []string `json:"redisUnreachable,omitempty"`
	Loop             string   `json:"loop"`
	// Store is omitted when zero (no store reported).
	Store StoreHealth `json:"store,omitzero"`
	// Cluster is ClusterServing or ClusterNotServing; omitted when empty
	// (no cluster membership reported).
	Cluster string `json:"cluster,omitempty"`
}

// Ready reports whether the coordinator can serve: its metadata store is
// UP (a report without a store counts as UP) and it is not NOT_SERVING.
func (r HealthReport) Ready() bool {
	return (r.Store.Status == "" || r.Store.Status == StoreUp) && r.Cluster != ClusterNotServing
}

// Redis states of the health report (docs/protocol.md §10.2), and
// DEGRADED: some masters of a Redis Cluster do not answer (the report's
// redisUnreachable names them).
const (
	RedisNotConfigured = "NOT_CONFIGURED"
	RedisUp            = "UP"
	RedisDegraded      = "DEGRADED"
	RedisDown          = "DOWN"
	RedisUnknown       = "UNKNOWN"
)

// Store states of the health report's "store" member.
const (
	StoreUp       = "UP"
	StoreDegraded = "DEGRADED"
	StoreDown     = "DOWN"
	StoreUnknown  = "UNKNOWN"
)

// StoreHealth is the "store" member of the health report: the metadata
// store's type (memory, redis, jdbc), its circuit breaker's state (closed,
// half-open, open) and its status: DOWN while the breaker is open or the
// store failed its last probe, DEGRADED while only some of its nodes
// answered it (a Redis Cluster with masters down, named in Unreachable),
// UNKNOWN before the first probe ends, else UP. Readiness (/readyz,
// /actuator/health) answers 503 unless it is UP; while it is DOWN or
// DEGRADED the report's status is DEGRADED.
type StoreHealth struct {
	Type        string   `json:"type"`
	Breaker     string   `json:"breaker"`
	Status      string   `json:"status"`
	Unreachable []string `json:"unreachable,omitempty"`
}

// Cluster states of the health report's "cluster" member: whether this
// coordinator serves the groups placed on it (its registry lease is live)
// or not (it has not registered yet, its lease lapsed, or it is leaving).
// Readiness answers 503 while it is NOT_SERVING, and the report's status
// is DEGRADED.
const (
	ClusterServing    = "SERVING"
	ClusterNotServing = "NOT_SERVING"
)
