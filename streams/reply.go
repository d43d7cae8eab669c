package streams

import (
	"errors"

	"github.com/redis/go-redis/v9"
)

// isReply reports whether err is an error reply from the Redis server
// (including the nil reply, redis.Nil) rather than a transport failure. Per
// the package's error convention, replies are folded into results while
// transport failures are returned.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

// replyOrNil returns nil when err is nil or a server reply, and err itself
// when it is a transport failure.
func replyOrNil(err error) error {
	if err == nil || isReply(err) {
		return nil
	}
	return err
}
