package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Coordinator is a connection to a coordinator's HTTP API: its base URL,
// the HTTP client and the credentials. Members, consumers and producers of
// one process may share one. It is safe for concurrent use.
type Coordinator struct {
	base string
	hc   *http.Client
	auth *authState
}

// CoordinatorOption configures a Coordinator.
type CoordinatorOption func(*Coordinator)

// WithHTTPClient sets the HTTP client (default: one with a 10 s timeout).
func WithHTTPClient(hc *http.Client) CoordinatorOption {
	return func(c *Coordinator) { c.hc = hc }
}

// WithBasicAuth sends username and password as HTTP Basic credentials on
// every request.
func WithBasicAuth(username, password string) CoordinatorOption {
	return func(c *Coordinator) { c.auth = &authState{mode: authBasic, user: username, pass: password} }
}

// WithBearerLogin logs in with username and password (POST /auth/login)
// and sends the Bearer token it answers. The token is renewed before it
// expires (once 80 % of its lifetime has passed) and after a 401 answer to
// a request that carried it (the token was revoked, e.g. by a new token
// secret): the request is then sent once more with a new token. A login
// the coordinator refuses is a *LoginError and is not retried at once; a
// Member retries its heartbeat with backoff, so a member whose password
// was wrong or throttled joins once the coordinator accepts it. This is
// how a member authenticates when api.authenticate-member-api is on: a
// user with the MEMBER role (docs/client.md, "How a member gets a
// credential").
func WithBearerLogin(username, password string) CoordinatorOption {
	return func(c *Coordinator) { c.auth = &authState{mode: authBearer, user: username, pass: password} }
}

// WithBearerToken sends a fixed Bearer token (no login, no renewal), e.g.
// one issued to the member's user by POST /auth/login and handed to the
// process from a secret store. Once the coordinator refuses it (expired,
// revoked) every request is answered 401: a Member's heartbeats fail, its
// local lease lapses and it stops reading every shard until a process
// with a valid token takes over.
func WithBearerToken(token string) CoordinatorOption {
	return func(c *Coordinator) { c.auth = &authState{mode: authToken, token: token} }
}

