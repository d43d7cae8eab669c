package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// The admin and monitoring calls of the API (docs/protocol.md §2), as an
// operator's tool makes them (cmd/coordctl). Each returns the coordinator's
// answer decoded, or an *APIError.

// Login exchanges username and password for a Bearer token. It sends no
// other credentials, whatever the Coordinator was configured with.
func (c *Coordinator) Login(ctx context.Context, username, password string) (contract.Login, error) {
	var out contract.Login
	anonymous := &Coordinator{base: c.base, hc: c.hc}
	err := anonymous.do(ctx, http.MethodPost, contract.LoginTemplate, contract.LoginRequest{Username: username, Password: password}, &out)
	return out, err
}

// Groups lists every group (GET /monitoring/groups).
func (c *Coordinator) Groups(ctx context.Context) ([]contract.GroupView, error) {
	var out contract.GroupList
	err := c.do(ctx, http.MethodGet, contract.MonitoringGroups, nil, &out)
	return out.Groups, err
}

// CreateGroupWith creates group g of stream prefix p with the request's
// shard count, operator and reason (endpoint #4).
func (c *Coordinator) CreateGroupWith(ctx context.Context, p, g string, req contract.CreateRequest) (contract.GroupView, error) {
	var out contract.GroupView
	err := c.do(ctx, http.MethodPost, contract.GroupPath(p, g), req, &out)
	return out, err
}

// DeleteGroup deletes group g's metadata (endpoint #6; its streams stay) and
// returns the group as it was.
func (c *Coordinator) DeleteGroup(ctx context.Context, p, g string, req contract.DeleteRequest) (contract.GroupView, error) {
	var out contract.GroupView
	err := c.do(ctx, http.MethodDelete, contract.GroupPath(p, g), req, &out)
	return out, err
}

// ScaleGroup starts a migration of group g alone to req.TargetShardCount
// (endpoint #8). Producers route by the shard count of the stream, so a
// group scaled alone may read shards no producer writes: see ScaleStream.
func (c *Coordinator) ScaleGroup(ctx context.Context, p, g string, req contract.ScaleRequest) (contract.Migration, error) {
	var out contract.Migration
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupScale, p, g), req, &out)
	return out, err
}

// ScaleStreamWith starts a migration of every group of stream prefix p to
// req.TargetShardCount (endpoint #3). The answer lists the migration of
// each group of the prefix, in the order of AffectedConsumerGroups.
func (c *Coordinator) ScaleStreamWith(ctx context.Context, p string, req contract.ScaleRequest) (contract.StreamScaleView, error) {
	var out contract.StreamScaleView
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.StreamScale, p), req, &out)
	return out, err
}

// Rollback rolls back migration id of group g (endpoint #10).
func (c *Coordinator) Rollback(ctx context.Context, p, g, id string, req contract.RollbackRequest) (contract.Migration, error) {
	var out contract.Migration
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupRollback, p, g, id), req, &out)
	return out, err
}

// Members lists group g's member records, every state, sorted by id.
func (c *Coordinator) Members(ctx context.Context, p, g string) ([]contract.Member, error) {
	var out contract.MemberList
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.MonitoringMembers, p, g), nil, &out)
	return out.Members, err
}

// Offsets reads group g's shards on Redis (GET …/offsets). A coordinator
// without Redis answers CodeRedisNotConfigured.
func (c *Coordinator) Offsets(ctx context.Context, p, g string) (contract.Offsets, error) {
	var out contract.Offsets
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.MonitoringOffsets, p, g), nil, &out)
	return out, err
}

// ResetOffsets moves group g's position on its shards at once (XGROUP
// SETID; it sets Force: the racing variant, LiveReset is the live one).
// req.To is one of contract's ResetTo… names (contract.ResetToEarliest, …). A
// coordinator without Redis answers CodeRedisNotConfigured.
func (c *Coordinator) ResetOffsets(ctx context.Context, p, g string, req contract.OffsetReset) (contract.OffsetResetResult, error) {
	req.Force, req.DryRun = true, false
	var out contract.OffsetResetResult
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupOffsetsReset, p, g), req, &out)
	return out, err
}

// DeadLetterQuery selects a page of dead letters: at most Limit (0: the
// server's default) from Stream (blank or P-dead-letter: the server reads
// no other stream), those of the group and those that name none, or every
// group's with AllGroups.
type DeadLetterQuery struct {
	Limit     int
	Stream    string
	AllGroups bool
	Cursor    string
}

// DeadLetters reads one page of group g's dead letters, newest first.
func (c *Coordinator) DeadLetters(ctx context.Context, p, g string, q DeadLetterQuery) (contract.DeadLetterPage, error) {
	v := url.Values{}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Stream != "" {
		v.Set("stream", q.Stream)
	}
	if q.AllGroups {
		v.Set("allGroups", "true")
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	path := contract.Expand(contract.MonitoringDeadLetter, p, g)
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out contract.DeadLetterPage
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// RedriveDeadLetters appends group g's dead letters with the given ids to
// the shards they came from and removes them from the dead-letter stream.
func (c *Coordinator) RedriveDeadLetters(ctx context.Context, p, g string, req contract.DeadLetterAction) (contract.DeadLetterResults, error) {
	return c.deadLetterAction(ctx, contract.Expand(contract.GroupRedrive, p, g), req)
}

// DeleteDeadLetters removes group g's dead letters with the given ids.
func (c *Coordinator) DeleteDeadLetters(ctx context.Context, p, g string, req contract.DeadLetterAction) (contract.DeadLetterResults, error) {
	return c.deadLetterAction(ctx, contract.Expand(contract.GroupDeleteDead, p, g), req)
}

func (c *Coordinator) deadLetterAction(ctx context.Context, path string, req contract.DeadLetterAction) (contract.DeadLetterResults, error) {
	var out contract.DeadLetterResults
	err := c.do(ctx, http.MethodPost, path, req, &out)
	return out, err
}

// Cluster reads the coordinator cluster (GET /cluster): the live
// coordinators with the number of groups each owns, every group's owner and
// placement, and the recent handovers.
func (c *Coordinator) Cluster(ctx context.Context) (contract.ClusterView, error) {
	var out contract.ClusterView
	err := c.do(ctx, http.MethodGet, contract.ClusterTemplate, nil, &out)
	return out, err
}
