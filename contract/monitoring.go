package contract

// The data-plane monitoring answers (docs/protocol.md §2.6 /offsets): where
// each shard stream of a group stands in Redis and in its consumer group,
// with the group's owners, the members' reported progress and the observed
// rates. Package monitoring builds them.

// Offsets is the body of GET MonitoringOffsets (docs/protocol.md §2.6),
// plus the group's observed rates.
type Offsets struct {
	StreamPrefix      string        `json:"streamPrefix"`
	ConsumerGroup     string        `json:"consumerGroup"`
	Shards            []ShardOffset `json:"shards"`
	TotalStreamLength int64         `json:"totalStreamLength"`
	TotalPendingCount int64         `json:"totalPendingCount"`
	// TotalLag is null when any shard's lag is unknown.
	TotalLag *int64 `json:"totalLag"`
	// TotalMemoryUsageBytes sums the known values; MemoryUsageKnown
	// reports whether all were known.
	TotalMemoryUsageBytes int64 `json:"totalMemoryUsageBytes"`
	MemoryUsageKnown      bool  `json:"memoryUsageKnown"`
	// ProducedPerSecond and ConsumedPerSecond sum the shards' known rates;
	// null when none is known.
	ProducedPerSecond *float64 `json:"producedPerSecond"`
	ConsumedPerSecond *float64 `json:"consumedPerSecond"`
	// OldestUnreadAgeSeconds is the largest of the shards' known
	// OldestUnreadAgeSeconds: the group's lag as time. Null when no shard's
	// is known.
	OldestUnreadAgeSeconds *float64 `json:"oldestUnreadAgeSeconds"`
}

// ShardOffset is one StreamShardOffset of docs/protocol.md §2.6, plus the
// shard's rates.
type ShardOffset struct {
	StreamPrefix  string `json:"streamPrefix"`
	ConsumerGroup string `json:"consumerGroup"`
	Shard         Shard  `json:"shard"`
	StreamPosition
	// OwnerMemberIDs are the live members whose current assignment holds
	// the shard, sorted.
	OwnerMemberIDs []string `json:"ownerMemberIds"`
	// ProducedPerSecond and ConsumedPerSecond are the rates since the
	// previous observation of the shard; null on the first one, and
	// ConsumedPerSecond also when a lag is unknown.
	ProducedPerSecond *float64 `json:"producedPerSecond"`
	ConsumedPerSecond *float64 `json:"consumedPerSecond"`
	// OldestUnreadAgeSeconds is how long the shard's oldest entry not yet
	// delivered to the group has been in the stream: the time since the
	// millisecond part of its id (Redis's clock; never negative). It is 0
	// when no entry is unread and null when unknown (no consumer group on
	// the shard).
	OldestUnreadAgeSeconds *float64 `json:"oldestUnreadAgeSeconds"`
}

// StreamPosition is where one shard stream stands in Redis and in its
// consumer group: the scalar fields of a StreamShardOffset
// (docs/protocol.md §2.6), shared by /offsets and the Grafana shard rows.
type StreamPosition struct {
	StreamKey           string  `json:"streamKey"`
	RedisSlot           int     `json:"redisSlot"`
	RedisNodeEndpoint   *string `json:"redisNodeEndpoint"`
	RedisNodeID         *string `json:"redisNodeId"`
	RedisSlotRangeStart *int    `json:"redisSlotRangeStart"`
	RedisSlotRangeEnd   *int    `json:"redisSlotRangeEnd"`
	StreamLength        int64   `json:"streamLength"`
	FirstRecordID       *string `json:"firstRecordId"`
	LastRecordID        *string `json:"lastRecordId"`
	LastGeneratedID     *string `json:"lastGeneratedId"`
	// GroupLastDeliveredID is the consumer group's last-delivered-id.
	GroupLastDeliveredID *string `json:"groupLastDeliveredId"`
	// ConsumerLastDeliveredID and ConsumerLastAckedID come from the newest
	// member-reported progress of the shard.
	ConsumerLastDeliveredID *string `json:"consumerLastDeliveredId"`
	ConsumerLastAckedID     *string `json:"consumerLastAckedId"`
	// PendingCount is the consumer group's pending count, else the newest
	// member-reported one, else 0.
	PendingCount int64 `json:"pendingCount"`
	// Lag is the entries not yet delivered to the group (the stream's
	// length where Redis cannot tell and every entry is unread); null when
	// unknown, never negative.
	Lag              *int64 `json:"lag"`
	MemoryUsageBytes *int64 `json:"memoryUsageBytes"`
}
