package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

const usage = `coordctl manages the consumer groups of a Redis Stream Coordinator.

Usage:
  coordctl login --server URL --username NAME [--password-stdin]
  coordctl groups list
  coordctl groups describe PREFIX GROUP
  coordctl groups create PREFIX GROUP [--shards N]
  coordctl groups delete PREFIX GROUP [--force]
  coordctl scale PREFIX GROUP --shards N
  coordctl rollback PREFIX GROUP [MIGRATION-ID]          (default: the active migration)
  coordctl reset-offsets PREFIX GROUP --to earliest|latest|ID|TIME [--shards 0,1] [--force]
  coordctl members PREFIX GROUP
  coordctl dead-letters PREFIX GROUP [list] [--limit N] [--all-groups] [--stream NAME]
  coordctl dead-letters PREFIX GROUP redrive|delete ID... [--stream NAME]
  coordctl cluster

Flags of every command:
  -o table|json        output format (default table)
  --server URL         coordinator, e.g. http://127.0.0.1:8080 or http://127.0.0.1:8080/coord/v1
                       (default: the one of login)
  --requested-by NAME  who asks, recorded in the audit trail (default $USER)
  --reason TEXT        why, recorded in the audit trail

--to takes earliest, latest, an entry id (1718000000000-0: continue after it)
or a time (RFC 3339, or Unix milliseconds: deliver entries from then on).
dead-letters lists the entries GROUP dead-lettered and those that name no
group; --all-groups lists those of every group sharing the dead-letter
stream (default PREFIX-dead-letter; --stream names another).
The token of login is kept in $XDG_CONFIG_HOME/coordctl/config.json (0600);
COORDCTL_TOKEN and COORDCTL_SERVER override it, COORDCTL_PASSWORD feeds login.

Exit codes: 0 success, 1 failure, 2 usage, 3 not logged in / 401 / 403,
4 not found, 5 conflict or refused (409, 422), 6 unavailable or throttled (503, 429).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run executes one coordctl command and returns its exit code; errors are
// printed on stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	err := dispatch(ctx, args, stdin, stdout, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "coordctl:", err)
		if exitCode(err) == exitUsage {
			fmt.Fprintln(stderr, "Run coordctl help for the usage.")
		}
		return exitCode(err)
	}
	return exitOK
}

// invocation is one parsed command line.
type invocation struct {
	ctx         context.Context
	out         io.Writer
	env         func(string) string
	args        []string // positional arguments after the command words
	output      string
	server      string
	requestedBy string
	reason      string
	flags       *flag.FlagSet
}

// parse parses the common and the command's flags, anywhere among the
// positional arguments.
func parse(ctx context.Context, out io.Writer, env func(string) string, name string, args []string, define func(*flag.FlagSet)) (*invocation, error) {
	inv := &invocation{ctx: ctx, out: out, env: env}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&inv.output, "o", "table", "")
	fs.StringVar(&inv.output, "output", "table", "")
	fs.StringVar(&inv.server, "server", "", "")
	fs.StringVar(&inv.requestedBy, "requested-by", cmpOr(env("USER"), "coordctl"), "")
	fs.StringVar(&inv.reason, "reason", "", "")
	if define != nil {
		define(fs)
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErrorf("%s: %v", name, err)
		}
		if fs.NArg() == 0 {
			break
		}
		inv.args = append(inv.args, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if inv.output != "table" && inv.output != "json" {
		return nil, usageErrorf("-o %q: want table or json", inv.output)
	}
	inv.flags = fs
	return inv, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stored returns the settings file's path, the settings it holds and the
// server to call: --server, else COORDCTL_SERVER, else the stored one.
func (inv *invocation) stored() (path string, s settings, server string, err error) {
	if path, err = configPath(inv.env); err != nil {
		return "", settings{}, "", err
	}
	if s, err = loadSettings(path); err != nil {
		return "", settings{}, "", err
	}
	return path, s, cmpOr(inv.server, cmpOr(inv.env("COORDCTL_SERVER"), s.Server)), nil
}

// client returns the API client of the stored login, overridden by
// --server, COORDCTL_SERVER and COORDCTL_TOKEN.
func (inv *invocation) client() (*client, error) {
	_, s, server, err := inv.stored()
	if err != nil {
		return nil, err
	}
	token := cmpOr(inv.env("COORDCTL_TOKEN"), s.Token)
	if server == "" || token == "" {
		return nil, &exitError{exitAuth, "not logged in: run coordctl login --server URL --username NAME"}
	}
	return newClient(server, token), nil
}

// groupCommand parses a command on one group (PREFIX GROUP, followed by
// more positional arguments only when extra is set) and returns the
// invocation, its client and the group's names.
func groupCommand(ctx context.Context, out io.Writer, env func(string) string, name string, args []string, extra bool,
	define func(*flag.FlagSet)) (inv *invocation, c *client, prefix, grp string, err error) {
	if inv, err = parse(ctx, out, env, name, args, define); err != nil {
		return nil, nil, "", "", err
	}
	if len(inv.args) < 2 || !extra && len(inv.args) > 2 {
		return nil, nil, "", "", usageErrorf("%s: want PREFIX GROUP", name)
	}
	if c, err = inv.client(); err != nil {
		return nil, nil, "", "", err
	}
	return inv, c, inv.args[0], inv.args[1], nil
}

// noArgCommand parses a command that takes no positional argument and
// returns the invocation and its client.
func noArgCommand(ctx context.Context, out io.Writer, env func(string) string, name string, args []string) (*invocation, *client, error) {
	inv, err := parse(ctx, out, env, name, args, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(inv.args) != 0 {
		return nil, nil, usageErrorf("%s: want no argument, got %d", name, len(inv.args))
	}
	c, err := inv.client()
	if err != nil {
		return nil, nil, err
	}
	return inv, c, nil
}

// print writes v as indented JSON (-o json) or through table.
func (inv *invocation) print(v any, table func(*tableWriter)) error {
	if inv.output == "json" {
		enc := json.NewEncoder(inv.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := newTable(inv.out)
	table(tw)
	return tw.flush()
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, out io.Writer, env func(string) string) error {
	if len(args) == 0 {
		return usageErrorf("no command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		return flag.ErrHelp
	case "login":
		return login(ctx, rest, stdin, out, env)
	case "groups":
		if len(rest) == 0 {
			return usageErrorf("groups: want list, describe, create or delete")
		}
		switch rest[0] {
		case "list":
			return groupsList(ctx, rest[1:], out, env)
		case "describe":
			return groupsDescribe(ctx, rest[1:], out, env)
		case "create":
			return groupsCreate(ctx, rest[1:], out, env)
		case "delete":
			return groupsDelete(ctx, rest[1:], out, env)
		}
		return usageErrorf("groups %s: want list, describe, create or delete", rest[0])
	case "scale":
		return scale(ctx, rest, out, env)
	case "rollback":
		return rollback(ctx, rest, out, env)
	case "reset-offsets":
		return resetOffsets(ctx, rest, out, env)
	case "members":
		return members(ctx, rest, out, env)
	case "dead-letters":
		return deadLetters(ctx, rest, out, env)
	case "cluster":
		return cluster(ctx, rest, out, env)
	}
	return usageErrorf("unknown command %q", cmd)
}

// login exchanges a user name and password for a token and stores both with
// the server.
func login(ctx context.Context, args []string, stdin io.Reader, out io.Writer, env func(string) string) error {
	var username, password string
	var fromStdin bool
	inv, err := parse(ctx, out, env, "login", args, func(fs *flag.FlagSet) {
		fs.StringVar(&username, "username", "", "")
		fs.StringVar(&password, "password", "", "")
		fs.BoolVar(&fromStdin, "password-stdin", false, "")
	})
	if err != nil {
		return err
	}
	path, stored, server, err := inv.stored()
	if err != nil {
		return err
	}
	username = cmpOr(username, stored.Username)
	if server == "" || username == "" {
		return usageErrorf("login: --server and --username are required")
	}
	if password == "" && !fromStdin {
		password = env("COORDCTL_PASSWORD")
	}
	if password == "" {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		password = strings.TrimRight(line, "\r\n")
	}
	if password == "" {
		return usageErrorf("login: no password (--password-stdin, COORDCTL_PASSWORD or --password)")
	}
	var answer struct {
		AccessToken string    `json:"accessToken"`
		ExpiresAt   time.Time `json:"expiresAt"`
		Roles       []string  `json:"roles"`
	}
	c := newClient(server, "")
	if err := c.do(ctx, http.MethodPost, pathOf("auth", "login"), nil, map[string]string{"username": username, "password": password}, &answer); err != nil {
		if ae, ok := errors.AsType[*apiError](err); ok && ae.Status == http.StatusUnauthorized {
			return fmt.Errorf("login refused at %s as user %q: check the user name and password: %w", c.server+pathOf("auth", "login"), username, err)
		}
		return err
	}
	if err := saveSettings(path, settings{Server: c.server, Username: username, Token: answer.AccessToken}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Logged in to %s as %s (%s) until %s; token kept in %s\n", c.server, username,
		strings.Join(answer.Roles, ", "), answer.ExpiresAt.Format(time.RFC3339), path)
	return nil
}

func groupsList(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	inv, c, err := noArgCommand(ctx, out, env, "groups list", args)
	if err != nil {
		return err
	}
	var answer struct {
		Groups []group.GroupView `json:"groups"`
	}
	if err := c.do(ctx, http.MethodGet, pathOf("monitoring", "groups"), nil, nil, &answer); err != nil {
		return err
	}
	return inv.print(answer, func(t *tableWriter) {
		t.row("PREFIX", "GROUP", "STATE", "SHARDS", "MEMBERS", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "MIGRATION")
		for _, g := range answer.Groups {
			t.row(g.StreamPrefix, g.ConsumerGroup, g.State, g.ShardCount, len(g.CurrentAssignmentSummary), g.GroupEpoch, g.AssignmentEpoch, migrationText(g.ActiveMigration))
		}
	})
}

func migrationText(m *group.Migration) string {
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("%s %d→%d %s", m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
}

// description is the answer of groups describe: the group, and its shards'
// offsets when Redis answers (nil otherwise).
type description struct {
	Group   group.GroupView     `json:"group"`
	Offsets *monitoring.Offsets `json:"offsets"`
}

func groupsDescribe(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	inv, c, p, g, err := groupCommand(ctx, out, env, "groups describe", args, false, nil)
	if err != nil {
		return err
	}
	var d description
	if err := c.do(ctx, http.MethodGet, pathOf("streams", p, "groups", g), nil, nil, &d.Group); err != nil {
		return err
	}
	var o monitoring.Offsets
	if err := c.do(ctx, http.MethodGet, pathOf("monitoring", "streams", p, "groups", g, "offsets"), nil, nil, &o); err == nil {
		d.Offsets = &o
	} else if exitCode(err) != exitUnavailable {
		return err
	}
	return inv.print(d, func(t *tableWriter) {
		v := d.Group
		t.row("Group:", v.StreamPrefix+"/"+v.ConsumerGroup)
		t.row("State:", v.State)
		t.row("Shards:", v.ShardCount)
		t.row("Epochs:", fmt.Sprintf("group %d, assignment %d, metadata version %d", v.GroupEpoch, v.AssignmentEpoch, v.MetadataVersion))
		t.row("Migration:", migrationText(v.ActiveMigration))
		t.row("")
		if d.Offsets == nil {
			t.row("(shard offsets unavailable: the coordinator has no Redis)")
			return
		}
		t.row("SHARD", "STREAM-KEY", "LENGTH", "LAG", "PENDING", "LAST-DELIVERED", "OWNERS")
		for _, s := range d.Offsets.Shards {
			t.row(s.Shard.ShardIndex, s.StreamKey, s.StreamLength, optional(s.Lag), s.PendingCount, optional(s.GroupLastDeliveredID), strings.Join(s.OwnerMemberIDs, ","))
		}
		t.row("TOTAL", "", d.Offsets.TotalStreamLength, optional(d.Offsets.TotalLag), d.Offsets.TotalPendingCount, "", "")
	})
}

// optional renders a nullable value, "-" for null.
func optional[T any](v *T) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func groupsCreate(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	var shards int
	inv, c, p, g, err := groupCommand(ctx, out, env, "groups create", args, false, func(fs *flag.FlagSet) {
		fs.IntVar(&shards, "shards", 0, "")
	})
	if err != nil {
		return err
	}
	body := map[string]any{"requestedBy": inv.requestedBy, "reason": inv.reason}
	if shards > 0 {
		body["initialShardCount"] = shards
	}
	var v group.GroupView
	if err := c.do(ctx, http.MethodPost, pathOf("streams", p, "groups", g), nil, body, &v); err != nil {
		return err
	}
	return inv.print(v, func(t *tableWriter) {
		t.row(fmt.Sprintf("group %s/%s created with %d shards", v.StreamPrefix, v.ConsumerGroup, v.ShardCount))
	})
}

func groupsDelete(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	var force bool
	inv, c, p, g, err := groupCommand(ctx, out, env, "groups delete", args, false, func(fs *flag.FlagSet) {
		fs.BoolVar(&force, "force", false, "")
	})
	if err != nil {
		return err
	}
	var v group.GroupView
	body := map[string]any{"requestedBy": inv.requestedBy, "reason": cmpOr(inv.reason, "coordctl groups delete"), "force": force}
	if err := c.do(ctx, http.MethodDelete, pathOf("streams", p, "groups", g), nil, body, &v); err != nil {
		return err
	}
	return inv.print(v, func(t *tableWriter) {
		t.row(fmt.Sprintf("group %s/%s deleted", v.StreamPrefix, v.ConsumerGroup))
	})
}

func scale(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	shards := -1
	inv, c, p, g, err := groupCommand(ctx, out, env, "scale", args, false, func(fs *flag.FlagSet) {
		fs.IntVar(&shards, "shards", -1, "")
	})
	if err != nil {
		return err
	}
	if shards < 0 {
		return usageErrorf("scale: --shards N is required")
	}
	var m group.Migration
	body := map[string]any{"targetShardCount": shards, "requestedBy": inv.requestedBy, "reason": cmpOr(inv.reason, "coordctl scale")}
	if err := c.do(ctx, http.MethodPost, pathOf("streams", p, "groups", g, "scale"), nil, body, &m); err != nil {
		return err
	}
	return inv.print(m, func(t *tableWriter) {
		t.row("MIGRATION", "FROM", "TO", "STATE")
		t.row(m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
	})
}

func rollback(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	inv, c, p, g, err := groupCommand(ctx, out, env, "rollback", args, true, nil)
	if err != nil {
		return err
	}
	if len(inv.args) > 3 {
		return usageErrorf("rollback: want PREFIX GROUP [MIGRATION-ID]")
	}
	var id string
	if len(inv.args) == 3 {
		id = inv.args[2]
	} else {
		var v group.GroupView
		if err := c.do(ctx, http.MethodGet, pathOf("streams", p, "groups", g), nil, nil, &v); err != nil {
			return err
		}
		if v.ActiveMigration == nil {
			return &exitError{exitConflict, fmt.Sprintf("group %s/%s has no active migration", p, g)}
		}
		id = v.ActiveMigration.ReshardingID
	}
	var m group.Migration
	body := map[string]any{"requestedBy": inv.requestedBy, "reason": cmpOr(inv.reason, "coordctl rollback")}
	if err := c.do(ctx, http.MethodPost, pathOf("streams", p, "groups", g, "migrations", id, "rollback"), nil, body, &m); err != nil {
		return err
	}
	return inv.print(m, func(t *tableWriter) {
		t.row("MIGRATION", "FROM", "TO", "STATE")
		t.row(m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
	})
}

// resetTarget turns --to into the reset body's fields.
func resetTarget(to string) (map[string]any, error) {
	switch strings.ToLower(to) {
	case "earliest":
		return map[string]any{"to": "EARLIEST"}, nil
	case "latest":
		return map[string]any{"to": "LATEST"}, nil
	case "":
		return nil, usageErrorf("reset-offsets: --to is required")
	}
	if strings.Contains(to, "-") && !strings.Contains(to, "T") {
		return map[string]any{"to": "ID", "entryId": to}, nil
	}
	if ms, err := strconv.ParseInt(to, 10, 64); err == nil {
		return map[string]any{"to": "TIMESTAMP", "timestampMs": ms}, nil
	}
	if at, err := time.Parse(time.RFC3339, to); err == nil {
		return map[string]any{"to": "TIMESTAMP", "timestampMs": at.UnixMilli()}, nil
	}
	return nil, usageErrorf("reset-offsets: --to %q: want earliest, latest, an entry id, Unix milliseconds or an RFC 3339 time", to)
}

// shardList parses "0,1,3".
func shardList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || i < 0 {
			return nil, usageErrorf("--shards %q: want shard indexes such as 0,1,3", s)
		}
		out = append(out, i)
	}
	return out, nil
}

func resetOffsets(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	var to, shardFlag string
	var force bool
	inv, c, p, g, err := groupCommand(ctx, out, env, "reset-offsets", args, false, func(fs *flag.FlagSet) {
		fs.StringVar(&to, "to", "", "")
		fs.StringVar(&shardFlag, "shards", "", "")
		fs.BoolVar(&force, "force", false, "")
	})
	if err != nil {
		return err
	}
	body, err := resetTarget(to)
	if err != nil {
		return err
	}
	shards, err := shardList(shardFlag)
	if err != nil {
		return err
	}
	body["shards"], body["force"], body["requestedBy"], body["reason"] = shards, force, inv.requestedBy, inv.reason
	var answer struct {
		StreamPrefix  string `json:"streamPrefix"`
		ConsumerGroup string `json:"consumerGroup"`
		To            string `json:"to"`
		Forced        bool   `json:"forced"`
		Shards        []struct {
			ShardIndex int                   `json:"shardIndex"`
			StreamKey  string                `json:"streamKey"`
			HeldBy     []string              `json:"heldBy"`
			Before     streams.GroupPosition `json:"before"`
			After      streams.GroupPosition `json:"after"`
		} `json:"shards"`
	}
	if err := c.do(ctx, http.MethodPost, pathOf("streams", p, "groups", g, "offsets", "reset"), nil, body, &answer); err != nil {
		return err
	}
	return inv.print(answer, func(t *tableWriter) {
		t.row("SHARD", "STREAM-KEY", "BEFORE", "LAG-BEFORE", "AFTER", "LAG-AFTER", "PENDING", "HELD-BY")
		for _, s := range answer.Shards {
			t.row(s.ShardIndex, s.StreamKey, optional(s.Before.LastDeliveredID), optional(s.Before.Lag),
				optional(s.After.LastDeliveredID), optional(s.After.Lag), optional(s.After.Pending), cmpOr(strings.Join(s.HeldBy, ","), "-"))
		}
	})
}

func members(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	inv, c, p, g, err := groupCommand(ctx, out, env, "members", args, false, nil)
	if err != nil {
		return err
	}
	var answer struct {
		Members []group.Member `json:"members"`
	}
	if err := c.do(ctx, http.MethodGet, pathOf("monitoring", "streams", p, "groups", g, "members"), nil, nil, &answer); err != nil {
		return err
	}
	return inv.print(answer, func(t *tableWriter) {
		t.row("MEMBER", "STATE", "EPOCH", "CURRENT", "REVOKING", "WORKERS", "LAST-HEARTBEAT", "LEASE-UNTIL")
		for _, m := range answer.Members {
			t.row(m.MemberID, m.State, m.MemberEpoch, shardText(m.CurrentAssignment), shardText(m.Revoking),
				fmt.Sprintf("%d/%d", m.ActiveConsumerWorkers, m.RuntimeMaxConcurrency), instantText(m.LastHeartbeatAt), instantText(m.MemberLeaseExpiresAt))
		}
	})
}

func shardText(s group.ShardSet) string {
	if len(s) == 0 {
		return "-"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func instantText(at group.Instant) string {
	if at == 0 {
		return "-"
	}
	return time.UnixMilli(int64(at)).UTC().Format(time.RFC3339)
}

func deadLetters(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	var limit int
	var stream string
	var allGroups bool
	inv, c, p, g, err := groupCommand(ctx, out, env, "dead-letters", args, true, func(fs *flag.FlagSet) {
		fs.IntVar(&limit, "limit", 100, "")
		fs.StringVar(&stream, "stream", "", "")
		fs.BoolVar(&allGroups, "all-groups", false, "")
	})
	if err != nil {
		return err
	}
	action := "list"
	if len(inv.args) > 2 {
		action = inv.args[2]
	}
	ids := inv.args[min(3, len(inv.args)):]
	switch action {
	case "list":
		if len(ids) > 0 {
			return usageErrorf("dead-letters list takes no ids")
		}
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if stream != "" {
			q.Set("stream", stream)
		}
		if allGroups {
			q.Set("allGroups", "true")
		}
		var page streams.DeadLetterPage
		if err := c.do(ctx, http.MethodGet, pathOf("monitoring", "streams", p, "groups", g, "dead-letters"), q, nil, &page); err != nil {
			return err
		}
		return inv.print(page, func(t *tableWriter) {
			t.row("ID", "GROUP", "SHARD", "SOURCE-ID", "DELIVERIES", "ERROR", "FIELDS")
			for _, d := range page.Entries {
				fields, _ := json.Marshal(d.Fields)
				t.row(d.ID, cmpOr(d.Group, "-"), optional(d.SourceShard), d.SourceID, d.Deliveries, cmpOr(d.Error, "-"), string(fields))
			}
		})
	case "redrive", "delete":
		if allGroups {
			return usageErrorf("dead-letters %s: --all-groups only lists (a group acts on its own entries)", action)
		}
		if len(ids) == 0 {
			return usageErrorf("dead-letters %s: want at least one id", action)
		}
		var answer struct {
			Stream  string `json:"stream"`
			Results []struct {
				ID        string `json:"id"`
				Status    string `json:"status"`
				Stream    string `json:"stream"`
				NewID     string `json:"newId"`
				ErrorCode string `json:"errorCode"`
				Message   string `json:"message"`
			} `json:"results"`
		}
		body := map[string]any{"ids": ids, "requestedBy": inv.requestedBy, "reason": inv.reason, "stream": stream}
		if err := c.do(ctx, http.MethodPost, pathOf("streams", p, "groups", g, "dead-letters", action), nil, body, &answer); err != nil {
			return err
		}
		failed := 0
		err := inv.print(answer, func(t *tableWriter) {
			t.row("ID", "STATUS", "TO", "NEW-ID", "ERROR")
			for _, r := range answer.Results {
				t.row(r.ID, r.Status, cmpOr(r.Stream, "-"), cmpOr(r.NewID, "-"), cmpOr(strings.TrimSpace(r.ErrorCode+" "+r.Message), "-"))
			}
		})
		for _, r := range answer.Results {
			if r.Status == "FAILED" {
				failed++
			}
		}
		if err == nil && failed > 0 {
			err = &exitError{exitFailure, fmt.Sprintf("%d of %d dead letters failed", failed, len(answer.Results))}
		}
		return err
	}
	return usageErrorf("dead-letters %s: want list, redrive or delete", action)
}

// cluster shows GET /coord/v1/cluster; a coordinator without it (404) is
// reported as a single coordinator, not as an error.
func cluster(ctx context.Context, args []string, out io.Writer, env func(string) string) error {
	inv, c, err := noArgCommand(ctx, out, env, "cluster", args)
	if err != nil {
		return err
	}
	var answer json.RawMessage
	err = c.do(ctx, http.MethodGet, pathOf("cluster"), nil, nil, &answer)
	if ae, ok := errors.AsType[*apiError](err); ok && ae.Status == http.StatusNotFound {
		return inv.print(map[string]any{"cluster": nil, "message": "this coordinator serves no cluster view (GET /coord/v1/cluster: 404); it runs alone or predates clustering"},
			func(t *tableWriter) {
				t.row("This coordinator serves no cluster view (GET /coord/v1/cluster: 404): it runs alone or predates clustering.")
			})
	}
	if err != nil {
		return err
	}
	return inv.print(answer, func(t *tableWriter) { clusterTable(t, answer) })
}

// clusterTable renders the cluster answer: one row per coordinator when it
// lists them under "coordinators", else the JSON itself.
func clusterTable(t *tableWriter, raw json.RawMessage) {
	var view struct {
		Coordinators []map[string]any `json:"coordinators"`
	}
	if json.Unmarshal(raw, &view) != nil || len(view.Coordinators) == 0 {
		t.row(string(raw))
		return
	}
	t.row("ID", "URL", "GROUPS", "STATE")
	for _, c := range view.Coordinators {
		t.row(field(c, "id"), field(c, "url", "advertiseUrl", "baseUrl"), field(c, "groups", "groupCount"), field(c, "state", "status"))
	}
}

// field returns the first of names present in m, as text ("-" if none).
func field(m map[string]any, names ...string) string {
	for _, n := range names {
		if v, ok := m[n]; ok && v != nil {
			if list, ok := v.([]any); ok {
				return strconv.Itoa(len(list))
			}
			return fmt.Sprint(v)
		}
	}
	return "-"
}
