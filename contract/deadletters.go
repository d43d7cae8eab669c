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
