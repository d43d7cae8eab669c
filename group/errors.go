package group

import "fmt"

// Code is a machine-readable error code; its value is the wire errorCode of docs/protocol.md §0.
type Code string

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
)

// Error is a domain error: a rule of the protocol refused the request.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds a domain error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
