package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// ErrProvisioningFailed is matched (errors.Is) by every error Provision
// returns; the HTTP layer maps it to 503 REDIS_STREAM_PROVISIONING_FAILED.
var ErrProvisioningFailed = errors.New("redis stream provisioning failed")

// ProvisioningError reports the stream key whose provisioning failed and the
// underlying Redis error. It matches both ErrProvisioningFailed and Err.
type ProvisioningError struct {
	Key string
	Err error
}

func (e *ProvisioningError) Error() string {
	return fmt.Sprintf("%v for %s: %v", ErrProvisioningFailed, e.Key, e.Err)
}

// Unwrap exposes ErrProvisioningFailed and the Redis error to errors.Is/As.
func (e *ProvisioningError) Unwrap() []error { return []error{ErrProvisioningFailed, e.Err} }

// Provisioner creates stream shards and consumer groups (docs/protocol.md §6.6). It is safe
// for concurrent use; every operation is idempotent.
type Provisioner struct {
	client redis.UniversalClient
}

// NewProvisioner returns a Provisioner over client (standalone or cluster).
func NewProvisioner(client redis.UniversalClient) *Provisioner {
	return &Provisioner{client: client}
}

// Provision makes sure consumer group group exists on every shard key
// StreamKey(prefix, i), i in shards, creating missing streams. A new group
// starts at the stream's end ("$") with its entries-read counter set to the
// stream's entries-added, so its lag is known (0) from the start:
//
//	n := XINFO STREAM P:i → entries-added (error reply → 0)
//	XGROUP CREATE P:i G $ MKSTREAM ENTRIESREAD n
//
// A BUSYGROUP reply (the group exists) is success. Any other failure,
// including a transport failure, returns a *ProvisioningError for the first
// failing key in shards order. Each step is one pipeline over all keys.
func (p *Provisioner) Provision(ctx context.Context, prefix, group string, shards []int) error {
	keys := make([]string, len(shards))
	for j, i := range shards {
		keys[j] = contract.StreamKey(prefix, i)
	}

	infoPipe := p.client.Pipeline()
	infos := make([]*redis.XInfoStreamCmd, len(keys))
	for j, key := range keys {
		infos[j] = infoPipe.XInfoStream(ctx, key)
	}
	_, _ = infoPipe.Exec(ctx) // per-command errors are inspected below
	entriesRead := make([]int64, len(keys))
	for j, cmd := range infos {
		if err := replyOrNil(cmd.Err()); err != nil {
			return &ProvisioningError{Key: keys[j], Err: err}
		}
		if cmd.Err() == nil {
			entriesRead[j] = cmd.Val().EntriesAdded
		}
	}

	createPipe := p.client.Pipeline()
	creates := make([]*redis.StatusCmd, len(keys))
	for j, key := range keys {
		cmd := redis.NewStatusCmd(ctx, "xgroup", "create", key, group, "$", "mkstream", "entriesread", entriesRead[j])
		cmd.SetFirstKeyPos(2)
		_ = createPipe.Process(ctx, cmd)
		creates[j] = cmd
	}
	_, _ = createPipe.Exec(ctx)
	for j, cmd := range creates {
		if err := cmd.Err(); err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return &ProvisioningError{Key: keys[j], Err: err}
		}
	}
	return nil
}

// ExistingKeys returns which of the keys prefix, StreamKey(prefix, 0), …,
// StreamKey(prefix, n-1) exist, in that order (for the create conflict
// check of STREAM_PREFIX_ALREADY_EXISTS). It sends one EXISTS per key in a
// single pipeline.
func (p *Provisioner) ExistingKeys(ctx context.Context, prefix string, n int) ([]string, error) {
	keys := make([]string, 0, n+1)
	keys = append(keys, prefix)
	for i := range n {
		keys = append(keys, contract.StreamKey(prefix, i))
	}
	pipe := p.client.Pipeline()
	exists := make([]*redis.IntCmd, len(keys))
	for j, key := range keys {
		exists[j] = pipe.Exists(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("streams: checking existing keys of %s: %w", prefix, err)
	}
	var found []string
	for j, cmd := range exists {
		if cmd.Val() > 0 {
			found = append(found, keys[j])
		}
	}
	return found, nil
}
