package redis

import (
	"errors"
	"fmt"
	"net"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// readError wraps a failed read: nothing can have been written, so it is
// always ErrUnavailable (the cause stays in the chain, e.g. a caller's
// context.Canceled).
func readError(op string, key group.Key, err error) error {
	return fmt.Errorf("redis store: %s %s: %w: %w", op, key, persistence.ErrUnavailable, err)
}

// writeError wraps a failed write: ErrUnavailable when the command cannot
// have reached Redis or Redis refused it before running it (see notSent),
// otherwise an "unknown" error without a class.
func writeError(op string, key group.Key, err error) error {
	if notSent(err) {
		return readError(op, key, err)
	}
	return fmt.Errorf("redis store: %s %s: outcome unknown: %w", op, key, err)
}

// refusals are the error replies with which Redis refuses a command
// without running it.
var refusals = []string{"LOADING", "READONLY", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "NOREPLICAS", "BUSY", "OOM", "ERR max number of clients"}

// notSent reports whether err proves the command did not run: no
// connection could be made or taken from the pool, the client is closed,
// or Redis refused the command.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, goredis.ErrPoolTimeout) || errors.Is(err, goredis.ErrClosed) {
		return true
	}
	var reply goredis.Error
	if errors.As(err, &reply) {
		for _, p := range refusals {
			if strings.HasPrefix(reply.Error(), p) {
				return true
			}
		}
	}
	return false
}
