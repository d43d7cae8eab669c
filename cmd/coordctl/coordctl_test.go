package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testredis"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// ctl runs coordctl commands with a config file of its own.
type ctl struct {
	t   *testing.T
	env map[string]string
}

// run runs one command line and returns its exit code, stdout and stderr.
func (c ctl) run(stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := run(c.t.Context(), args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return c.env[k] })
	return code, out.String(), errOut.String()
}

// ok runs a command that must succeed and returns its stdout.
func (c ctl) ok(args ...string) string {
	c.t.Helper()
	code, out, errOut := c.run("", args...)
	if code != exitOK {
		c.t.Fatalf("coordctl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// json runs a command with -o json that must succeed and decodes its output.
func (c ctl) json(out any, args ...string) {
	c.t.Helper()
	if err := json.Unmarshal([]byte(c.ok(append(args, "-o", "json")...)), out); err != nil {
		c.t.Fatalf("coordctl %s -o json: %v", strings.Join(args, " "), err)
	}
}

// TestCoordctlAgainstACoordinator drives coordctl against a coordinator
// process on Redis: login (token file 0600), create, describe, scale, reset
// the offsets, list and redrive a dead letter, members, cluster and delete,
// with the exit codes scripts rely on along the way.
func TestCoordctlAgainstACoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a coordinator process")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	dir := t.TempDir()
	bin, err := coordproc.BuildCoordinator(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COORDINATOR_STREAMS_PROVISIONING_ENABLED", "true")
	srv, err := coordproc.StartServer(ctx, bin, dir, "coord", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: prefix + ":coord", RedisAddr: testredis.SharedAddr,
		Interval: time.Second, LeaseTTL: 10 * time.Second, GroupCommit: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	config := filepath.Join(dir, "home", "coordctl", "config.json")
	c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": config, "USER": "tester"}}

	if code, _, errOut := c.run("", "groups", "list"); code != exitAuth || !strings.Contains(errOut, "not logged in") {
		t.Fatalf("before login: exit %d %q, want %d", code, errOut, exitAuth)
	}
	if code, _, _ := c.run("wrong\n", "login", "--server", srv.Root, "--username", "admin"); code != exitAuth {
		t.Fatalf("login with a wrong password: exit %d, want %d", code, exitAuth)
	}
	if code, out, errOut := c.run("password\n", "login", "--server", srv.Root, "--username", "admin", "--password-stdin"); code != exitOK || !strings.Contains(out, "Logged in") {
		t.Fatalf("login: exit %d %s%s", code, out, errOut)
	}
	if fi, err := os.Stat(config); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, mode %v, want 0600", config, err, fi.Mode().Perm())
	}

	c.ok("groups", "create", prefix, "billing", "--shards", "2", "--reason", "test")
	if code, _, _ := c.run("", "groups", "create", prefix, "billing"); code != exitConflict {
		t.Errorf("create twice: exit %d, want %d", code, exitConflict)
	}
	if out := c.ok("groups", "list"); !strings.Contains(out, prefix) || !strings.Contains(out, "billing") {
		t.Errorf("groups list:\n%s", out)
	}
	var d description
	c.json(&d, "groups", "describe", prefix, "billing")
	if d.Group.ShardCount != 2 || d.Offsets == nil || len(d.Offsets.Shards) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	if out := c.ok("groups", "describe", prefix, "billing"); !strings.Contains(out, "LAG") || !strings.Contains(out, streams.StreamKey(prefix, 1)) {
		t.Errorf("describe table:\n%s", out)
	}

	var m struct{ ToShardCount int }
	c.json(&m, "scale", prefix, "billing", "--shards", "4")
	if m.ToShardCount != 4 {
		t.Errorf("scale: %+v", m)
	}
	if code, _, _ := c.run("", "scale", prefix, "billing"); code != exitUsage {
		t.Errorf("scale without --shards: exit %d, want %d", code, exitUsage)
	}

	for i := range 3 {
		rdb.XAdd(ctx, &redis.XAddArgs{Stream: streams.StreamKey(prefix, 0), Values: []any{"payload", i}})
	}
	var reset struct {
		Shards []struct {
			ShardIndex int
			Before     struct{ Lag *int64 }
			After      struct{ Lag *int64 }
		}
	}
	c.json(&reset, "reset-offsets", prefix, "billing", "--to", "latest", "--shards", "0")
	if len(reset.Shards) != 1 || reset.Shards[0].Before.Lag == nil || *reset.Shards[0].Before.Lag != 3 || *reset.Shards[0].After.Lag != 0 {
		t.Errorf("reset-offsets: %+v", reset)
	}
	if out := c.ok("reset-offsets", prefix, "billing", "--to", "earliest", "--shards", "0"); !strings.Contains(out, "LAG-AFTER") {
		t.Errorf("reset-offsets table:\n%s", out)
	}
	if code, _, _ := c.run("", "reset-offsets", prefix, "billing", "--to", "someday"); code != exitUsage {
		t.Errorf("reset-offsets --to someday: exit %d, want %d", code, exitUsage)
	}

	dlq := streams.DeadLetterStream(prefix)
	id := rdb.XAdd(ctx, &redis.XAddArgs{Stream: dlq, Values: streams.DeadLetterFields(streams.StreamKey(prefix, 1), "1-1", "billing", 5, "boom", map[string]any{"payload": "p"})}).Val()
	other := rdb.XAdd(ctx, &redis.XAddArgs{Stream: dlq, Values: streams.DeadLetterFields(streams.StreamKey(prefix, 0), "2-1", "shipping", 5, "bang", map[string]any{"payload": "q"})}).Val()
	if out := c.ok("dead-letters", prefix, "billing"); !strings.Contains(out, id) || !strings.Contains(out, "boom") || strings.Contains(out, other) {
		t.Errorf("dead-letters list (billing's only):\n%s", out)
	}
	if out := c.ok("dead-letters", prefix, "billing", "--all-groups"); !strings.Contains(out, id) || !strings.Contains(out, other) || !strings.Contains(out, "shipping") {
		t.Errorf("dead-letters list --all-groups:\n%s", out)
	}
	if code, out, _ := c.run("", "dead-letters", prefix, "billing", "redrive", other); code != exitFailure || !strings.Contains(out, "DEAD_LETTER_OF_ANOTHER_GROUP") {
		t.Errorf("redrive of another group's dead letter: exit %d %s, want %d", code, out, exitFailure)
	}
	if out := c.ok("dead-letters", prefix, "billing", "redrive", id); !strings.Contains(out, "REDRIVEN") {
		t.Errorf("redrive:\n%s", out)
	}
	if n := rdb.XLen(ctx, streams.StreamKey(prefix, 1)).Val(); n != 1 {
		t.Errorf("shard 1 holds %d entries after the redrive, want 1", n)
	}
	if code, out, _ := c.run("", "dead-letters", prefix, "billing", "delete", id); code != exitFailure || !strings.Contains(out, "DEAD_LETTER_NOT_FOUND") {
		t.Errorf("delete of a redriven id: exit %d %s, want %d", code, out, exitFailure)
	}

	if out := c.ok("members", prefix, "billing"); !strings.Contains(out, "MEMBER") {
		t.Errorf("members:\n%s", out)
	}
	c.ok("cluster") // a 404 (no cluster view) is not an error

	c.ok("groups", "delete", prefix, "billing", "--reason", "done")
	if code, _, _ := c.run("", "groups", "describe", prefix, "billing"); code != exitNotFound {
		t.Errorf("describe after delete: exit %d, want %d", code, exitNotFound)
	}
}

// TestArgumentlessCommandsRefuseArguments: groups list and cluster take no
// positional argument; one is a usage error naming the command, before
// any login is needed.
func TestArgumentlessCommandsRefuseArguments(t *testing.T) {
	c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": filepath.Join(t.TempDir(), "config.json")}}
	for _, args := range [][]string{{"groups", "list", "extra"}, {"cluster", "extra"}} {
		code, _, errOut := c.run("", args...)
		if name := strings.Join(args[:len(args)-1], " "); code != exitUsage || !strings.Contains(errOut, name+": want no argument") {
			t.Errorf("coordctl %s: exit %d, %q; want %d naming %q", strings.Join(args, " "), code, errOut, exitUsage, name)
		}
	}
}