// NewCoordinator returns a connection to the coordinator API at baseURL,
// which includes the base path, e.g. "http://127.0.0.1:8080" +
// contract.BasePath.
func NewCoordinator(baseURL string, opts ...CoordinatorOption) *Coordinator {
	c := &Coordinator{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{Timeout: 10 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL is the API's base URL.
func (c *Coordinator) BaseURL() string { return c.base }

// APIError is an answer other than 2xx. ErrorCode and Message come from the
// coordinator's JSON error body when it has one.
type APIError struct {
	StatusCode int
	ErrorCode  ErrorCode
	Message    string
	// RetryAfter is the answer's Retry-After in delay-seconds (0 when it
	// has none), e.g. when a 429 RATE_LIMIT_EXCEEDED window ends.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.ErrorCode != "" {
		return fmt.Sprintf("coordinator answered %d %s: %s", e.StatusCode, e.ErrorCode, e.Message)
	}
	return fmt.Sprintf("coordinator answered %d", e.StatusCode)
}

// IsErrorCode reports whether err is an *APIError with the given errorCode
// (e.g. CodeGroupAlreadyExists).
func IsErrorCode(err error, code ErrorCode) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.ErrorCode == code
}

// CreateGroup creates consumer group g of stream prefix p with shards
// shards (0: the coordinator's default), endpoint #4. requestedBy names the
// operator in the audit trail.
func (c *Coordinator) CreateGroup(ctx context.Context, p, g string, shards int, requestedBy string) (contract.GroupView, error) {
	reason := "created by the Go client"
	body := contract.CreateRequest{RequestedBy: requestedBy, Reason: &reason}
	if shards > 0 {
		body.InitialShardCount = &shards
	}
	return c.CreateGroupWith(ctx, p, g, body)
}

// Group reads the coordinator's view of group g of stream prefix p.
func (c *Coordinator) Group(ctx context.Context, p, g string) (contract.GroupView, error) {
	var out contract.GroupView
	err := c.do(ctx, http.MethodGet, contract.GroupPath(p, g), nil, &out)
	return out, err
}

// ScaleStream changes the shard count of every group of stream prefix p to
// target (POST /streams/{P}/scale).
func (c *Coordinator) ScaleStream(ctx context.Context, p string, target int, requestedBy string) error {
	reason := "scaled by the Go client"
	_, err := c.ScaleStreamWith(ctx, p, contract.ScaleRequest{TargetShardCount: &target, RequestedBy: requestedBy, Reason: &reason})
	return err
}

// ProducerRouting reads the producer routing metadata of group g of
// stream prefix p and checks that it names p, g and exactly the shards
// 0…shardCount−1.
func (c *Coordinator) ProducerRouting(ctx context.Context, p, g string) (contract.RoutingView, error) {
	var r contract.RoutingView
	if err := c.do(ctx, http.MethodGet, contract.Expand(contract.GroupRouting, p, g), nil, &r); err != nil {
		return r, err
	}
	if r.StreamPrefix != p || r.ConsumerGroup != g {
		return r, fmt.Errorf("producer routing for %s/%s answered %s/%s", p, g, r.StreamPrefix, r.ConsumerGroup)
	}
	if len(r.Shards) != r.ShardCount {
		return r, fmt.Errorf("producer routing: %d shards listed, shardCount %d", len(r.Shards), r.ShardCount)
	}
	for i, s := range r.Shards {
		if s.ShardIndex != i {
			return r, fmt.Errorf("producer routing: shard %d at position %d", s.ShardIndex, i)
		}
	}
	return r, nil
}

// OwnerHeader is the answer header that names the coordinator owning the
// group (scheme://host:port); a member sends its next heartbeats there,
// unless that would leave https for http.
const OwnerHeader = contract.OwnerHeader

// heartbeat posts req to the API at base (the configured one when empty)
// through the member protocol's Transport and returns the answer and the
// owner the answer names ("" when none). A 401 with Bearer login drops
// the token and tries once more.
func (c *Coordinator) heartbeat(ctx context.Context, base, p, g string, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, string, error) {
	t := Transport{Client: c.hc}
	if c.auth != nil {
		t.Authorize = func(ctx context.Context, r *http.Request) error { return c.auth.authorize(ctx, c, r) }
	}
	for attempt := 0; ; attempt++ {
		out, h, err := t.Heartbeat(ctx, cmp.Or(base, c.base), p, g, req)
		if attempt == 0 && c.unauthorizedBearer(err) {
			c.auth.invalidate()
			continue
		}
		return out, h.Get(OwnerHeader), err
	}
}

// ownerBase returns the API base URL at owner (scheme://host:port) with
// the configured base path, or "" when owner is empty, malformed, the
// configured host itself, or not https while the configured base URL is:
// an https connection is never given up for one that would send the
// credentials and the traffic in clear text.
func (c *Coordinator) ownerBase(owner string) string {
	o, err := url.Parse(owner)
	if owner == "" || err != nil || o.Scheme == "" || o.Host == "" {
		return ""
	}
	b, err := url.Parse(c.base)
	if err != nil || (b.Scheme == o.Scheme && b.Host == o.Host) || (b.Scheme == "https" && o.Scheme != "https") {
		return ""
	}
	return o.Scheme + "://" + o.Host + b.Path
}

// do sends a JSON request to the configured API and decodes a 2xx answer
// into out (if non-nil). A request refused before it ran, with 503
// GROUP_OWNED_ELSEWHERE (the coordinators' views of who owns the group
// differed) or 503 COORDINATOR_NOT_SERVING (the group's coordinator is not
// registered yet, e.g. restarting: docs/cluster.md), is sent again after
// its Retry-After, at most ownerRetries times. Heartbeats do not come
// here: a member has its own retries, bounded by its lease.
func (c *Coordinator) do(ctx context.Context, method, path string, in, out any) error {
	for moved := 0; ; moved++ {
		h, err := c.doAt(ctx, c.base, method, path, in, out)
		if moved == ownerRetries || !refusedBeforeRunning(err) || wait(ctx, retryAfter(h)) != nil {
			return err
		}
	}
}

// doAt is do at the API base URL base; it also returns the answer's
// headers (empty when there was no answer). A 401 with Bearer login drops
// the token and tries once more.
func (c *Coordinator) doAt(ctx context.Context, base, method, path string, in, out any) (http.Header, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return http.Header{}, err
		}
	}
	for attempt := 0; ; attempt++ {
		h, err := c.doOnce(ctx, base, method, path, body, out)
		if attempt == 0 && c.unauthorizedBearer(err) {
			c.auth.invalidate()
			continue
		}
		return h, err
	}
}

