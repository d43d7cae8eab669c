package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// ctl runs coordctl commands with a config file of its own and records
// which commands ran.
type ctl struct {
	t   *testing.T
	env map[string]string
	ran map[string]bool
}

func newCtl(t *testing.T, dir string) ctl {
	return ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": filepath.Join(dir, "home", "coordctl", "config.json"), "USER": "tester"}, ran: map[string]bool{}}
}

// run runs one command line and returns its exit code, stdout and stderr.
func (c ctl) run(stdin string, args ...string) (int, string, string) {
	c.t.Helper()
	if cmd, _, ok := lookup(args); ok && c.ran != nil {
		c.ran[cmd.name] = true
	}
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

// exit runs a command that must end with exit code want and returns its
// stdout and stderr.
func (c ctl) exit(want int, args ...string) (string, string) {
	c.t.Helper()
	code, out, errOut := c.run("", args...)
	if code != want {
		c.t.Errorf("coordctl %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// json runs a command with -o json that must succeed and decodes its output.
func (c ctl) json(out any, args ...string) {
	c.t.Helper()
	if err := json.Unmarshal([]byte(c.ok(append(args, "-o", "json")...)), out); err != nil {
		c.t.Fatalf("coordctl %s -o json: %v", strings.Join(args, " "), err)
	}
}

// login logs c in to srv as the default admin.
func (c ctl) login(srv *coordproc.Server) {
	c.t.Helper()
	if code, out, errOut := c.run("password\n", "login", "--server", srv.Root, "--username", "admin", "--password-stdin"); code != exitOK || !strings.Contains(out, "Logged in") {
		c.t.Fatalf("login: exit %d %s%s", code, out, errOut)
	}
}

// startCoordinator builds and starts a coordinator process on store (a
// fresh key prefix on the shared Redis for the Redis store).
func startCoordinator(t *testing.T, dir, store string) (*coordproc.Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bin, err := coordproc.Build(ctx, dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	prefix := testPrefix(t)
	srv, err := coordproc.StartServer(ctx, bin, dir, "coord", coordproc.ServerConfig{
		Store: store, KeyPrefix: prefix + ":coord", RedisAddr: redisAddr,
		Interval: time.Second, LeaseTTL: 10 * time.Second, GroupCommit: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv, prefix
}

// writeFile writes content to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCoordctlAgainstACoordinator drives every coordctl command against a
// coordinator process on Redis, with the exit codes scripts rely on along
// the way, and fails when a registered command was not run here.
func TestCoordctlAgainstACoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a coordinator process")
	}
	rdb := sharedRedis(t)
	t.Setenv("COORDINATOR_STREAMS_PROVISIONING_ENABLED", "true")
	dir := t.TempDir()
	srv, prefix := startCoordinator(t, dir, coordproc.StoreRedis)
	c := newCtl(t, dir)
	ctx := t.Context()

	// login, and a token file only its owner reads.
	if code, _, errOut := c.run("", "groups", "list"); code != exitAuth || !strings.Contains(errOut, "not logged in") {
		t.Fatalf("before login: exit %d %q, want %d", code, errOut, exitAuth)
	}
	if code, _, _ := c.run("wrong\n", "login", "--server", srv.Root, "--username", "admin"); code != exitAuth {
		t.Fatalf("login with a wrong password: exit %d, want %d", code, exitAuth)
	}
	c.login(srv)
	if fi, err := os.Stat(c.env["COORDCTL_CONFIG"]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v, want mode 0600", err, fi)
	}

	// groups create, list, describe.
	c.ok("groups", "create", prefix, "billing", "--shards", "2", "--reason", "test")
	c.ok("groups", "create", prefix, "shipping", "--shards", "2")
	c.exit(exitConflict, "groups", "create", prefix, "billing")
	if out := c.ok("groups", "list"); !strings.Contains(out, prefix) || !strings.Contains(out, "billing") || !strings.Contains(out, "shipping") {
		t.Errorf("groups list:\n%s", out)
	}
	var d description
	c.json(&d, "groups", "describe", prefix, "billing")
	if d.Group.ShardCount != 2 || d.Offsets == nil || len(d.Offsets.Shards) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	if out := c.ok("groups", "describe", prefix, "billing"); !strings.Contains(out, "LAG") || !strings.Contains(out, prefix+":1") {
		t.Errorf("describe table:\n%s", out)
	}

	// create-groups: from a file, then from groups list -o json (every
	// group exists: nothing fails).
	file := writeFile(t, dir, "groups.yaml", fmt.Sprintf("groups:\n  - {streamPrefix: %s, consumerGroup: audit, shardCount: 2}\n  - {streamPrefix: %s, consumerGroup: billing, shardCount: 2}\n", prefix, prefix))
	if out := c.ok("create-groups", "-f", file); !strings.Contains(out, "audit") || !strings.Contains(out, created) || !strings.Contains(out, existed) ||
		!strings.Contains(out, "1 created, 1 existed, 0 failed") {
		t.Errorf("create-groups:\n%s", out)
	}
	listed := writeFile(t, dir, "groups.json", c.ok("groups", "list", "-o", "json"))
	var bulk struct{ Created, Existing, Failed int }
	c.json(&bulk, "create-groups", "-f", listed)
	if bulk.Created != 0 || bulk.Existing < 3 || bulk.Failed != 0 {
		t.Errorf("create-groups from groups list -o json: %+v", bulk)
	}

	// cluster: the one coordinator owns the three groups.
	var view contract.ClusterView
	c.json(&view, "cluster")
	if len(view.Coordinators) != 1 || view.Coordinators[0].ID != srv.ID || view.Coordinators[0].GroupsOwned != 3 || len(view.Groups) != 3 {
		t.Errorf("cluster: %+v", view)
	}
	out := c.ok("cluster")
	if row := lineWith(out, srv.ID); !strings.Contains(row, srv.Root) || !strings.Contains(row, "live, self") || !strings.Contains(row, "  3  ") ||
		!strings.Contains(out, "Groups: 3; without an owner: 0") {
		t.Errorf("cluster table (want %s owning and placing 3 groups):\n%s", srv.ID, out)
	}

	// reset-offsets on shard 0 of shipping (before any migration: a reset
	// waits for none).
	for i := range 3 {
		rdb.XAdd(ctx, xadd(prefix+":0", i))
	}
	if out := c.ok("reset-offsets", prefix, "shipping", "--to", "latest", "--shards", "0", "--dry-run"); !strings.Contains(out, "SKIPPED") {
		t.Errorf("reset-offsets --dry-run:\n%s", out)
	}
	var live contract.LiveReset
	c.json(&live, "reset-offsets", prefix, "shipping", "--to", "latest", "--shards", "0")
	if s := live.Shards; live.State != contract.ResetDone || len(s) != 1 || s[0].Before == nil || s[0].Before.Lag == nil || *s[0].Before.Lag != 3 ||
		s[0].After == nil || s[0].After.Lag == nil || *s[0].After.Lag != 0 {
		t.Errorf("reset-offsets: %+v", live)
	}
	if out := c.ok("reset-offsets", prefix, "shipping", "--to", "earliest", "--shards", "0"); !strings.Contains(out, "LAG-AFTER") {
		t.Errorf("reset-offsets table:\n%s", out)
	}
	var reset contract.OffsetResetResult
	c.json(&reset, "reset-offsets", prefix, "shipping", "--to", "by:2", "--shards", "0", "--force")
	if entries := rdb.XRange(ctx, prefix+":0", "-", "+").Val(); len(reset.Shards) != 1 || !reset.Forced || len(entries) != 3 ||
		reset.Shards[0].After.LastDeliveredID == nil || *reset.Shards[0].After.LastDeliveredID != entries[1].ID {
		t.Errorf("reset-offsets --force by:2 from the start: %+v", reset)
	}
	if out := c.ok("resets", prefix, "shipping"); !strings.Contains(out, live.ResetID) {
		t.Errorf("resets:\n%s", out)
	}
	if out := c.ok("resets", prefix, "shipping", live.ResetID); !strings.Contains(out, "DONE") {
		t.Errorf("resets ID:\n%s", out)
	}
	if out := c.ok("pause", prefix, "shipping", "--shards", "1"); !strings.Contains(out, "STILL-RELEASING") {
		t.Errorf("pause:\n%s", out)
	}
	c.ok("resume", prefix, "shipping", "--shards", "1")
	c.exit(exitUsage, "pause", prefix, "shipping")
	c.exit(exitUsage, "reset-offsets", prefix, "shipping", "--to", "someday")

	// dead-letters: list (the group's, every group's), redrive, delete.
	id := rdb.XAdd(ctx, deadLetter(prefix, 1, "1-1", "shipping", "boom")).Val()
	other := rdb.XAdd(ctx, deadLetter(prefix, 0, "2-1", "billing", "bang")).Val()
	third := rdb.XAdd(ctx, deadLetter(prefix, 0, "3-1", "shipping", "crash")).Val()
	if out := c.ok("dead-letters", prefix, "shipping"); !strings.Contains(out, id) || !strings.Contains(out, "boom") || strings.Contains(out, other) {
		t.Errorf("dead-letters list (shipping's only):\n%s", out)
	}
	if out := c.ok("dead-letters", prefix, "shipping", "--all-groups"); !strings.Contains(out, id) || !strings.Contains(out, other) {
		t.Errorf("dead-letters list --all-groups:\n%s", out)
	}
	if out, _ := c.exit(exitFailure, "dead-letters", prefix, "shipping", "redrive", other); !strings.Contains(out, string(client.CodeDeadLetterOfAnotherGroup)) {
		t.Errorf("redrive of another group's dead letter:\n%s", out)
	}
	if out := c.ok("dead-letters", prefix, "shipping", "redrive", id); !strings.Contains(out, "REDRIVEN") {
		t.Errorf("redrive:\n%s", out)
	}
	if out := c.ok("dead-letters", prefix, "shipping", "delete", third); !strings.Contains(out, "DELETED") {
		t.Errorf("delete:\n%s", out)
	}
	if out, _ := c.exit(exitFailure, "dead-letters", prefix, "shipping", "delete", id); !strings.Contains(out, string(client.CodeDeadLetterNotFound)) {
		t.Errorf("delete of a redriven id:\n%s", out)
	}

	// members: a member of billing, which a delete without --force spares.
	member := joinMember(t, srv, prefix, "billing")
	eventually.True(t, "the member listed", func() bool {
		return strings.Contains(c.ok("members", prefix, "billing"), member)
	})
	c.exit(exitConflict, "groups", "delete", prefix, "billing")

	// history: the member's join gave it billing's shards.
	var h contract.HistoryView
	c.json(&h, "history", prefix, "billing")
	if len(h.Entries) != 2 || h.Entries[1].Shard != 1 || h.Entries[1].ToMember != member || h.Entries[1].Cause != contract.MoveJoin {
		t.Errorf("history: %+v", h)
	}
	if out := c.ok("history", prefix, "billing", "--shard", "1", "--since", "1h"); strings.Count(out, "join") != 1 || !strings.Contains(out, member) {
		t.Errorf("history --shard 1 --since 1h:\n%s", out)
	}
	c.exit(exitUsage, "history", prefix, "billing", "--since", "someday")

	// status: the group's consumption status and scaling signal, as the
	// API answers them (UNKNOWN until the lag refresher's first round).
	var st struct {
		Status  contract.StatusView  `json:"status"`
		Scaling contract.ScalingView `json:"scaling"`
	}
	c.json(&st, "status", prefix, "billing")
	if st.Status.ConsumerGroup != "billing" || st.Scaling.ConsumerGroup != "billing" || st.Scaling.ShardCount != 2 {
		t.Errorf("status: %+v", st)
	}
	if out := c.ok("status", prefix, "billing"); !strings.Contains(out, "DESIRED") || !strings.Contains(out, prefix+"/billing") {
		t.Errorf("status table:\n%s", out)
	}

	// scale-stream moves every group of the prefix; scale one group;
	// rollback its active migration.
	var streamScale contract.StreamScaleView
	c.json(&streamScale, "scale-stream", prefix, "--shards", "4")
	if streamScale.TargetShardCount != 4 || len(streamScale.Migrations) != 3 || strings.Join(streamScale.AffectedConsumerGroups, ",") != "audit,billing,shipping" {
		t.Errorf("scale-stream: %+v", streamScale)
	}
	c.exit(exitUsage, "scale-stream", prefix)
	c.ok("groups", "create", prefix+"-solo", "only", "--shards", "2")
	var m struct {
		ToShardCount int
		State        string
	}
	c.json(&m, "scale", prefix+"-solo", "only", "--shards", "3")
	if m.ToShardCount != 3 {
		t.Errorf("scale: %+v", m)
	}
	c.exit(exitUsage, "scale", prefix+"-solo", "only")
	if out := c.ok("rollback", prefix+"-solo", "only"); !strings.Contains(out, "ROLLED_BACK") {
		t.Errorf("rollback:\n%s", out)
	}
	c.exit(exitConflict, "rollback", prefix+"-solo", "only")

	// groups delete --force, then the group is gone.
	c.ok("groups", "delete", prefix, "billing", "--force", "--reason", "done")
	c.exit(exitNotFound, "groups", "describe", prefix, "billing")

	for name := range commands {
		if !c.ran[name] {
			t.Errorf("command %q is registered but not run against the coordinator here: add it to this test", name)
		}
	}
}

// TestCoordctlWithoutRedis: on a coordinator with the memory store and no
// Redis, the commands that need Redis end with exit 7 (not the retryable
// 6) and a message naming the settings that turn Redis on; describe shows
// the group and why its offsets are missing.
func TestCoordctlWithoutRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a coordinator process")
	}
	dir := t.TempDir()
	srv, prefix := startCoordinator(t, dir, coordproc.StoreMemory)
	c := newCtl(t, dir)
	c.login(srv)
	c.ok("groups", "create", prefix, "billing", "--shards", "2")
	for _, args := range [][]string{
		{"reset-offsets", prefix, "billing", "--to", "latest"},
		{"dead-letters", prefix, "billing"},
		{"dead-letters", prefix, "billing", "redrive", "1-1"},
		{"status", prefix, "billing"},
	} {
		_, errOut := c.exit(exitNotEnabled, args...)
		if !strings.Contains(errOut, "store.type is redis") || !strings.Contains(errOut, "COORDINATOR_STORE_TYPE=redis") {
			t.Errorf("coordctl %s: %q, want the settings that turn Redis on", strings.Join(args, " "), errOut)
		}
	}
	if out := c.ok("groups", "describe", prefix, "billing"); !strings.Contains(out, "Shards:     2") || !strings.Contains(out, "Shard offsets unavailable: Redis is not configured") {
		t.Errorf("describe without Redis:\n%s", out)
	}
}

// TestCreateGroupsWaitsForTheRateLimit: create-groups waits out 429
// RATE_LIMIT_EXCEEDED (2 creations per 2 s here) and creates every group;
// with --no-wait it stops at the limit with exit 6 and lists the groups it
// did not attempt.
func TestCreateGroupsWaitsForTheRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a coordinator process")
	}
	t.Setenv("COORDINATOR_API_RATE_LIMIT_ENABLED", "true")
	t.Setenv("COORDINATOR_API_RATE_LIMIT_MAX_GROUP_CREATES", "2")
	t.Setenv("COORDINATOR_API_RATE_LIMIT_WINDOW", "2s")
	dir := t.TempDir()
	srv, prefix := startCoordinator(t, dir, coordproc.StoreMemory)
	c := newCtl(t, dir)
	c.login(srv)
	file := func(name string, groups ...string) string {
		var b strings.Builder
		b.WriteString("groups:\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "  - {streamPrefix: %s, consumerGroup: %s}\n", prefix, g)
		}
		return writeFile(t, dir, name, b.String())
	}
	code, out, errOut := c.run("", "create-groups", "-f", file("three.yaml", "a", "b", "c"))
	if code != exitOK || !strings.Contains(out, "3 created") || !strings.Contains(errOut, "rate limited") || !strings.Contains(errOut, "waiting") {
		t.Errorf("create-groups past the limit: exit %d\n%s%s", code, out, errOut)
	}
	out, _ = c.exit(exitUnavailable, "create-groups", "--no-wait", "-f", file("five.yaml", "d", "e", "f", "g", "h"))
	if !strings.Contains(out, notStarted) {
		t.Errorf("create-groups --no-wait:\n%s", out)
	}
}

// TestEveryCommandHasItsHelp: COMMAND --help and help COMMAND print the
// command's usage line and flags (exit 0), and help lists every command.
func TestEveryCommandHasItsHelp(t *testing.T) {
	c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": filepath.Join(t.TempDir(), "config.json")}}
	global := c.ok("help")
	for name := range commands {
		help := c.ok(append(strings.Fields(name), "--help")...)
		if !strings.HasPrefix(help, "Usage: coordctl "+name+" ") || !strings.Contains(help, "Flags of every command") {
			t.Errorf("coordctl %s --help:\n%s", name, help)
		}
		if again := c.ok(append([]string{"help"}, strings.Fields(name)...)...); again != help {
			t.Errorf("coordctl help %s differs from --help:\n%s", name, again)
		}
		if !strings.Contains(global, "  "+name+" ") {
			t.Errorf("coordctl help does not list %s:\n%s", name, global)
		}
	}
	for _, name := range []string{"scale", "scale-stream"} {
		if help := c.ok(name, "--help"); !strings.Contains(help, "ProducerConfig.Group") || !strings.Contains(help, "--shards count") {
			t.Errorf("coordctl %s --help does not say which shard count producers follow:\n%s", name, help)
		}
	}
	if help := c.ok("create-groups", "--help"); !strings.Contains(help, "33 minutes") || !strings.Contains(help, "COORDINATOR_API_RATE_LIMIT_MAX_GROUP_CREATES") {
		t.Errorf("create-groups --help does not say the rate limit and how to raise it:\n%s", help)
	}
	c.exit(exitUsage, "frobnicate")
	if _, errOut := c.exit(exitUsage, "groups"); !strings.Contains(errOut, "create, delete, describe, list") {
		t.Errorf("groups alone: %q", errOut)
	}
}

// TestArgumentlessCommandsRefuseArguments: commands that take no
// positional argument refuse one with a usage error naming the command,
// before any login is needed.
func TestArgumentlessCommandsRefuseArguments(t *testing.T) {
	c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": filepath.Join(t.TempDir(), "config.json")}}
	for _, args := range [][]string{{"groups", "list", "extra"}, {"cluster", "extra"}, {"create-groups", "-f", "x", "extra"}} {
		_, errOut := c.exit(exitUsage, args...)
		if name := strings.Join(args[:len(args)-1], " "); !strings.Contains(errOut, strings.Fields(name)[0]) || !strings.Contains(errOut, "want no argument") {
			t.Errorf("coordctl %s: %q, want a usage error naming the command", strings.Join(args, " "), errOut)
		}
	}
}

// lineWith returns the first line of s that contains sub.
func lineWith(s, sub string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}

// A handover's row names no shard and the two coordinators; a shard's
// row its shard and members, "-" for nobody.
func TestHistoryRow(t *testing.T) {
	at := contract.Instant(1_700_000_000_000)
	row := func(e contract.HistoryEntry) string { return fmt.Sprint(historyRow(e)...) }
	handover := contract.HistoryEntry{At: at, GroupEpoch: 3, Shard: contract.GroupLevelShard, Cause: contract.MoveHandover, FromCoordinator: "coord-a", ToCoordinator: "coord-b"}
	if got, want := row(handover), fmt.Sprint("2023-11-14T22:13:20Z", 3, "-", "coordinator coord-a", "coordinator coord-b", "handover", "-"); got != want {
		t.Errorf("handover row %q, want %q", got, want)
	}
	join := contract.HistoryEntry{At: at, GroupEpoch: 2, Shard: 1, ToMember: "m-1", Cause: contract.MoveJoin}
	if got, want := row(join), fmt.Sprint("2023-11-14T22:13:20Z", 2, 1, "-", "m-1", "join", "-"); got != want {
		t.Errorf("join row %q, want %q", got, want)
	}
}
