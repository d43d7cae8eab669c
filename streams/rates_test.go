package streams

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

func ptr[T any](v T) *T { return &v }

func fmtRate(r *float64) string {
	if r == nil {
		return "nil"
	}
	return fmt.Sprint(*r)
}

func TestRateTrackerObserve(t *testing.T) {
	t0 := time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)
	key := RateKey{Prefix: "orders", Group: "g", Shard: 3}
	tracker := NewRateTracker()
	for _, tc := range []struct {
		name               string
		at                 time.Duration
		length             int64
		lag                *int64
		produced, consumed string
	}{
		{"first sample", 0, 100, ptr[int64](40), "nil", "nil"},
		{"steady", 10 * time.Second, 150, ptr[int64](60), "5", "3"},
		{"thirds round to 2 decimals", 13 * time.Second, 151, ptr[int64](60), "0.33", "0.33"},
		{"trimmed stream, lag down", 14 * time.Second, 120, ptr[int64](30), "0", "0"},
		{"unknown lag", 16 * time.Second, 130, nil, "5", "nil"},
		{"lag known again, previous unknown", 18 * time.Second, 140, ptr[int64](0), "5", "nil"},
		{"negative lag counts as 0", 20 * time.Second, 150, ptr[int64](-7), "5", "5"},
		{"same instant", 20 * time.Second, 160, ptr[int64](0), "nil", "nil"},
		{"clock went back", 19 * time.Second, 170, ptr[int64](0), "nil", "nil"},
		{"after clock went back", 21 * time.Second, 172, ptr[int64](1), "1", "0.5"},
	} {
		produced, consumed := tracker.Observe(key, t0.Add(tc.at), tc.length, tc.lag)
		if fmtRate(produced) != tc.produced || fmtRate(consumed) != tc.consumed {
			t.Errorf("%s: produced %s consumed %s, want %s %s", tc.name, fmtRate(produced), fmtRate(consumed), tc.produced, tc.consumed)
		}
	}
}

func TestRateTrackerKeysAreIndependent(t *testing.T) {
	tracker := NewRateTracker()
	t0 := time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)
	a := RateKey{Prefix: "p", Group: "g1", Shard: 0}
	for _, key := range []RateKey{a, {Prefix: "p", Group: "g2", Shard: 0}, {Prefix: "p", Group: "g1", Shard: 1}, {Prefix: "q", Group: "g1", Shard: 0}} {
		if produced, consumed := tracker.Observe(key, t0, 10, ptr[int64](0)); produced != nil || consumed != nil {
			t.Fatalf("first sample of %+v has rates", key)
		}
	}
	if produced, _ := tracker.Observe(a, t0.Add(time.Second), 12, ptr[int64](0)); fmtRate(produced) != "2" {
		t.Fatalf("produced = %s", fmtRate(produced))
	}
}

func TestRateTrackerConcurrentUse(t *testing.T) {
	tracker := NewRateTracker()
	t0 := time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for shard := range 8 {
		wg.Go(func() {
			key := RateKey{Prefix: "p", Group: "g", Shard: shard}
			for s := range 100 {
				produced, _ := tracker.Observe(key, t0.Add(time.Duration(s)*time.Second), int64(s*shard), ptr[int64](0))
				if s > 0 && fmtRate(produced) != fmt.Sprint(shard) {
					t.Errorf("shard %d sample %d: produced %s", shard, s, fmtRate(produced))
				}
			}
		})
	}
	wg.Wait()
}

func TestSumKnown(t *testing.T) {
	for _, tc := range []struct {
		rates []*float64
		want  string
	}{
		{nil, "nil"},
		{[]*float64{nil, nil}, "nil"},
		{[]*float64{ptr(0.1), nil, ptr(0.2)}, "0.3"},
		{[]*float64{ptr(1.25), ptr(2.5)}, "3.75"},
	} {
		if got := fmtRate(SumKnown(tc.rates...)); got != tc.want {
			t.Errorf("SumKnown(%v) = %s, want %s", tc.rates, got, tc.want)
		}
	}
}

