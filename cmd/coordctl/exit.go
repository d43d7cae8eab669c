package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/client"
)

// Exit codes, stable for scripts (exitCodesHelp says what each means).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitAuth        = 3
	exitNotFound    = 4
	exitConflict    = 5
	exitUnavailable = 6
	exitNotEnabled  = 7
)

const exitCodesHelp = `Exit codes:
  0  success
  1  failure (network, server error, a dead letter or group that failed)
  2  usage
  3  not logged in, 401 or 403
  4  not found (404)
  5  conflict or refused (409, 422)
  6  unavailable or throttled (503, 429): a retry may succeed
  7  not enabled on this coordinator (REDIS_NOT_CONFIGURED): a retry fails
     the same way until the coordinator's configuration changes
`

// exitError is an error with the exit code it ends coordctl with.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Sprintf(format, args...)}
}

// exitCode maps an error to coordctl's exit code.
func exitCode(err error) int {
	if xe, ok := errors.AsType[*exitError](err); ok {
		return xe.code
	}
	ae, ok := errors.AsType[*client.APIError](err)
	if !ok {
		return exitFailure
	}
	if ae.ErrorCode == client.CodeRedisNotConfigured {
		return exitNotEnabled
	}
	switch ae.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return exitAuth
	case http.StatusNotFound:
		return exitNotFound
	case http.StatusConflict, http.StatusUnprocessableEntity:
		return exitConflict
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return exitUnavailable
	}
	return exitFailure
}
