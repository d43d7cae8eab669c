package group

import (
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Error is a domain error: a rule of the protocol refused the request with
// Code.
type Error struct {
	Code    contract.Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds a domain error.
func Errorf(code contract.Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
