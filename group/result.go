package group

// Result is what every handler returns: the records it produced, already
// applied to the group it ran on, and its answer, or the error refusing the
// request. A refusal may still carry records: changes made before the
// refusal was decided (leases that had expired, for instance); the caller
// drops them with the refused request.
type Result[A any] struct {
	Records []Record
	Answer  A
	Err     error
}

// Done is the answer of a handler whose result is its records alone.
type Done = struct{}

// result returns what the handler run in t produced, answering a.
func result[A any](t *tx, a A) Result[A] { return Result[A]{Records: t.recs, Answer: a} }

// refusal returns the records t produced and the error refusing the request.
func refusal[A any](t *tx, err error) Result[A] { return Result[A]{Records: t.recs, Err: err} }
