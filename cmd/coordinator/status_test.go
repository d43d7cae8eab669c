package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// statusYAML configures a coordinator whose lag refresher runs a round a
// second (its shortest interval) and decides statuses on windows of 4
// samples, trends over 3.
const statusYAML = "  coordination: {heartbeat-interval: 200ms, member-lease-ttl: 2s, rebalance-timeout: 5s}\n" +
	"  monitoring: {offset-cache-ttl: 10ms}\n" +
	"  status: {window: 4, min-samples: 3, stopped-samples: 2}\n"

// stepLoad writes to and reads from one shard of a group, one step per tick,
// each step one transaction (entries added, then some read with
// XREADGROUP), so that every sample the lag refresher takes sees whole
// steps: the lag moves by add − read per step, never back and forth.
type stepLoad struct {
	rdb         *redis.Client
	stream, grp string
	add, read   atomic.Int64
	done        sync.WaitGroup
	failed      atomic.Pointer[error]
}

func startSteps(t *testing.T, rdb *redis.Client, stream, grp string) *stepLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &stepLoad{rdb: rdb, stream: stream, grp: grp}
	l.done.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := l.step(ctx); err != nil && ctx.Err() == nil {
					l.failed.Store(&err)
				}
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		l.done.Wait()
		if err := l.failed.Load(); err != nil {
			t.Errorf("load: %v", *err)
		}
	})
	return l
}

// set makes every following step add add entries and read up to read.
func (l *stepLoad) set(add, read int64) { l.add.Store(add); l.read.Store(read) }

func (l *stepLoad) step(ctx context.Context) error {
	add, read := l.add.Load(), l.read.Load()
	if add == 0 && read == 0 {
		return nil
	}
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for range add {
			p.XAdd(ctx, &redis.XAddArgs{Stream: l.stream, Values: []any{"payload", "x"}})
		}
		if read > 0 {
			p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: l.grp, Consumer: "m1", Streams: []string{l.stream, ">"}, Count: read})
		}
		return nil
	})
	if errors.Is(err, redis.Nil) { // nothing to read
		err = nil
	}
	return err
}

// holdShards heartbeats m to the group every 200 ms until the returned
// function is called (then m stops, as a crashed member does: its lease
// expires).
func holdShards(t *testing.T, api string, key group.Key, m *membersim.Member) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			_, _ = membersim.Heartbeat(ctx, http.DefaultClient, api, key, m)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// groupStatus reads GET …/status of key.
func groupStatus(t *testing.T, api string, key group.Key) contract.StatusView {
	t.Helper()
	var v contract.StatusView
	if st, body := call(t, http.MethodGet, groupURL(api, key)+"/status", "", &v); st != http.StatusOK {
		t.Fatalf("GET status: %d %s", st, body)
	}
	return v
}

// waitShard waits until shard 0 of key has status want and returns the
// group's status then.
func waitShard(t *testing.T, api string, key group.Key, want contract.ConsumptionStatus) contract.StatusView {
	t.Helper()
	var v contract.StatusView
	eventually.True(t, "shard 0 "+string(want), func() bool {
		v = groupStatus(t, api, key)
		return len(v.Shards) == 1 && v.Shards[0].Status == want
	})
	return v
}

