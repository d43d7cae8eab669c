package bench

import (
	"context"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
	goredis "github.com/redis/go-redis/v9"
)

const commandStats = "# Commandstats\r\n" +
	"cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_set:calls=30,usec=60,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n"

func TestParseInfo(t *testing.T) {
	info := parseInfo("# Stats\r\ntotal_net_input_bytes:12345\r\ninstantaneous_ops_per_sec:7\r\n")
	if info["total_net_input_bytes"] != "12345" || len(info) != 2 {
		t.Errorf("info %v", info)
	}
	if c := commandCalls(commandStats); len(c) != 2 || c["evalsha"] != 120 || c["set"] != 30 {
		t.Errorf("calls %v, want evalsha 120, set 30", c)
	}
}

func TestParseLSN(t *testing.T) {
	if n, err := parseLSN("1/A0"); err != nil || n != 1<<32+160 {
		t.Errorf("LSN %d, %v", n, err)
	}
	for _, bad := range []string{"", "12", "x/1"} {
		if _, err := parseLSN(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestWithSearchPath(t *testing.T) {
	got, err := withSearchPath("postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "coord_bench_1")
	if err != nil || got != "postgres://postgres@127.0.0.1:5432/test?search_path=coord_bench_1&sslmode=disable" {
		t.Errorf("%s, %v", got, err)
	}
}

func TestCountersSub(t *testing.T) {
	d := StoreCounters{Bytes: 10, Commands: 4, CPU: 5, ByCommand: map[string]int64{"get": 3, "info": 1}}.
		Sub(StoreCounters{Bytes: 3, Commands: 1, CPU: 2, ByCommand: map[string]int64{"get": 3}})
	if d.Bytes != 7 || d.Commands != 3 || d.CPU != 3 || len(d.ByCommand) != 1 || d.ByCommand["info"] != 1 {
		t.Errorf("%+v", d)
	}
}

func TestSchemaName(t *testing.T) {
	if got := schemaName("coord_bench_20261129T115940_store-jdbc"); got != "coord_bench_20261129t115940_store_jdbc" {
		t.Errorf("schema %q", got)
	}
}

// TestLagReadBytes: the estimate of the lag refresher's bytes is what a
// Redis counts in total_net_input_bytes for those commands.
func TestLagReadBytes(t *testing.T) {
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	// One connection, opened before the first sample; one command at a
	// time (go-redis opens a new connection after a pipeline, whose
	// handshake would count too).
	probe := &redisProbe{client: goredis.NewClient(&goredis.Options{Addr: srv.Addr, PoolSize: 1}), server: StoreOwn}
	defer probe.client.Close()
	if err := probe.client.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{"bench:0", "bench:1", "bench:12345"}
	before, err := probe.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		_ = probe.client.XInfoStream(ctx, k).Err() // no such key: an error reply, counted all the same
		_ = probe.client.XInfoGroups(ctx, k).Err()
		_ = probe.client.MemoryUsage(ctx, k).Err()
	}
	after, err := probe.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	// The two INFO commands of a sample count too.
	want := d.Bytes - int64(respLen("info", "stats", "cpu")+respLen("info", "commandstats"))
	if got := lagReadBytes(d.ByCommand, keys); got != want {
		t.Errorf("estimated %d B, Redis received %d B (%v)", got, want, d.ByCommand)
	}
}
