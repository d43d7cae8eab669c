package contract

// The message explorer's answer (docs/protocol.md §2.6
// /shards/{shardIndex}/messages): one page of a shard stream's entries.

// Direction is the order in which a page lists stream entries.
type Direction string

const (
	// DirectionForward lists oldest first.
	DirectionForward Direction = "FORWARD"
	// DirectionBackward lists newest first, the default.
	DirectionBackward Direction = "BACKWARD"
)

// MessagesPage is the body of GET MonitoringMessages.
type MessagesPage struct {
	StreamPrefix  string          `json:"streamPrefix"`
	ConsumerGroup string          `json:"consumerGroup"`
	Shard         Shard           `json:"shard"`
	StreamKey     string          `json:"streamKey"`
	Direction     Direction       `json:"direction"`
	Limit         int             `json:"limit"`
	Records       []MessageRecord `json:"records"`
	// NextCursor continues after this page; nil when nothing remained.
	NextCursor *string `json:"nextCursor"`
}

// MessageRecord is one stream entry of a MessagesPage.
type MessageRecord struct {
	StreamPrefix  string            `json:"streamPrefix"`
	ConsumerGroup string            `json:"consumerGroup"`
	Shard         Shard             `json:"shard"`
	StreamKey     string            `json:"streamKey"`
	RecordID      string            `json:"recordId"`
	Fields        map[string]string `json:"fields"`
	// Payload is the field "payload", null when the entry has none.
	Payload           *string `json:"payload"`
	RecordTimestampMs int64   `json:"recordTimestampMs"`
	RecordTime        Instant `json:"recordTime"`
}
