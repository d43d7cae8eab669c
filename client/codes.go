package client

import "github.com/redis-stream-coordinator/coordinator/group"

// Status is a heartbeat answer's status (docs/protocol.md §4.1).
type Status = group.HeartbeatStatus

// Heartbeat statuses.
const (
	StatusOK                  = group.StatusOK
	StatusRetry               = group.StatusRetry
	StatusSyncMetadata        = group.StatusSyncMetadata
	StatusRevokePending       = group.StatusRevokePending
	StatusUnknownMemberID     = group.StatusUnknownMemberID
	StatusFencedMemberEpoch   = group.StatusFencedMemberEpoch
	StatusUnsupportedProtocol = group.StatusUnsupportedProtocol
	StatusInvalidRequest      = group.StatusInvalidRequest
)

// ErrorCode is the errorCode of an error answer (docs/protocol.md §0).
type ErrorCode = group.Code

// Error codes of the coordinator's answers (APIError.ErrorCode).
const (
	CodeInvalidRequest            = group.CodeInvalidRequest
	CodeGroupNotFound             = group.CodeGroupNotFound
	CodeStreamNotFound            = group.CodeStreamNotFound
	CodeMigrationNotFound         = group.CodeMigrationNotFound
	CodeGroupAlreadyExists        = group.CodeGroupAlreadyExists
	CodeStreamPrefixAlreadyExists = group.CodeStreamPrefixAlreadyExists
	CodeGroupHasActiveMembers     = group.CodeGroupHasActiveMembers
	CodeActiveMigrationExists     = group.CodeActiveMigrationExists
	CodeMetadataSyncInProgress    = group.CodeMetadataSyncInProgress
	CodeRollbackNotAllowed        = group.CodeRollbackNotAllowed
)