// TestRatesFromRedisObservations drives real streams at a known rate: over
// 10 simulated seconds 30 entries are added to each of two shards while a
// consumer reads (and acks) 20 from shard 0 and nothing from shard 1.
func TestRatesFromRedisObservations(t *testing.T) {
	client := newTestClient(t)
	prefix, group := testPrefix(t, client), "rates"
	if err := NewProvisioner(client).Provision(t.Context(), prefix, group, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	obs, tracker := NewObserver(client), NewRateTracker()
	t0 := time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)
	observe := func(at time.Time) (produced, consumed []*float64) {
		offsets, err := obs.Offsets(t.Context(), prefix, group, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range offsets {
			p, c := tracker.Observe(RateKey{Prefix: prefix, Group: group, Shard: o.Shard}, at, o.StreamLength, o.Lag)
			produced, consumed = append(produced, p), append(consumed, c)
		}
		return produced, consumed
	}

	xaddN(t, client, contract.StreamKey(prefix, 0), 50)
	xaddN(t, client, contract.StreamKey(prefix, 1), 50)
	if produced, consumed := observe(t0); SumKnown(produced...) != nil || SumKnown(consumed...) != nil {
		t.Fatal("first observation has rates")
	}

	xaddN(t, client, contract.StreamKey(prefix, 0), 30)
	xaddN(t, client, contract.StreamKey(prefix, 1), 30)
	consume(t, client, contract.StreamKey(prefix, 0), group, 20, true)

	produced, consumed := observe(t0.Add(10 * time.Second))
	got := strings.Join([]string{fmtRate(produced[0]), fmtRate(consumed[0]), fmtRate(produced[1]), fmtRate(consumed[1]),
		fmtRate(SumKnown(produced...)), fmtRate(SumKnown(consumed...))}, " ")
	if want := "3 2 3 0 6 2"; got != want {
		t.Fatalf("rates (produced/consumed shard 0, shard 1, group) = %s, want %s", got, want)
	}
}

// consume reads n new entries of key as consumer "c1" of group and, when
// ack is set, acknowledges them; it returns their ids.
func consume(t *testing.T, client redis.UniversalClient, key, group string, n int64, ack bool) []string {
	t.Helper()
	streams, err := client.XReadGroup(t.Context(), &redis.XReadGroupArgs{
		Group: group, Consumer: "c1", Streams: []string{key, ">"}, Count: n, Block: -1,
	}).Result()
	if err != nil {
		t.Fatalf("XREADGROUP %s: %v", key, err)
	}
	var ids []string
	for _, m := range streams[0].Messages {
		ids = append(ids, m.ID)
	}
	if int64(len(ids)) != n {
		t.Fatalf("XREADGROUP %s read %d, want %d", key, len(ids), n)
	}
	if ack {
		if err := client.XAck(t.Context(), key, group, ids...).Err(); err != nil {
			t.Fatalf("XACK %s: %v", key, err)
		}
	}
	return ids
}

// Forget drops the groups whose latest sample is older than its cut (their
// next sample is a first again) and keeps those with a newer one, on any
// shard.
func TestRateTrackerForget(t *testing.T) {
	tracker := NewRateTracker()
	t0 := time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)
	old, recent := RateKey{Prefix: "p", Group: "deleted"}, RateKey{Prefix: "p", Group: "read", Shard: 1}
	tracker.Observe(old, t0, 10, nil)
	tracker.Observe(RateKey{Prefix: "p", Group: "read"}, t0, 10, nil)
	tracker.Observe(recent, t0.Add(time.Hour), 10, nil)
	tracker.Forget(t0.Add(time.Minute))
	if len(tracker.groups) != 1 {
		t.Fatalf("after Forget: %d groups, want the one sampled after the cut", len(tracker.groups))
	}
	if produced, _ := tracker.Observe(old, t0.Add(2*time.Hour), 20, nil); produced != nil {
		t.Errorf("a forgotten group's next sample has a rate: %s", fmtRate(produced))
	}
	if produced, _ := tracker.Observe(recent, t0.Add(time.Hour+time.Second), 12, nil); fmtRate(produced) != "2" {
		t.Errorf("a kept group lost its sample: produced %s", fmtRate(produced))
	}
}
