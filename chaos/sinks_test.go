package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestMain lets the sink scenario start this test binary as a consumer
// process (SinkConsumerEnv).
func TestMain(m *testing.M) {
	MaybeSinkConsumer()
	os.Exit(m.Run())
}

// TestChaosSinksShort is the short form of the sink scenario of make chaos:
// one seed, 10 s of faults (the first a consumer stopped past its lease),
// three consumer processes writing every entry to the Redis and the
// PostgreSQL sink. Per reset generation no entry may be applied twice or
// never, and every zombie write must be refused; there must be some.
func TestChaosSinksShort(t *testing.T) {
	if _, err := os.Stat(redisproc.Binary); err != nil {
		testredis.Unavailable(t, "redis-server binary: %v", err)
	}
	ctx := context.Background()
	o := SinkDefaults()
	if conn, err := pgx.Connect(ctx, o.PostgresURL); err != nil {
		testredis.Unavailable(t, "PostgreSQL at %s: %v", o.PostgresURL, err)
	} else {
		conn.Close(ctx)
	}
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Seed, o.Binary, o.Self = 1, bin, self
	o.Duration, o.SettleTimeout = 10*time.Second, 30*time.Second
	res, err := RunSinks(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	res.Report(&b)
	if res.Failed() {
		t.Error(b.String())
	} else {
		t.Log(b.String())
	}
}

// The generation oracle: a log that replays from a reset's id starts a
// generation; a replay from anywhere else is a duplicate; a gap is missing.
func TestGenerations(t *testing.T) {
	ids := []string{"1-0", "2-0", "3-0", "4-0", "5-0"}
	for _, c := range []struct {
		name            string
		log, sets       []string
		gens, dup, miss int
		bad             bool
	}{
		{name: "once", log: ids, gens: 1},
		{name: "replay after a reset", log: []string{"1-0", "2-0", "3-0", "4-0", "3-0", "4-0", "5-0"}, sets: []string{"2-0"}, gens: 2},
		{name: "replay without a reset", log: []string{"1-0", "2-0", "3-0", "2-0", "3-0", "4-0", "5-0"}, gens: 2, dup: 2, bad: true},
		{name: "duplicate", log: []string{"1-0", "2-0", "2-0", "3-0", "4-0", "5-0"}, gens: 1, dup: 1},
		{name: "gap", log: []string{"1-0", "2-0", "4-0", "5-0"}, gens: 1, miss: 1},
		{name: "unfinished", log: []string{"1-0", "2-0"}, gens: 1, miss: 3},
		{name: "late start", log: []string{"2-0", "3-0", "4-0", "5-0"}, gens: 1, miss: 1},
	} {
		g := generations(ids, c.log, c.sets)
		if g.generations != c.gens || g.duplicates != c.dup || g.missing != c.miss || (len(g.violations) > 0) != c.bad {
			t.Errorf("%s: %+v, want %d generations, %d duplicates, %d missing, violations %v", c.name, g, c.gens, c.dup, c.miss, c.bad)
		}
	}
}
