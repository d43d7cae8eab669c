package contract

// The request bodies of the admin routes (docs/protocol.md §2) and the
// producer-routing answer. The server validates these bodies (package
// group, Validate*) and the client sends them as they are.

// CreateRequest is the body of the create endpoints (docs/protocol.md §2.2).
type CreateRequest struct {
	InitialShardCount *int    `json:"initialShardCount"`
	RequestedBy       string  `json:"requestedBy"`
	Reason            *string `json:"reason"`
	// Assignor is "count" or "work" (additive, docs/assignment.md); absent:
	// the coordinator's default (group.Settings.DefaultAssignor).
	Assignor *string `json:"assignor,omitempty"`
}

// DeleteRequest is the body of DELETE …/groups/{G} (docs/protocol.md §2.3).
type DeleteRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
	Force       bool   `json:"force"`
}

// ScaleRequest is the body of the scale endpoints (docs/protocol.md §2.5).
type ScaleRequest struct {
	TargetShardCount *int    `json:"targetShardCount"`
	RequestedBy      string  `json:"requestedBy"`
	Reason           *string `json:"reason"`
	DeprecatedAfter  *string `json:"deprecatedAfter"`
}

// RollbackRequest is the body of the rollback endpoint (docs/protocol.md §2.5).
type RollbackRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

// RoutingView is the producer-routing answer of docs/protocol.md §2.4: the
// stream key and Redis Cluster slot of every shard 0..ShardCount-1.
type RoutingView struct {
	StreamPrefix     string         `json:"streamPrefix"`
	ConsumerGroup    string         `json:"consumerGroup"`
	MetadataVersion  int64          `json:"metadataVersion"`
	ShardCount       int            `json:"shardCount"`
	StreamKeyPattern string         `json:"streamKeyPattern"`
	Shards           []RoutingShard `json:"shards"`
}

// RoutingShard is one entry of RoutingView.Shards.
type RoutingShard struct {
	ShardIndex int    `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int    `json:"redisSlot"`
}
