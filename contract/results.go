package contract

import "github.com/redis-stream-coordinator/coordinator/group"

// Routing is what producers need to route keys to shards (docs/protocol.md §2.4).
type Routing struct {
	StreamPrefix    string
	ConsumerGroup   string
	MetadataVersion int64
	ShardCount      int
}

// Migrations is a group's migration history (docs/protocol.md §2.6 /migrations).
type Migrations struct {
	// List holds every migration ordered by creation time.
	List []group.Migration
	// ActiveReshardingID names the active migration, nil when none is.
	ActiveReshardingID *string
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
