package chaos

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Fault kinds of the schedule. Each fault of a kind that ends is followed
// by its end (restart or heal) in the schedule.
const (
	CoordinatorKill    = "coordinator kill"
	CoordinatorRestart = "coordinator restart"
	// CoordinatorIsolate cuts a coordinator off from the store (Redis and
	// PostgreSQL) while members still reach it; CoordinatorReconnect ends it.
	CoordinatorIsolate   = "coordinator isolate"
	CoordinatorReconnect = "coordinator reconnect"
	// RollingRestart stops every coordinator in turn with SIGTERM and
	// starts it again before the next one (a deployment's rollout).
	RollingRestart  = "rolling restart"
	RedisKill       = "redis kill"
	RedisRestart    = "redis restart"
	MemberCrash     = "member crash"
	MemberRestart   = "member restart"
	MemberPartition = "member partition"
	MemberHeal      = "member heal"
	Scale           = "scale"
)

// Fault is one step of the schedule: Target is the coordinator or member
// index, or the target shard count of a scale.
type Fault struct {
	At     time.Duration
	Kind   string
	Target int
}

func (f Fault) String() string { return fmt.Sprintf("%s %s %d", fmtOffset(f.At), f.Kind, f.Target) }

// mean gaps between two faults of a kind, for the default sizes.
const (
	coordinatorGap = 6 * time.Second
	isolateGap     = 10 * time.Second
	rollingGap     = 20 * time.Second
	// rollingStep is the time reserved per coordinator of a rolling
	// restart: no other coordinator fault is scheduled in the window.
	rollingStep  = 5 * time.Second
	redisGap     = 15 * time.Second
	crashGap     = 5 * time.Second
	partitionGap = 4 * time.Second
	scaleGap     = 9 * time.Second
	// quiet is the fault-free start, during which the members join.
	quiet = 2 * time.Second
)

// arrivals calls each at the times, drawn from rng, of a Poisson process
// with mean gap between quiet and end.
func arrivals(rng *rand.Rand, end, gap time.Duration, each func(at time.Duration)) {
	for at := quiet; ; {
		at += time.Duration(rng.ExpFloat64() * float64(gap))
		if at >= end {
			return
		}
		each(at)
	}
}

// Schedule returns the faults of o.Seed over [0, o.Duration), in time
// order. It depends only on the seed and the sizes: at most
// Coordinators−1 coordinators are down or cut off at once, no other
// coordinator fault falls in a rolling restart's window, a member has one
// fault at a time, no Redis faults on the jdbc store (the shared
// PostgreSQL is never stopped), and every fault ends by Duration.
func Schedule(o Options) []Fault {
	o = o.withDefaults()
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x6368616f73))
	var out []Fault
	// Busy intervals of each coordinator and member: one fault at a time.
	coordBusy := make([][][2]time.Duration, o.Coordinators)
	memberBusy := make([][][2]time.Duration, o.Members)
	free := func(i int, from, to time.Duration) bool {
		for _, b := range memberBusy[i] {
			if from < b[1] && b[0] < to {
				return false
			}
		}
		return true
	}
	uniform := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
	end := func(at, d time.Duration) time.Duration { return min(at+d, o.Duration) }

	if o.Coordinators > 1 {
		// Rolling restarts first: their windows keep the other
		// coordinator faults out.
		var windows [][2]time.Duration
		window := time.Duration(o.Coordinators) * rollingStep
		arrivals(rng, o.Duration, rollingGap, func(at time.Duration) {
			if at+window > o.Duration || (len(windows) > 0 && at < windows[len(windows)-1][1]) {
				return
			}
			windows = append(windows, [2]time.Duration{at, at + window})
			out = append(out, Fault{at, RollingRestart, 0})
		})
		coordinatorFault := func(gap time.Duration, kind, endKind string, lo, hi time.Duration) {
			arrivals(rng, o.Duration, gap, func(at time.Duration) {
				i := rng.IntN(o.Coordinators)
				back := end(at, uniform(lo, hi))
				overlaps := func(w [2]time.Duration) bool { return at < w[1] && w[0] < back }
				others := 0 // other coordinators in a fault during [at, back)
				for j, busy := range coordBusy {
					if j != i && slices.ContainsFunc(busy, overlaps) {
						others++
					}
				}
				if slices.ContainsFunc(coordBusy[i], overlaps) || others >= o.Coordinators-1 || slices.ContainsFunc(windows, overlaps) {
					return
				}
				coordBusy[i] = append(coordBusy[i], [2]time.Duration{at, back})
				out = append(out, Fault{at, kind, i}, Fault{back, endKind, i})
			})
		}
		coordinatorFault(coordinatorGap, CoordinatorKill, CoordinatorRestart, 500*time.Millisecond, 4*time.Second)
		// Shorter and longer than the cluster's ownership lease (5 s).
		coordinatorFault(isolateGap, CoordinatorIsolate, CoordinatorReconnect, time.Second, 8*time.Second)
	}
	if o.Store == "redis" {
		var busy time.Duration
		arrivals(rng, o.Duration, redisGap, func(at time.Duration) {
			if busy > at {
				return
			}
			// Sometimes longer than a lease: every member's lease lapses.
			busy = end(at, uniform(200*time.Millisecond, o.LeaseTTL+time.Second))
			out = append(out, Fault{at, RedisKill, 0}, Fault{busy, RedisRestart, 0})
		})
	}
	member := func(gap time.Duration, kind, endKind string, lo, hi time.Duration) {
		arrivals(rng, o.Duration, gap*10/time.Duration(o.Members), func(at time.Duration) {
			i := rng.IntN(o.Members)
			back := end(at, uniform(lo, hi))
			if !free(i, at, back) {
				return
			}
			memberBusy[i] = append(memberBusy[i], [2]time.Duration{at, back})
			out = append(out, Fault{at, kind, i}, Fault{back, endKind, i})
		})
	}
	member(crashGap, MemberCrash, MemberRestart, 500*time.Millisecond, 5*time.Second)
	// Shorter and longer than a lease: the member is expired or it is not.
	member(partitionGap, MemberPartition, MemberHeal, 500*time.Millisecond, 2*o.LeaseTTL)
	last := o.Shards
	arrivals(rng, o.Duration, scaleGap, func(at time.Duration) {
		lo, hi := max(1, o.Shards/2), o.Shards*3/2
		n := lo + rng.IntN(hi-lo+1)
		if n == last {
			n = lo + (n-lo+1)%(hi-lo+1)
		}
		last = n
		out = append(out, Fault{at, Scale, n})
	})
	out = append(out, liveOpFaults(o)...)
	slices.SortStableFunc(out, func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
	return out
}
