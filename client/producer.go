package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// ShardFor returns the shard among n that a producer routes key to: the
// Murmur3 routing of docs/protocol.md §6.7, the same as the shipped Python and
// Spring clients. n must be at least 1.
func ShardFor(key string, n int) int { return contract.ShardFor(key, n) }

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
	// KeyField is the field the record key is written to, unless the
	// values already have it (default "key", the Consumer's KeyField): the
	// key is passed once, to Send or in a Record.
	KeyField string
}

// Record is one keyed record for PublishBatch.
type Record struct {
	Key    string
	Values map[string]any
}

// Result is what became of one record of a PublishBatch.
type Result struct {
	ID    string // the entry id (when Err is nil)
	Shard int
	Err   error
}

// Producer writes keyed records to the shard of a sharded stream that the
// coordinator's routing says: key k goes to P:ShardFor(k, shardCount). The
// routing is cached and re-read every RefreshInterval (a new metadata
// version replaces it) and when a write finds its shard key missing. It is
// safe for concurrent use.
type Producer struct {
	cfg ProducerConfig

	mu        sync.Mutex
	routing   contract.RoutingView
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
	cfg.KeyField = cmp.Or(cfg.KeyField, "key")
	return &Producer{cfg: cfg}, nil
}

// Routing returns the cached routing, reading it when it is older than
// RefreshInterval.
func (p *Producer) Routing(ctx context.Context) (contract.RoutingView, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fetchedAt.IsZero() || time.Since(p.fetchedAt) >= p.cfg.RefreshInterval {
		if err := p.refreshLocked(ctx); err != nil && p.fetchedAt.IsZero() {
			return contract.RoutingView{}, err
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

// Send appends values, with the key in KeyField, to the shard that key
// routes to and returns the entry id and the shard.
func (p *Producer) Send(ctx context.Context, key string, values map[string]any) (id string, shard int, err error) {
	r := p.PublishBatch(ctx, []Record{{Key: key, Values: values}})[0]
	return r.ID, r.Shard, r.Err
}

// PublishBatch writes records in one pipeline (one round trip to Redis)
// and returns a Result per record, in order. With NoMkStream, records
// whose shard key is missing are retried once after a routing refresh.
func (p *Producer) PublishBatch(ctx context.Context, records []Record) []Result {
	out := make([]Result, len(records))
	todo := make([]int, len(records))
	for i := range todo {
		todo[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		r, err := p.Routing(ctx)
		if err == nil && r.ShardCount == 0 {
			err = ErrNoShards
		}
		if err != nil {
			for _, i := range todo {
				out[i].Err = err
			}
			return out
		}
		pipe := p.cfg.Redis.Pipeline()
		cmds := make([]*redis.StringCmd, len(todo))
		for j, i := range todo {
			rec := records[i]
			out[i].Shard = ShardFor(rec.Key, r.ShardCount)
			args := &redis.XAddArgs{Stream: r.Shards[out[i].Shard].StreamKey, Values: p.withKey(rec), NoMkStream: p.cfg.NoMkStream}
			if p.cfg.MaxLen > 0 {
				args.MaxLen, args.Approx = p.cfg.MaxLen, true
			}
			cmds[j] = pipe.XAdd(ctx, args)
		}
		_, _ = pipe.Exec(ctx) // errors are per command
		var stale []int
		for j, i := range todo {
			out[i].ID, out[i].Err = cmds[j].Result()
			if errors.Is(out[i].Err, redis.Nil) { // NOMKSTREAM and no such key: stale route
				out[i].Err = fmt.Errorf("%w: %s", ErrStaleRoute, r.Shards[out[i].Shard].StreamKey)
				stale = append(stale, i)
			}
		}
		if len(stale) == 0 || attempt > 0 {
			return out
		}
		if err := p.Refresh(ctx); err != nil {
			for _, i := range stale {
				out[i].Err = err
			}
			return out
		}
		todo = stale
	}
	return out
}

// withKey returns the record's values with its key in KeyField.
func (p *Producer) withKey(rec Record) map[string]any {
	if _, ok := rec.Values[p.cfg.KeyField]; ok {
		return rec.Values
	}
	v := make(map[string]any, len(rec.Values)+1)
	maps.Copy(v, rec.Values)
	v[p.cfg.KeyField] = rec.Key
	return v
}
