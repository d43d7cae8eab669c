package contract

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
