package messages

import (
	"errors"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// ErrProvisioning is matched (errors.Is) by every request that failed
// because the Redis streams of a group could not be provisioned or checked
// (docs/protocol.md §6.6): the group's metadata is left as the request's contract says
// (a failed create stores nothing, a failed scale stays PREPARING). The
// HTTP layer maps it to 503 REDIS_STREAM_PROVISIONING_FAILED.
var ErrProvisioning = errors.New("redis stream provisioning failed")

// Scale runs a group scale (docs/protocol.md §6.2). NewID is the id a new migration gets;
// StreamLevel marks a step of a stream scale (docs/protocol.md §6.3), for conflict metrics.
// Answered once the migration is ACTIVE, or with the noop migration.
type Scale struct {
	Routed
	Request     group.ScaleRequest
	NewID       string
	StreamLevel bool
	Reply       ReplyTo[group.Migration]
}

// CheckScale runs the per-group pre-checks of a stream scale (docs/protocol.md §2.5) on the
// committed state without changing anything: nil when Scale would start,
// resume or noop, else the error Scale would answer.
type CheckScale struct {
	Routed
	Request group.ScaleRequest
	Reply   ReplyTo[struct{}]
}

// Rollback rolls back migration ID (docs/protocol.md §6.5).
type Rollback struct {
	Routed
	ID      string
	Request group.RollbackRequest
	Reply   ReplyTo[group.Migration]
}

// Migrations is a group's migration history (docs/protocol.md §2.6 /migrations).
type Migrations struct {
	// List holds every migration ordered by creation time.
	List []group.Migration
	// ActiveReshardingID names the active migration, nil when none is.
	ActiveReshardingID *string
}

// GetSnapshot asks the group actor to publish its committed state (after
// revalidating a shared store past the read staleness) and answers the
// published snapshot: immutable and shared by every reader, so it is only
// read. Every read (GETs, monitoring, Grafana, member series) takes it.
type GetSnapshot struct {
	Routed
	Reply ReplyTo[*group.Group]
}

// StreamScale is the outcome of a stream scale (docs/protocol.md §2.5 #3).
type StreamScale struct {
	StreamPrefix     string
	TargetShardCount int
	// AffectedConsumerGroups lists the groups of the prefix, sorted; each
	// has the migration of the same index in Migrations.
	AffectedConsumerGroups []string
	Migrations             []group.Migration
}
