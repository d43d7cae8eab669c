package client

// Fencing: the token of the grant under which an entry was read, which
// sinks check atomically with their writes (docs/client.md, "Fencing").

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Fence is what a sink checks a write of an entry against.
//
// Token is the fencing token of the grant under which the consumer read
// the entry's shard (docs/protocol.md §4.1, assignment.fencingTokens): it
// stays the same while the grant lasts and is strictly greater than the
// token of every earlier grant of the shard, to this or any other process.
// A sink that stores the highest token it has seen per shard and refuses
// writes carrying a lower one refuses every write of a process that lost
// the shard and did not notice (a zombie: paused past its lease by a GC
// stall, SIGSTOP or a frozen VM, or cut off by a partition). Token is 0
// when the coordinator sends no tokens.
//
// From is set by an Ordered consumer only: the consumer group's
// last-delivered id on the shard when this grant began reading, before it
// read anything. Every entry a sink applied under an earlier grant was
// delivered before then, so From is at least the sink's applied position
// unless a live reset (or another XGROUP SETID) moved the group back; a
// sink that sees a new token moves its applied position back to From, so
// that the entries the reset replays are applied again, once.
type Fence struct {
	Shard int
	Token int64
	From  string
}

// ErrFenced is wrapped by the error of a sink that refused a write because
// a later grant of the shard wrote first (its fence holds a higher token):
// this process is a zombie for that shard. A consumer whose handler
// returns it stops handling the shard at once (the entry and everything
// after it stay pending for the shard's owner) until the coordinator
// revokes it.
var ErrFenced = errors.New("client: write refused by the shard's fence: a later grant of the shard wrote first")

// groupPosition returns the last-delivered id of group on stream, "" when
// the group (or the stream) does not exist.
func groupPosition(ctx context.Context, rdb redis.UniversalClient, stream, group string) (string, error) {
	groups, err := rdb.XInfoGroups(ctx, stream).Result()
	if err != nil && !isNoSuchKey(err) {
		return "", err
	}
	for _, g := range groups {
		if g.Name == group {
			return g.LastDeliveredID, nil
		}
	}
	return "", nil
}

// isNoSuchKey reports whether err is Redis's answer about a stream that
// does not exist.
func isNoSuchKey(err error) bool {
	return err != nil && err.Error() == "ERR no such key"
}
