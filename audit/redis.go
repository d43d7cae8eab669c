package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// RedisSink appends events as JSON to a capped Redis LIST per group,
// <kp>:{P:G}:admin:audit, or per stream for stream-level actions,
// <kp>:{P}:admin:audit (docs/protocol.md §8.3; the hash tag keeps each list in one slot);
// events without a stream prefix (logins) go to <kp>:auth:audit.
// Each Record runs RPUSH and LTRIM key -N -1 in one MULTI/EXEC.
type RedisSink struct {
	client     redis.UniversalClient
	keyPrefix  string
	maxEntries int64
}

// NewRedisSink returns a sink keeping at most max(1, maxEntries) events per
// list. keyPrefix is store.key-prefix, concatenated literally.
func NewRedisSink(client redis.UniversalClient, keyPrefix string, maxEntries int) *RedisSink {
	return &RedisSink{client: client, keyPrefix: keyPrefix, maxEntries: int64(max(1, maxEntries))}
}

func (s *RedisSink) key(streamPrefix, consumerGroup string) string {
	if streamPrefix == "" {
		return s.keyPrefix + ":auth:audit"
	}
	if consumerGroup == "" {
		return s.keyPrefix + ":{" + streamPrefix + "}:admin:audit"
	}
	return s.keyPrefix + ":" + group.Key{StreamPrefix: streamPrefix, ConsumerGroup: consumerGroup}.HashTag() + ":admin:audit"
}

// Record appends e to its list and trims the list.
func (s *RedisSink) Record(ctx context.Context, e Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: encoding event: %w", err)
	}
	key := s.key(e.StreamPrefix, deref(e.ConsumerGroup))
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, data)
		p.LTrim(ctx, key, -s.maxEntries, -1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit: writing %s: %w", key, err)
	}
	return nil
}

// Recent implements History with LRANGE key -n -1.
func (s *RedisSink) Recent(ctx context.Context, streamPrefix, consumerGroup string, n int) ([]Event, error) {
	if n <= 0 {
		return []Event{}, nil
	}
	key := s.key(streamPrefix, consumerGroup)
	raw, err := s.client.LRange(ctx, key, -int64(n), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("audit: reading %s: %w", key, err)
	}
	events := make([]Event, 0, len(raw))
	for _, item := range raw {
		var e Event
		if err := json.Unmarshal([]byte(item), &e); err != nil {
			return nil, fmt.Errorf("audit: decoding entry of %s: %w", key, err)
		}
		// The stream-level list of prefix "a:b" is the group list of (a, b):
		// keep only the events of the scope asked for.
		if e.StreamPrefix == streamPrefix && deref(e.ConsumerGroup) == consumerGroup {
			events = append(events, e)
		}
	}
	slices.Reverse(events)
	return events, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
