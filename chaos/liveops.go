package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Live group operations among the faults (docs/operations.md): shards of
// the simulated group paused and resumed (the strict overlap oracle and
// the settle check watch them), and live offset resets of the real
// consumers' group that move a shard back by rewindBy entries (the
// handling oracle checks that no entry is handled by two processes at once
// while the shard is revoked, set and granted again; a bounded rewind
// keeps the slow handlers' extra work within the settle time).
const (
	ShardPause  = "shard pause"
	ShardResume = "shard resume"
	LiveReset   = "live reset"

	pauseGap = 12 * time.Second
	resetGap = 10 * time.Second
	rewindBy = 20
)

// liveOpFaults returns the pauses (each followed by its resume) and live
// resets of o.Seed, from a generator of their own so that the other faults
// of a seed stay as they were. A pause names a shard below the smallest
// shard count a scale may set; a reset one of the real group's 4.
func liveOpFaults(o Options) []Fault {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x6c6976656f7073))
	var out []Fault
	lowest := max(1, o.Shards/2)
	arrivals(rng, o.Duration, pauseGap, func(at time.Duration) {
		shard := rng.IntN(lowest)
		back := min(at+time.Duration(500+rng.IntN(4500))*time.Millisecond, o.Duration)
		out = append(out, Fault{at, ShardPause, shard}, Fault{back, ShardResume, shard})
	})
	if o.RealMembers > 0 {
		arrivals(rng, o.Duration, resetGap, func(at time.Duration) { out = append(out, Fault{at, LiveReset, rng.IntN(realShards)}) })
	}
	return out
}

// realShards is the real group's shard count (newFleet creates it).
const realShards = 4

// liveOps is a run's state of its live operations: the coordinator
// picker of their requests (they run beside the fault injector) and the
// windows during which a live reset moved a real shard back, where a key's
// first deliveries may start over in stream order.
type liveOps struct {
	mu   sync.Mutex
	rng  *rand.Rand
	wins map[string][][2]time.Duration // stream key → [requested, ended]
}

// pick chooses a live coordinator for a live operation's request.
func (w *liveOps) pick(r *run) (id, base string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rng == nil {
		w.rng = rand.New(rand.NewPCG(uint64(r.opts.Seed), 0x6c6976))
	}
	return r.cluster.pick(w.rng)
}

func (w *liveOps) add(stream string, from, to time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wins == nil {
		w.wins = map[string][][2]time.Duration{}
	}
	w.wins[stream] = append(w.wins[stream], [2]time.Duration{from, to})
}

// across reports whether a rewind of stream began before b and ended
// after a (a handling before it and one after may come out of order).
func (w *liveOps) across(stream string, a, b time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, win := range w.wins[stream] {
		if win[0] <= b && a <= win[1] {
			return true
		}
	}
	return false
}

// liveOp applies a pause, a resume or a live reset beside the injector.
func (r *run) liveOp(ctx context.Context, f Fault) {
	r.bg.Go(func() { r.liveOpNow(ctx, f) })
}

// liveOpNow runs a pause, a resume or a live reset. A resume is retried
// until a coordinator acknowledges it (or the run ends): a pause left in
// place would keep the group from settling.
func (r *run) liveOpNow(ctx context.Context, f Fault) {
	switch f.Kind {
	case ShardPause, ShardResume:
		op := "pause"
		if f.Kind == ShardResume {
			op = "resume"
		}
		body, _ := json.Marshal(contract.PauseRequest{Shards: []int{f.Target}, RequestedBy: "coord-chaos", Reason: "chaos"})
		for attempt := 1; ; attempt++ {
			coord, base, ok := r.live.pick(r)
			code := 0
			var err error
			if ok {
				code, err = r.call(ctx, http.MethodPost, base+groupPath(r.key)+"/shards/"+op, body, new(contract.PausedView))
			}
			r.log.add(r.now(), "", fmt.Sprintf("FAULT %s shard %d via %s: HTTP %d %v", op, f.Target, coord, code, err))
			if code == http.StatusOK {
				r.count(f.Kind + " acknowledged")
				return
			}
			if f.Kind == ShardPause || ctx.Err() != nil || attempt == 50 {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	case LiveReset:
		r.liveReset(ctx, f.Target)
	}
}

// liveReset moves shard of the real group back by rewindBy entries and
// follows the reset until it ends (or the run does), recording the
// rewind's window.
func (r *run) liveReset(ctx context.Context, shard int) {
	key := group.Key{StreamPrefix: r.key.StreamPrefix, ConsumerGroup: realGroup}
	stream := contract.StreamKey(key.StreamPrefix, shard)
	from := r.now()
	r.count(LiveReset + " attempt")
	body, _ := json.Marshal(map[string]any{"to": "BY", "by": -rewindBy, "shards": []int{shard}, "requestedBy": "coord-chaos", "reason": "chaos"})
	coord, base, ok := r.live.pick(r)
	if !ok {
		return
	}
	var lr contract.LiveReset
	code, err := r.call(ctx, http.MethodPost, base+groupPath(key)+"/offsets/reset", body, &lr)
	r.log.add(r.now(), "", fmt.Sprintf("FAULT live reset of real shard %d via %s: HTTP %d %s %s %v", shard, coord, code, lr.ResetID, lr.State, err))
	if code != http.StatusOK {
		// An unanswered request may still have started a reset.
		r.live.add(stream, from, r.opts.Duration+r.opts.SettleTimeout)
		return
	}
	r.count(LiveReset + " acknowledged")
	for !lr.State.Finished() && ctx.Err() == nil && r.now() < r.opts.Duration+r.opts.SettleTimeout {
		time.Sleep(100 * time.Millisecond)
		if _, base, ok = r.live.pick(r); ok {
			var cur contract.LiveReset
			if c, _ := r.call(ctx, http.MethodGet, base+"/monitoring"+groupPath(key)+"/offsets/resets/"+lr.ResetID, nil, &cur); c == http.StatusOK {
				lr = cur
			}
		}
	}
	r.live.add(stream, from, r.now())
	r.count(LiveReset + " " + string(lr.State))
	r.log.add(r.now(), "", fmt.Sprintf("FAULT end: live reset %s of real shard %d %s after %v", lr.ResetID, shard, lr.State, r.now()-from))
}
