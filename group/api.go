package group

// This file lists the domain's entry points. Every handler validates its
// input, applies the records it produces to g through Apply (so later steps
// of the same handler see them), and returns those records so the caller can
// commit them and replay them onto other copies of the group.
// Handlers never do I/O and never read a clock: now is an argument.

// Create validates a create request (§2.2 steps 3 and 5) and returns the
// records that create the group, reconciled (assignmentEpoch 1). The caller
// has checked that the group does not exist. It applies them to g (a New()).
func (g *Group) Create(now Instant, s Settings, key Key, req CreateRequest) ([]Record, error) {
	panic("not implemented")
}

// Heartbeat runs the decision procedure of §4.2 for one member. It never
// fails: every outcome is a status in the response. Callers validate the
// request first with ValidateHeartbeat (HTTP 400 cases).
func (g *Group) Heartbeat(now Instant, s Settings, req *HeartbeatRequest) (HeartbeatResponse, []Record) {
	panic("not implemented")
}

// Tick runs the time-driven maintenance of §7 for this group: lease expiry,
// rebalance timeouts, migration advancement and pruning. It returns no
// records when nothing changed.
func (g *Group) Tick(now Instant, s Settings) []Record {
	panic("not implemented")
}

// Delete checks §2.3 (live members need force) and returns the DeletedRecord.
// The caller captures g.View() before calling it for the response.
func (g *Group) Delete(now Instant, req DeleteRequest) ([]Record, error) {
	panic("not implemented")
}

// View returns the GroupResponse projection (§2.2).
func (g *Group) View() GroupView { panic("not implemented") }

// MemberList returns every member record sorted by member id (§2.6 /members).
func (g *Group) MemberList() []Member { panic("not implemented") }

// Assignments returns the /assignments projection including invariant
// violations (§2.6).
func (g *Group) Assignments() AssignmentsView { panic("not implemented") }

// RetryResponse is the answer to a heartbeat that could not be processed
// because the store is briefly unavailable: HTTP 200, status RETRY, the
// request's epoch echoed, zero group epochs and an empty assignment. Clients
// keep their lease and simply heartbeat again.
func RetryResponse(s Settings, req *HeartbeatRequest) HeartbeatResponse { panic("not implemented") }

// ValidateHeartbeat applies the bean-validation rules of §3 to a heartbeat
// (HTTP 400 INVALID_REQUEST with "field: message; …").
func ValidateHeartbeat(req *HeartbeatRequest, s Settings) error { panic("not implemented") }

// ValidateName checks a stream prefix, group or member id (§3: 1–200 bytes
// of printable characters without '/', '{', '}' or whitespace).
func ValidateName(field, value string) error { panic("not implemented") }
