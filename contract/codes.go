package contract

// Code is the errorCode of an error answer (docs/protocol.md §0). This file
// is the one list of the codes the coordinator sends: every package that
// produces or reads one names it here (TestCodesOnlyHere keeps their
// literals out of every other file).
type Code string

// Refusals of the request: a retry as it was fails again.
const (
	CodeInvalidRequest            Code = "INVALID_REQUEST"
	CodeGroupNotFound             Code = "GROUP_NOT_FOUND"
	CodeStreamNotFound            Code = "STREAM_NOT_FOUND"
	CodeMigrationNotFound         Code = "MIGRATION_NOT_FOUND"
	CodeGroupAlreadyExists        Code = "GROUP_ALREADY_EXISTS"
	CodeStreamPrefixAlreadyExists Code = "STREAM_PREFIX_ALREADY_EXISTS"
	CodeGroupHasActiveMembers     Code = "GROUP_HAS_ACTIVE_MEMBERS"
	CodeActiveMigrationExists     Code = "ACTIVE_MIGRATION_EXISTS"
	CodeMetadataSyncInProgress    Code = "METADATA_SYNC_IN_PROGRESS"
	CodeRollbackNotAllowed        Code = "ROLLBACK_NOT_ALLOWED"
	// CodeGroupLimitReached refuses a create beyond defaults.max-groups or
	// defaults.max-groups-per-stream.
	CodeGroupLimitReached Code = "GROUP_LIMIT_REACHED"
	// CodeStateVersionConflict (409): the group's stored revision kept
	// changing under the request; nothing was acknowledged.
	CodeStateVersionConflict     Code = "STATE_VERSION_CONFLICT"
	CodeDeadLetterNotFound       Code = "DEAD_LETTER_NOT_FOUND"
	CodeDeadLetterNotRedrivable  Code = "DEAD_LETTER_NOT_REDRIVABLE"
	CodeDeadLetterOfAnotherGroup Code = "DEAD_LETTER_OF_ANOTHER_GROUP"
	CodePayloadTooLarge          Code = "PAYLOAD_TOO_LARGE"
	// CodeUnsupportedMediaType (415) refuses a state-changing request whose
	// body is not declared application/json (docs/security.md, CSRF).
	CodeUnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeNotFound             Code = "NOT_FOUND"
	CodeMethodNotAllowed     Code = "METHOD_NOT_ALLOWED"
	CodeUnauthorized         Code = "UNAUTHORIZED"
	CodeForbidden            Code = "FORBIDDEN"
	CodeRateLimitExceeded    Code = "RATE_LIMIT_EXCEEDED"
	// CodeNotACoordinator (403) refuses a batch of forwarded heartbeats
	// from a caller that is not a live coordinator of the cluster (only the
	// coordinators' internal route answers it).
	CodeNotACoordinator Code = "NOT_A_COORDINATOR"
	// CodeResetInProgress (409) refuses a live offset reset while another
	// is PAUSING or APPLYING; CodeResetNotFound (404) answers an unknown
	// reset id (group/liveops.go).
	CodeResetInProgress Code = "RESET_IN_PROGRESS"
	CodeResetNotFound   Code = "RESET_NOT_FOUND"
)

// The coordinator cannot serve the request now (503); a retry may succeed.
const (
	CodeCoordinatorTerminating           Code = "COORDINATOR_TERMINATING"
	CodeCoordinatorStateMutexUnavailable Code = "COORDINATOR_STATE_MUTEX_UNAVAILABLE"
	CodeCoordinatorUnreachable           Code = "COORDINATOR_UNREACHABLE"
	CodeGroupOwnedElsewhere              Code = "GROUP_OWNED_ELSEWHERE"
	// CodeCoordinatorNotServing: the coordinator the group is placed on
	// does not serve yet (it is registering in the cluster: after a restart
	// until the earlier run's registry lease ends, or while another live
	// process holds its id) or its registry lease lapsed; Retry-After says
	// when to try again.
	CodeCoordinatorNotServing         Code = "COORDINATOR_NOT_SERVING"
	CodeStoreUnavailable              Code = "STORE_UNAVAILABLE"
	CodeStoreOutcomeUnknown           Code = "STORE_OUTCOME_UNKNOWN"
	CodeRedisNotConfigured            Code = "REDIS_NOT_CONFIGURED"
	CodeRedisStreamProvisioningFailed Code = "REDIS_STREAM_PROVISIONING_FAILED"
	CodeRedisUnavailable              Code = "REDIS_UNAVAILABLE"
	CodeRequestTimeout                Code = "REQUEST_TIMEOUT"
	CodeRequestCanceled               Code = "REQUEST_CANCELED"
)

// A fault of the coordinator (500).
const (
	CodeGroupMetadataCorrupt Code = "GROUP_METADATA_CORRUPT"
	CodeInternalError        Code = "INTERNAL_ERROR"
)

// ErrorBody is the body of every error answer (docs/protocol.md §0).
type ErrorBody struct {
	// Status is the HTTP status's name (StatusName).
	Status    string `json:"status"`
	ErrorCode Code   `json:"errorCode"`
	Message   string `json:"message"`
}

// statusNames are the names of the HTTP statuses an error answer has.
var statusNames = map[int]string{
	400: "BAD_REQUEST",
	401: "UNAUTHORIZED",
	403: "FORBIDDEN",
	404: "NOT_FOUND",
	405: "METHOD_NOT_ALLOWED",
	409: "CONFLICT",
	413: "PAYLOAD_TOO_LARGE",
	415: "UNSUPPORTED_MEDIA_TYPE",
	422: "UNPROCESSABLE_ENTITY",
	429: "TOO_MANY_REQUESTS",
	500: "INTERNAL_SERVER_ERROR",
	503: "SERVICE_UNAVAILABLE",
}

// StatusName is the "status" of an error answer with HTTP status code
// status (Spring's HttpStatus name, e.g. NOT_FOUND for 404); empty for a
// status no error answer has.
func StatusName(status int) string { return statusNames[status] }
