package contract

// Dead-letter entries are written by a client's consumer after its last
// allowed delivery failed, to the prefix's dead-letter stream
// (DeadLetterStream), with the fields DeadLetterFields names; the server
// lists, redrives and deletes them. One dead-letter stream serves every
// group of a prefix, so the group field tells them apart; an entry without
// it belongs to no group in particular: it is listed for every group, and
// no group may redrive or delete it.
const (
	// DeadLetterFieldStream is the shard key the entry came from.
	DeadLetterFieldStream = "stream"
	// DeadLetterFieldID is the entry's id in that shard.
	DeadLetterFieldID = "id"
	// DeadLetterFieldDeliveries is how often it was delivered.
	DeadLetterFieldDeliveries = "deliveries"
	// DeadLetterFieldError is the handler's last error.
	DeadLetterFieldError = "error"
	// DeadLetterFieldGroup is the consumer group that dead-lettered it.
	DeadLetterFieldGroup = "group"
	// DeadLetterFieldPrefix prefixes each field k of the original entry.
	DeadLetterFieldPrefix = "field:"
)

// DeadLetterFields returns the fields of the dead-letter entry for the
// entry id of shard key stream that group failed to handle deliveries
// times, the handler's last error being cause; values are the original
// entry's fields.
func DeadLetterFields(stream, id, group string, deliveries int64, cause string, values map[string]any) map[string]any {
	out := make(map[string]any, 5+len(values))
	for k, v := range values {
		out[DeadLetterFieldPrefix+k] = v
	}
	out[DeadLetterFieldStream], out[DeadLetterFieldID], out[DeadLetterFieldGroup] = stream, id, group
	out[DeadLetterFieldDeliveries], out[DeadLetterFieldError] = deliveries, cause
	return out
}

// DeadLetterStream is the dead-letter stream of a stream prefix:
// "<prefix>-dead-letter", the only one the server reads for the prefix's
// groups.
func DeadLetterStream(prefix string) string { return prefix + "-dead-letter" }

// DeadLetterAction is the body of POST …/dead-letters/redrive and
// …/dead-letters/delete: the ids in Stream (blank or P-dead-letter, the
// prefix's dead-letter stream; any other name is INVALID_REQUEST), at
// least one and at most 1,000.
type DeadLetterAction struct {
	IDs         []string `json:"ids"`
	Stream      string   `json:"stream"`
	RequestedBy string   `json:"requestedBy"`
	Reason      string   `json:"reason"`
}

// DeadLetterResults is the answer of a redrive or delete: the dead-letter
// stream, and one result per id in the request's order.
type DeadLetterResults struct {
	Stream  string             `json:"stream"`
	Results []DeadLetterResult `json:"results"`
}

// DeadLetterResult is the outcome for one id: Status REDRIVEN (with
// Stream and NewID, where the entry was added again), DELETED, or FAILED
// (with ErrorCode and Message). A field that does not go with the status
// is absent.
type DeadLetterResult struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Stream    string `json:"stream,omitempty"`
	NewID     string `json:"newId,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
	Message   string `json:"message,omitempty"`
}

// DeadLetterPage is the body of GET MonitoringDeadLetter: one page of a
// dead-letter stream, newest first.
type DeadLetterPage struct {
	Stream  string       `json:"stream"`
	Length  int64        `json:"length"`
	Entries []DeadLetter `json:"entries"`
	// NextCursor continues after this page; nil when nothing remained.
	NextCursor *string `json:"nextCursor"`
}

// DeadLetter is one entry of a dead-letter stream, decoded from the fields
// DeadLetterFields names.
type DeadLetter struct {
	// ID is the entry's id in the dead-letter stream.
	ID string `json:"id"`
	// SourceStream and SourceID are where the entry was read from ("" when
	// the entry does not say).
	SourceStream string `json:"sourceStream"`
	SourceID     string `json:"sourceId"`
	// SourceShard is the shard index of SourceStream, nil when it is not a
	// shard key of the prefix.
	SourceShard *int `json:"sourceShard"`
	// Group is the consumer group that dead-lettered the entry ("" when the
	// entry does not say).
	Group string `json:"group"`
	// Deliveries is how often it was delivered before it was dead-lettered
	// (0 when not recorded); Error the handler's last error ("" when not
	// recorded).
	Deliveries int64  `json:"deliveries"`
	Error      string `json:"error"`
	// Fields are the original entry's fields.
	Fields map[string]string `json:"fields"`
}
