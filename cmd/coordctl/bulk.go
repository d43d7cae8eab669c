package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/client"
)

func init() {
	register(command{
		name: "create-groups", synopsis: "-f FILE [--no-wait]", minArgs: 0, maxArgs: 0,
		summary: "create many groups from a YAML or JSON file, at the rate limit",
		help: `Creates the groups FILE lists, in order. FILE is YAML or JSON in the shape
coordctl groups list -o json prints, so that output copies the groups of
one coordinator to another (fields other than these three are ignored):

  groups:
    - {streamPrefix: orders, consumerGroup: billing, shardCount: 8}
    - {streamPrefix: orders, consumerGroup: shipping, shardCount: 8}

shardCount 0 or absent takes the coordinator's defaults.initial-shard-count.
A group that exists already is reported EXISTS and is not a failure, so a
run that stopped can be started again with the same file.

Group creations are rate limited per user: api.rate-limit.max-group-creates
(default 60) per api.rate-limit.window (default 1m), so 2,000 groups take
33 minutes at the default. On 429 RATE_LIMIT_EXCEEDED, create-groups
waits for the window's end (Retry-After) and goes on; --no-wait stops
there instead (exit 6). To create faster, raise the limit on the
coordinator (COORDINATOR_API_RATE_LIMIT_MAX_GROUP_CREATES=2000, or 0 for
no limit; restart it) for the time of the bulk creation.

Exit code 1 when any group failed (each is listed with its error); an
authentication failure stops at the first group.`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			file := fs.String("f", "", "the `FILE` listing the groups (required)")
			noWait := fs.Bool("no-wait", false, "stop at the rate limit instead of waiting for its window")
			return func(c *call) error { return createGroups(c, *file, *noWait) }
		},
	})
}

// groupSpec is one group of a create-groups file.
type groupSpec struct {
	StreamPrefix  string `yaml:"streamPrefix" json:"streamPrefix"`
	ConsumerGroup string `yaml:"consumerGroup" json:"consumerGroup"`
	ShardCount    int    `yaml:"shardCount" json:"shardCount"`
}

// Outcomes of one group of create-groups.
const (
	created    = "CREATED"
	existed    = "EXISTS"
	failed     = "FAILED"
	notStarted = "NOT_ATTEMPTED"
)

// creation is the outcome of one group of create-groups.
type creation struct {
	groupSpec
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode,omitempty"`
	Message   string `json:"message,omitempty"`
}

// defaultCreatesPerMinute is api.rate-limit.max-group-creates per window
// of the default configuration.
const defaultCreatesPerMinute = 60

// readGroupsFile reads and checks a create-groups file.
func readGroupsFile(path string) ([]groupSpec, error) {
	if path == "" {
		return nil, usageErrorf("create-groups: -f FILE is required")
	}
	raw, err := os.ReadFile(path) // #nosec G304 -- the operator's own file, named on the command line
	if err != nil {
		return nil, err
	}
	var file struct {
		Groups []groupSpec `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		return nil, usageErrorf("create-groups: %s: %v", path, err)
	}
	if len(file.Groups) == 0 {
		return nil, usageErrorf("create-groups: %s lists no groups (want groups: [{streamPrefix, consumerGroup, shardCount}])", path)
	}
	for i, g := range file.Groups {
		if g.StreamPrefix == "" || g.ConsumerGroup == "" || g.ShardCount < 0 {
			return nil, usageErrorf("create-groups: %s: group %d: want streamPrefix, consumerGroup and a shardCount ≥ 0", path, i+1)
		}
	}
	return file.Groups, nil
}

func createGroups(c *call, path string, noWait bool) error {
	specs, err := readGroupsFile(path)
	if err != nil {
		return err
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	if n := len(specs); n > defaultCreatesPerMinute {
		fmt.Fprintf(c.errOut, "coordctl: %d groups: at the default rate limit (%d group creations a minute per user) this takes about %d minutes; see coordctl create-groups --help to raise it\n",
			n, defaultCreatesPerMinute, n/defaultCreatesPerMinute)
	}
	results := make([]creation, len(specs))
	for i := range specs {
		results[i] = creation{groupSpec: specs[i], Status: notStarted}
	}
	stop := c.createAll(coord, results, noWait)
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	err = c.print(map[string]any{"results": results, "created": counts[created], "existing": counts[existed], "failed": counts[failed]}, func(t *tableWriter) {
		t.row("PREFIX", "GROUP", "SHARDS", "RESULT", "ERROR")
		for _, r := range results {
			t.row(r.StreamPrefix, r.ConsumerGroup, r.ShardCount, r.Status, cmpOr(strings.TrimSpace(r.ErrorCode+" "+r.Message), "-"))
		}
		t.row("")
		t.row(fmt.Sprintf("%d created, %d existed, %d failed, %d not attempted", counts[created], counts[existed], counts[failed], counts[notStarted]))
	})
	switch {
	case err != nil:
		return err
	case stop != nil:
		return stop
	case counts[failed] > 0:
		return &exitError{exitFailure, fmt.Sprintf("%d of %d groups failed", counts[failed], len(results))}
	}
	return nil
}

// createAll creates the groups of results in order, filling in each
// outcome; it returns the error that stopped it before the end (the
// context, an authentication failure, or the rate limit with noWait).
func (c *call) createAll(coord *client.Coordinator, results []creation, noWait bool) error {
	done := 0
	for i := 0; i < len(results); {
		r := &results[i]
		_, err := coord.CreateGroupWith(c.ctx, r.StreamPrefix, r.ConsumerGroup, c.createRequest(r.ShardCount))
		ae, _ := errors.AsType[*client.APIError](err)
		switch {
		case err == nil:
			r.Status, done = created, done+1
		case ae != nil && ae.ErrorCode == client.CodeGroupAlreadyExists:
			r.Status = existed
		case ae != nil && ae.StatusCode == http.StatusTooManyRequests:
			if noWait {
				return err
			}
			wait := max(ae.RetryAfter, time.Second)
			fmt.Fprintf(c.errOut, "coordctl: %d of %d groups created; rate limited (%s): waiting %s\n", done, len(results), ae.Message, wait)
			if err := sleep(c, wait); err != nil {
				return err
			}
			continue
		case ae != nil && (ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden):
			return err
		case c.ctx.Err() != nil:
			return c.ctx.Err()
		default:
			r.Status, r.Message = failed, err.Error()
			if ae != nil {
				r.ErrorCode, r.Message = string(ae.ErrorCode), ae.Message
			}
		}
		i++
	}
	return nil
}

// sleep waits d, or until the call's context ends.
func sleep(c *call, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}
