package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// Transitional names of the wire views that moved to package contract,
// kept only until the actors package names contract's (issue 45 item 1).
type (
	GroupView       = contract.GroupView
	AssignmentsView = contract.AssignmentsView
	WorkView        = contract.WorkView
	PausedView      = contract.PausedView
	PauseRequest    = contract.PauseRequest
)
