package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/streams"
)

// ShardFor returns the shard among n that a producer routes key to: the
// Murmur3 routing of PROTOCOL.md §6.7, the same as the shipped Python and
// Spring clients. n must be at least 1.
func ShardFor(key string, n int) int { return streams.ShardFor(key, n) }

// ProducerConfig configures a Producer.
type ProducerConfig struct {
	// Coordinator is the API connection; its credentials need READ.
	Coordinator *Coordinator
	// Redis is where the shard streams live (required).
	Redis redis.UniversalClient
	// StreamPrefix and Group name the group whose routing is used.
	StreamPrefix, Group string
	// MaxLen, when positive, trims each shard with XADD MAXLEN ~ MaxLen.
	MaxLen int64
	// NoMkStream adds NOMKSTREAM: a write to a shard key that does not
	// exist fails instead of creating it, and makes the producer refresh
	// its routing and try once more.
	NoMkStream bool
	// RefreshInterval is how often the routing is re-read (default 5 s).
	RefreshInterval time.Duration
}

// Producer writes keyed records to the shard of a sharded stream that the
// coordinator's routing says: key k goes to P:ShardFor(k, shardCount). The
// routing is cached and re-read every RefreshInterval (a new metadata
// version replaces it) and when a write finds its shard key missing. It is
// safe for concurrent use.
type Producer struct {
	cfg ProducerConfig

	mu        sync.Mutex
	routing   Routing
	fetchedAt time.Time
}

// ErrNoShards is returned by Send when the group has no shards.
var ErrNoShards = errors.New("client: the group has no shards")

// ErrStaleRoute is returned by Send when the shard key is still missing
// after a routing refresh (NoMkStream).
var ErrStaleRoute = errors.New("client: shard stream does not exist")

// NewProducer checks cfg and fills in its defaults. The routing is read on
// the first Send.
func NewProducer(cfg ProducerConfig) (*Producer, error) {
	if cfg.Coordinator == nil || cfg.Redis == nil || cfg.StreamPrefix == "" || cfg.Group == "" {
		return nil, errors.New("client: ProducerConfig needs Coordinator, Redis, StreamPrefix and Group")
	}
	cfg.RefreshInterval = cmp.Or(cfg.RefreshInterval, 5*time.Second)
	return &Producer{cfg: cfg}, nil
}

// Routing returns the cached routing, reading it when it is older than
// RefreshInterval.
func (p *Producer) Routing(ctx context.Context) (Routing, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fetchedAt.IsZero() || time.Since(p.fetchedAt) >= p.cfg.RefreshInterval {
		if err := p.refreshLocked(ctx); err != nil && p.fetchedAt.IsZero() {
			return Routing{}, err
		}
	}
	return p.routing, nil
}

// Refresh re-reads the routing now.
func (p *Producer) Refresh(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshLocked(ctx)
}

func (p *Producer) refreshLocked(ctx context.Context) error {
	r, err := p.cfg.Coordinator.ProducerRouting(ctx, p.cfg.StreamPrefix, p.cfg.Group)
	if err != nil {
		return fmt.Errorf("producer routing: %w", err)
	}
	// An older version than the cached one is a lagging coordinator.
	if r.MetadataVersion >= p.routing.MetadataVersion || p.fetchedAt.IsZero() {
		p.routing = r
	}
	p.fetchedAt = time.Now()
	return nil
}

// Send appends values to the shard that key routes to and returns the
// entry id and the shard.
func (p *Producer) Send(ctx context.Context, key string, values map[string]any) (id string, shard int, err error) {
	for attempt := 0; ; attempt++ {
		r, err := p.Routing(ctx)
		if err != nil {
			return "", 0, err
		}
		if r.ShardCount == 0 {
			return "", 0, ErrNoShards
		}
		shard = ShardFor(key, r.ShardCount)
		args := &redis.XAddArgs{Stream: r.Shards[shard].StreamKey, Values: values, NoMkStream: p.cfg.NoMkStream}
		if p.cfg.MaxLen > 0 {
			args.MaxLen, args.Approx = p.cfg.MaxLen, true
		}
		id, err = p.cfg.Redis.XAdd(ctx, args).Result()
		if errors.Is(err, redis.Nil) { // NOMKSTREAM and no such key: stale route
			if attempt == 0 {
				if err := p.Refresh(ctx); err != nil {
					return "", shard, err
				}
				continue
			}
			return "", shard, fmt.Errorf("%w: %s", ErrStaleRoute, args.Stream)
		}
		return id, shard, err
	}
}
