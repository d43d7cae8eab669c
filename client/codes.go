package client

import "github.com/redis-stream-coordinator/coordinator/contract"

// Status is a heartbeat answer's status (docs/protocol.md §4.1).
type Status = contract.HeartbeatStatus

// Heartbeat statuses.
const (
	StatusOK                  = contract.StatusOK
	StatusRetry               = contract.StatusRetry
	StatusSyncMetadata        = contract.StatusSyncMetadata
	StatusRevokePending       = contract.StatusRevokePending
	StatusUnknownMemberID     = contract.StatusUnknownMemberID
	StatusFencedMemberEpoch   = contract.StatusFencedMemberEpoch
	StatusUnsupportedProtocol = contract.StatusUnsupportedProtocol
	StatusInvalidRequest      = contract.StatusInvalidRequest
)

// ErrorCode is the errorCode of an error answer (docs/protocol.md §0).
type ErrorCode = contract.Code

// Error codes of the coordinator's answers (APIError.ErrorCode): every
// errorCode the server sends (TestErrorCodesMatchServer reads the server's
// source to keep this list complete).
const (
	// Refusals of the request (docs/protocol.md §0).
	CodeInvalidRequest                      = contract.CodeInvalidRequest
	CodeGroupNotFound                       = contract.CodeGroupNotFound
	CodeStreamNotFound                      = contract.CodeStreamNotFound
	CodeMigrationNotFound                   = contract.CodeMigrationNotFound
	CodeGroupAlreadyExists                  = contract.CodeGroupAlreadyExists
	CodeStreamPrefixAlreadyExists           = contract.CodeStreamPrefixAlreadyExists
	CodeGroupHasActiveMembers               = contract.CodeGroupHasActiveMembers
	CodeActiveMigrationExists               = contract.CodeActiveMigrationExists
	CodeMetadataSyncInProgress              = contract.CodeMetadataSyncInProgress
	CodeRollbackNotAllowed                  = contract.CodeRollbackNotAllowed
	CodeGroupLimitReached                   = contract.CodeGroupLimitReached
	CodeStateVersionConflict      ErrorCode = "STATE_VERSION_CONFLICT"
	CodeShardsHeld                ErrorCode = "SHARDS_HELD"
	CodeDeadLetterNotFound        ErrorCode = "DEAD_LETTER_NOT_FOUND"
	CodeDeadLetterNotRedrivable   ErrorCode = "DEAD_LETTER_NOT_REDRIVABLE"
	CodeDeadLetterOfAnotherGroup  ErrorCode = "DEAD_LETTER_OF_ANOTHER_GROUP"
	CodePayloadTooLarge           ErrorCode = "PAYLOAD_TOO_LARGE"
	CodeNotFound                  ErrorCode = "NOT_FOUND"
	CodeMethodNotAllowed          ErrorCode = "METHOD_NOT_ALLOWED"
	CodeUnauthorized              ErrorCode = "UNAUTHORIZED"
	CodeForbidden                 ErrorCode = "FORBIDDEN"
	CodeRateLimitExceeded         ErrorCode = "RATE_LIMIT_EXCEEDED"

	// The coordinator cannot serve the request now (503 unless noted);
	// a retry may succeed.
	CodeCoordinatorTerminating           ErrorCode = "COORDINATOR_TERMINATING"
	CodeCoordinatorStateMutexUnavailable ErrorCode = "COORDINATOR_STATE_MUTEX_UNAVAILABLE"
	CodeCoordinatorUnreachable           ErrorCode = "COORDINATOR_UNREACHABLE"
	CodeGroupOwnedElsewhere              ErrorCode = "GROUP_OWNED_ELSEWHERE"
	// CodeCoordinatorNotServing: the coordinator the group is placed on
	// does not serve yet (it is registering in the cluster: after a restart
	// until the earlier run's registry lease ends, or while another live
	// process holds its id) or its registry lease lapsed; Retry-After says
	// when to try again.
	CodeCoordinatorNotServing ErrorCode = "COORDINATOR_NOT_SERVING"
	// CodeNotACoordinator (403) refuses a batch of forwarded heartbeats from a
	// caller that is not a live coordinator of the cluster (only the
	// coordinators' internal route answers it).
	CodeNotACoordinator               ErrorCode = "NOT_A_COORDINATOR"
	CodeStoreUnavailable              ErrorCode = "STORE_UNAVAILABLE"
	CodeStoreOutcomeUnknown           ErrorCode = "STORE_OUTCOME_UNKNOWN"
	CodeRedisNotConfigured            ErrorCode = "REDIS_NOT_CONFIGURED"
	CodeRedisStreamProvisioningFailed ErrorCode = "REDIS_STREAM_PROVISIONING_FAILED"
	CodeRedisUnavailable              ErrorCode = "REDIS_UNAVAILABLE"
	CodeRequestTimeout                ErrorCode = "REQUEST_TIMEOUT"
	CodeRequestCanceled               ErrorCode = "REQUEST_CANCELED"

	// A fault of the coordinator (500).
	CodeGroupMetadataCorrupt ErrorCode = "GROUP_METADATA_CORRUPT"
	CodeInternalError        ErrorCode = "INTERNAL_ERROR"
)