// unauthorizedBearer reports a 401 answer to a request that carried the
// token of a client that logs in for one: the token may have expired or
// been revoked (a new token secret, a raised token-version), a new login
// may pass. A refused login is not one: its password would only be tried
// again.
func (c *Coordinator) unauthorizedBearer(err error) bool {
	var ae *APIError
	var le *LoginError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusUnauthorized && !errors.As(err, &le) &&
		c.auth != nil && c.auth.mode == authBearer
}

// LoginError is a failed automatic login (WithBearerLogin): Err is the
// *APIError of the coordinator's answer (401 for a wrong username or
// password, 429 while failed logins are throttled) or the transport's
// error. The request that needed the token was not sent.
type LoginError struct {
	Err error
}

func (e *LoginError) Error() string { return "login: " + e.Err.Error() }

func (e *LoginError) Unwrap() error { return e.Err }

// refusedBeforeRunning reports an answer that says the request did not run
// because its group has no serving owner here for a moment.
func refusedBeforeRunning(err error) bool {
	return IsErrorCode(err, CodeGroupOwnedElsewhere) || IsErrorCode(err, CodeCoordinatorNotServing)
}

// ownerRetries bounds the retries of a request refused before it ran:
// views of the registry agree again within a renewal interval or two, and
// a restarted coordinator serves once its earlier run's registry lease
// (5 s by default) has ended.
const ownerRetries = 10

// retryAfter is the wait a Retry-After header of delay-seconds asks for
// (at most 5 s), 1 s when it is missing or not a number.
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n < 0 {
		return time.Second
	}
	return min(time.Duration(n)*time.Second, 5*time.Second)
}

// wait sleeps for d, or returns ctx's error once ctx ends first.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Coordinator) doOnce(ctx context.Context, base, method, path string, body []byte, out any) (http.Header, error) {
	h := http.Header{}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return h, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != nil {
		if err := c.auth.authorize(ctx, c, req); err != nil {
			return h, err
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return h, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return res.Header, err
	}
	if res.StatusCode/100 != 2 {
		return res.Header, apiError(res, raw)
	}
	if out == nil {
		return res.Header, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return res.Header, fmt.Errorf("decode %s %s answer: %w", method, path, err)
	}
	return res.Header, nil
}

type authMode int

const (
	authBasic authMode = iota
	authBearer
	authToken
)

// authState holds credentials and, for Bearer login, the current token.
type authState struct {
	mode       authMode
	user, pass string

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (a *authState) invalidate() {
	a.mu.Lock()
	a.token = ""
	a.mu.Unlock()
}

func (a *authState) authorize(ctx context.Context, c *Coordinator, req *http.Request) error {
	switch a.mode {
	case authBasic:
		req.SetBasicAuth(a.user, a.pass)
		return nil
	case authToken:
		req.Header.Set("Authorization", "Bearer "+a.token)
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == "" || !time.Now().Before(a.renewAt) {
		if err := a.login(ctx, c); err != nil {
			return err
		}
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	return nil
}

// login posts the credentials to /auth/login and keeps the token, to be
// renewed after 80 % of its lifetime.
func (a *authState) login(ctx context.Context, c *Coordinator) error {
	// #nosec G117 -- the login request is where the password goes, to the configured coordinator only
	body, _ := json.Marshal(contract.LoginRequest{Username: a.user, Password: a.pass})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+contract.LoginTemplate, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.hc.Do(req)
	if err != nil {
		return &LoginError{Err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return &LoginError{Err: err}
	}
	if res.StatusCode != http.StatusOK {
		return &LoginError{Err: apiError(res, raw)}
	}
	// The answer is contract.Login; Token is also read, for a server that
	// names the token so.
	var lr struct {
		contract.Login
		Token string `json:"token"`
	}
	if err := json.Unmarshal(raw, &lr); err != nil {
		return &LoginError{Err: err}
	}
	tok := cmp.Or(lr.AccessToken, lr.Token)
	if tok == "" {
		return &LoginError{Err: errors.New("no token in the answer")}
	}
	life := time.Duration(lr.ExpiresInSeconds) * time.Second
	if life <= 0 {
		life = time.Hour
	}
	a.token, a.renewAt = tok, time.Now().Add(life*8/10)
	return nil
}
