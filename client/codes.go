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

// Error codes of the coordinator's answers (APIError.ErrorCode), named as
// package contract names them: the same list, so a program needs only
// this package (TestErrorCodesMatchServer keeps the two equal).
//
// Refusals of the request: a retry as it was fails again.
const (
	CodeInvalidRequest            = contract.CodeInvalidRequest
	CodeGroupNotFound             = contract.CodeGroupNotFound
	CodeStreamNotFound            = contract.CodeStreamNotFound
	CodeMigrationNotFound         = contract.CodeMigrationNotFound
	CodeGroupAlreadyExists        = contract.CodeGroupAlreadyExists
	CodeStreamPrefixAlreadyExists = contract.CodeStreamPrefixAlreadyExists
	CodeGroupHasActiveMembers     = contract.CodeGroupHasActiveMembers
	CodeActiveMigrationExists     = contract.CodeActiveMigrationExists
	CodeMetadataSyncInProgress    = contract.CodeMetadataSyncInProgress
	CodeRollbackNotAllowed        = contract.CodeRollbackNotAllowed
	CodeGroupLimitReached         = contract.CodeGroupLimitReached
	CodeStateVersionConflict      = contract.CodeStateVersionConflict
	CodeDeadLetterNotFound        = contract.CodeDeadLetterNotFound
	CodeDeadLetterNotRedrivable   = contract.CodeDeadLetterNotRedrivable
	CodeDeadLetterOfAnotherGroup  = contract.CodeDeadLetterOfAnotherGroup
	CodePayloadTooLarge           = contract.CodePayloadTooLarge
	CodeUnsupportedMediaType      = contract.CodeUnsupportedMediaType
	CodeNotFound                  = contract.CodeNotFound
	CodeMethodNotAllowed          = contract.CodeMethodNotAllowed
	CodeUnauthorized              = contract.CodeUnauthorized
	CodeForbidden                 = contract.CodeForbidden
	CodeRateLimitExceeded         = contract.CodeRateLimitExceeded
	CodeNotACoordinator           = contract.CodeNotACoordinator
	CodeResetInProgress           = contract.CodeResetInProgress
	CodeResetNotFound             = contract.CodeResetNotFound
)

// The coordinator cannot serve the request now (503); a retry may succeed.
const (
	CodeCoordinatorTerminating           = contract.CodeCoordinatorTerminating
	CodeCoordinatorStateMutexUnavailable = contract.CodeCoordinatorStateMutexUnavailable
	CodeCoordinatorUnreachable           = contract.CodeCoordinatorUnreachable
	CodeGroupOwnedElsewhere              = contract.CodeGroupOwnedElsewhere
	CodeCoordinatorNotServing            = contract.CodeCoordinatorNotServing
	CodeStoreUnavailable                 = contract.CodeStoreUnavailable
	CodeStoreOutcomeUnknown              = contract.CodeStoreOutcomeUnknown
	CodeRedisNotConfigured               = contract.CodeRedisNotConfigured
	CodeRedisStreamProvisioningFailed    = contract.CodeRedisStreamProvisioningFailed
	CodeRedisUnavailable                 = contract.CodeRedisUnavailable
	CodeRequestTimeout                   = contract.CodeRequestTimeout
	CodeRequestCanceled                  = contract.CodeRequestCanceled
)

// A fault of the coordinator (500).
const (
	CodeGroupMetadataCorrupt = contract.CodeGroupMetadataCorrupt
	CodeInternalError        = contract.CodeInternalError
)