// The consumption status follows what a group's member and stream do,
// through every transition (issue 43): OK → LAGGING (more entries arrive
// than are read) → OK (caught up); STALLED (the member holds the shard and
// stops reading); REWOUND (XGROUP SETID moves the position back, no live
// reset); PAUSED (an operator pauses the shard); STOPPED (the member is
// gone while entries arrive). A real coordinator on Redis evaluates the
// one-shard group at every lag-refresh round from the refresher's reads;
// the test waits for each status, never for a time.
func TestStatusTransitions(t *testing.T) {
	t.Parallel() // a key prefix and a coordinator of its own; most of it waits for the refresher's 1 s rounds
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	base := startOnRedis(t, "status-it", prefix+":coord", statusYAML)
	api := base + "/coord/v1"
	key := group.Key{StreamPrefix: prefix, ConsumerGroup: "workers"}
	createGroup(t, api, key, 1)
	stream := contract.StreamKey(prefix, 0)
	if err := rdb.XGroupCreateMkStream(t.Context(), stream, key.ConsumerGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	stopMember := holdShards(t, api, key, membersim.New("m1", nil))
	eventually.True(t, "m1 holds shard 0", func() bool {
		v := groupStatus(t, api, key)
		return len(v.Shards) == 1 && v.Shards[0].Evidence.Holders == 1
	})
	l := startSteps(t, rdb, stream, key.ConsumerGroup)

	l.set(2, 2) // keeps up
	waitShard(t, api, key, contract.ConsumptionOK)
	l.set(4, 2) // 2 more entries per step than read
	v := waitShard(t, api, key, contract.ConsumptionLagging)
	if e := v.Shards[0].Evidence; v.Status != contract.ConsumptionLagging || e.LagStart == nil || e.LagEnd == nil || *e.LagEnd <= *e.LagStart ||
		e.IngestRate == nil || e.ConsumeRate == nil || *e.IngestRate <= *e.ConsumeRate {
		t.Errorf("LAGGING evidence %+v (group %s)", e, v.Status)
	}
	l.set(1, 100) // catches up
	waitShard(t, api, key, contract.ConsumptionOK)

	l.set(2, 0) // the member holds the shard and stops reading
	v = waitShard(t, api, key, contract.ConsumptionStalled)
	if e := v.Shards[0].Evidence; e.Holders != 1 || e.Position == nil || v.Counts[contract.ConsumptionStalled] != 1 {
		t.Errorf("STALLED evidence %+v, counts %v", e, v.Counts)
	}

	l.set(0, 0)
	if err := rdb.XGroupSetID(t.Context(), stream, key.ConsumerGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	l.set(2, 2) // reads again, from the start
	waitShard(t, api, key, contract.ConsumptionRewound)

	if st, body := call(t, http.MethodPost, groupURL(api, key)+"/shards/pause", `{"shards":[0],"requestedBy":"it","reason":"status test"}`, nil); st != http.StatusOK {
		t.Fatalf("pause: %d %s", st, body)
	}
	v = waitShard(t, api, key, contract.ConsumptionPaused)
	if !v.Shards[0].Evidence.Paused || v.Status != contract.ConsumptionPaused {
		t.Errorf("PAUSED: %+v", v)
	}
	if st, body := call(t, http.MethodPost, groupURL(api, key)+"/shards/resume", `{"shards":[0],"requestedBy":"it","reason":"status test"}`, nil); st != http.StatusOK {
		t.Fatalf("resume: %d %s", st, body)
	}
	eventually.True(t, "shard 0 held again", func() bool {
		v := groupStatus(t, api, key)
		return v.Shards[0].Status != contract.ConsumptionPaused && v.Shards[0].Evidence.Holders == 1
	})

	stopMember() // its lease expires
	l.set(2, 0)  // entries keep arriving
	v = waitShard(t, api, key, contract.ConsumptionStopped)
	if v.Status != contract.ConsumptionStopped || v.Shards[0].Evidence.Holders != 0 {
		t.Errorf("STOPPED: %+v", v)
	}
	labels := fmt.Sprintf(`coordinator="status-it",group="workers",shard="0",status="STOPPED",stream=%q`, prefix)
	eventually.True(t, "shard_status STOPPED and the group's series", func() bool {
		_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
		return strings.Contains(body, "redis_stream_coord_shard_status{"+labels+"} 1\n") &&
			strings.Contains(body, fmt.Sprintf(`redis_stream_coord_group_status{coordinator="status-it",group="workers",status="STOPPED",stream=%q} 1`, prefix)) &&
			strings.Contains(body, fmt.Sprintf(`redis_stream_coord_group_desired_members{coordinator="status-it",group="workers",stream=%q} 1`, prefix))
	})
}

// A group whose consumers never started (provisioning off: no Redis
// consumer group on its shards) reports its consumers' backlog, the whole
// stream, as its lag in group_lag and /offsets, and its shards with
// entries STOPPED, in /status, the group view and shard_status (issue 43
// item 3); the scaling signal asks for a member.
func TestNeverStartedGroup(t *testing.T) {
	t.Parallel() // a key prefix and a coordinator of its own
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	base := startOnRedis(t, "never-it", prefix+":coord", statusYAML)
	api := base + "/coord/v1"
	key := group.Key{StreamPrefix: prefix, ConsumerGroup: "never"}
	createGroup(t, api, key, 2)
	for i := range 50 {
		if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: contract.StreamKey(prefix, i%2), Values: []any{"payload", i}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	labels := func(extra string) string {
		return fmt.Sprintf(`{coordinator="never-it",group="never",%sstream=%q}`, extra, prefix)
	}
	eventually.True(t, "group_lag 50 and shards 0 and 1 STOPPED", func() bool {
		_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
		return strings.Contains(body, "redis_stream_coord_group_lag"+labels("")+" 50\n") &&
			strings.Contains(body, "redis_stream_coord_shard_status"+labels(`shard="0",status="STOPPED",`)+" 1\n") &&
			strings.Contains(body, "redis_stream_coord_shard_status"+labels(`shard="1",status="STOPPED",`)+" 1\n")
	})
	v := groupStatus(t, api, key)
	if v.Status != contract.ConsumptionStopped || v.Counts[contract.ConsumptionStopped] != 2 ||
		v.Shards[0].Evidence.Position != nil || v.Shards[0].Evidence.LagEnd == nil || *v.Shards[0].Evidence.LagEnd != 25 {
		t.Errorf("status %+v", v)
	}
	var offsets contract.Offsets
	if st, body := call(t, http.MethodGet, api+contract.Expand(contract.MonitoringOffsets, prefix, "never"), "", &offsets); st != http.StatusOK {
		t.Fatalf("offsets: %d %s", st, body)
	}
	if offsets.TotalLag == nil || *offsets.TotalLag != 50 || offsets.Shards[0].Lag == nil || *offsets.Shards[0].Lag != 25 {
		t.Errorf("offsets: total lag %v, shard 0 %v", offsets.TotalLag, offsets.Shards[0].Lag)
	}
	var view contract.MonitoredGroup
	call(t, http.MethodGet, api+contract.Expand(contract.MonitoringGroup, prefix, "never"), "", &view)
	if view.Status != contract.ConsumptionStopped || view.DesiredMembers == nil || *view.DesiredMembers != 1 {
		t.Errorf("group view: status %q, desiredMembers %v", view.Status, view.DesiredMembers)
	}
	var scaling contract.ScalingView
	call(t, http.MethodGet, groupURL(api, key)+"/scaling", "", &scaling)
	if scaling.DesiredMembers != 1 || scaling.Backlog != 50 || scaling.ConsumeRateMeasured || scaling.PredictedDrainSeconds == nil {
		t.Errorf("scaling %+v", scaling)
	}
}
