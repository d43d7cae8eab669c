// Package contract is what the HTTP layer shares with the coordinator's
// runtime (package actors): the errors a request can be answered with
// besides domain errors (*group.Error) and store errors (persistence.Err*),
// and the results that are not domain types. Only the HTTP layer maps the
// errors to statuses. The messages the runtime passes between its actors
// are its own (unexported in package actors).
package contract
