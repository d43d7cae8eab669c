package bench

import (
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"

	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// peerLeases is the do-it-yourself answer to what the coordinator does: a
// hand-rolled Redis lease scheme, as users build one instead of a
// coordinator. Every member owns a lease key per shard,
// <prefix>:lease:<shard> = member id with a PX expiry of one lease TTL.
// Once per interval each member sends one pipeline: SET key id PX ttl for
// every shard it owns, and SET key id NX PX ttl for free shards while it
// owns fewer than its quota (shards ÷ members, rounded up). There is no
// membership, no rebalancing, no fencing and no check that a renewed key
// is still the member's own: it is the floor of what such a scheme costs
// the store, not a safe protocol.
type peerLeases struct {
	client         *goredis.Client
	prefix         string
	members, quota int
	shards         int
	ttl            time.Duration

	mu    sync.Mutex
	owned [][]int // member → shards it believes it holds
	next  []int   // member → next candidate shard to claim
}

func newPeerLeases(addr, prefix string, members, shards, conns int, ttl time.Duration) *peerLeases {
	quota := (shards + members - 1) / members
	p := &peerLeases{
		client: goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: conns}),
		prefix: prefix, members: members, shards: shards, quota: quota, ttl: ttl,
		owned: make([][]int, members), next: make([]int, members),
	}
	for i := range p.next {
		p.next[i] = (i * quota) % shards // members start claiming at their own slice
	}
	return p
}

func (p *peerLeases) key(shard int) string { return p.prefix + ":lease:" + strconv.Itoa(shard) }

// fire is a fireFunc: member i renews its leases and claims free shards
// in one pipeline.
func (p *peerLeases) fire(ctx context.Context, i int, intended time.Time, rec *Recorder) {
	p.mu.Lock()
	owned := append([]int(nil), p.owned[i]...)
	var claims []int
	for n := len(owned); n < p.quota && len(claims) < p.quota; n++ {
		claims = append(claims, p.next[i])
		p.next[i] = (p.next[i] + 1) % p.shards
	}
	p.mu.Unlock()
	id := memberID(i)
	pipe := p.client.Pipeline()
	for _, sh := range owned {
		pipe.Set(ctx, p.key(sh), id, p.ttl)
	}
	nx := make([]*goredis.BoolCmd, len(claims))
	for j, sh := range claims {
		nx[j] = pipe.SetNX(ctx, p.key(sh), id, p.ttl)
	}
	_, err := pipe.Exec(ctx)
	status := "OK"
	if err != nil && err != goredis.Nil {
		status = "redis error"
	} else {
		err = nil
		p.mu.Lock()
		for j, c := range nx {
			if c.Val() {
				p.owned[i] = append(p.owned[i], claims[j])
			}
		}
		p.mu.Unlock()
	}
	rec.Observe(time.Since(intended), status, err)
}

// ownedShards counts the shards the members hold.
func (p *peerLeases) ownedShards() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, o := range p.owned {
		n += len(o)
	}
	return n
}

// runPeer measures the hand-rolled lease scheme with the session's size
// (Groups × Members members, Shards shards per group, as one key space):
// passes until every shard is claimed, then the members' own rate (one
// pipeline per member and interval, open loop) for Duration. Store
// commands, bytes and Redis CPU are the store probe's; the members' CPU is
// the load generator's, which runs them.
func (r *Runner) runPeer(ctx context.Context) error {
	o := r.opts
	n, shards := o.Groups*o.Members, o.Groups*o.Shards
	prefix := "coord-bench:" + r.runID + "_peer"
	p := newPeerLeases(r.redis.addr, prefix, n, shards, o.Connections, o.LeaseTTL)
	probe := newRedisProbe(r.redis, prefix)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := probe.Cleanup(cctx); err != nil {
			r.logf("peer: store cleanup: %v", err)
		}
		p.client.Close()
	}()
	r.env.Redis = probe.Version(ctx)
	s := &session{r: r, name: "peer", cfg: coordproc.ServerConfig{Store: coordproc.StoreRedis}, probe: probe, groups: 1, members: n, shards: shards}
	claim, err := s.measure(ctx, "peer/claim", "closed", 0, func() (*Recorder, error) {
		rec := NewRecorder()
		deadline := time.Now().Add(r.settleTimeout(n))
		for p.ownedShards() < shards {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return rec, fmt.Errorf("peer: %d of %d shards claimed", p.ownedShards(), shards)
			}
			pass(ctx, n, o.Connections, p.fire, rec)
		}
		return rec, nil
	})
	if err := r.phase(claim, err); err != nil {
		return err
	}
	rate := float64(n) / o.Interval.Seconds()
	return r.phase(s.measure(ctx, "peer/open-members", "open", rate, func() (*Recorder, error) {
		return openLoop(ctx, n, rate, o.Duration, p.fire), nil
	}))
}

// redisServerCPU reads the CPU time of the redis-server process pid from
// /proc, when it runs on this machine and is visible.
func redisServerCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	cpu, err := parseStatCPU(stat)
	return cpu, err == nil
}
