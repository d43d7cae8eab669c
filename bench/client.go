package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// API is an HTTP/1.1 keep-alive client of one coordinator, with a bounded
// connection pool (rawTransport).
type API struct {
	// Base is the base URL, http://127.0.0.1:<port> + contract.BasePath; Root is
	// its scheme://host:port.
	Base, Root string
	Client     *http.Client
	// User and Password authenticate Admin API calls (Basic).
	User, Password string
}

// requestTimeout bounds one request, so a stuck server cannot hang a run.
const requestTimeout = 30 * time.Second

// NewAPI returns a client of base holding at most conns connections.
func NewAPI(base string, conns int) (*API, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	return &API{Base: base, Root: u.Scheme + "://" + u.Host, Client: &http.Client{Transport: newRawTransport(u.Host, conns)}, User: "admin", Password: "password"}, nil
}

// Close closes the idle connections.
func (a *API) Close() { a.Client.CloseIdleConnections() }

// groupPath is the path of group key under the base path.
func groupPath(key group.Key) string { return contract.GroupPath(key.StreamPrefix, key.ConsumerGroup) }

// CreateGroup creates key with shards shards (endpoint #4).
func (a *API) CreateGroup(ctx context.Context, key group.Key, shards int) error {
	return a.admin(ctx, http.MethodPost, key, contract.CreateRequest{InitialShardCount: &shards, RequestedBy: "coord-bench"}, http.StatusCreated)
}

// DeleteGroup deletes key with its members (endpoint #6, forced).
func (a *API) DeleteGroup(ctx context.Context, key group.Key) error {
	return a.admin(ctx, http.MethodDelete, key, contract.DeleteRequest{RequestedBy: "coord-bench", Reason: "bench probe", Force: true}, http.StatusOK)
}

// admin sends body to key's group resource with method as the admin user
// and fails unless the answer has status want.
func (a *API) admin(ctx context.Context, method string, key group.Key, body any, want int) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, a.Base+groupPath(key), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(a.User, a.Password)
	res, err := a.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return &adminError{method: method, key: key, status: res.StatusCode, answer: answer}
	}
	return nil
}

// adminError is an Admin API answer other than the one expected.
type adminError struct {
	method string
	key    group.Key
	status int
	answer []byte
}

func (e *adminError) Error() string {
	return fmt.Sprintf("%s group %s: HTTP %d: %s", e.method, e.key, e.status, e.answer)
}

// noop drives the no-op heartbeat route (debug.bench-endpoints) with
// heartbeat-sized bodies: member i of the group sends the body a settled
// member of a group with shardsPerMember shards each would send.
type noop struct {
	api    *API
	urls   []string
	bodies [][]byte
}

func newNoop(api *API, key group.Key, members, shardsPerMember int) *noop {
	n := &noop{api: api, urls: make([]string, members), bodies: make([][]byte, members)}
	for i := range members {
		id := memberID(i)
		n.urls[i] = api.Base + contract.Expand(contract.BenchNoopTemplate, key.StreamPrefix, key.ConsumerGroup, id)
		n.bodies[i], _ = json.Marshal(contract.HeartbeatRequest{
			ProtocolVersion: 1, RequestID: id + "-1", MemberID: id, MemberEpoch: 3, MetadataVersion: 3,
			RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1},
			OwnedShards:             contract.Range(i*shardsPerMember, (i+1)*shardsPerMember),
		})
	}
	return n
}

// fire is a fireFunc.
func (n *noop) fire(ctx context.Context, i int, intended time.Time, rec *Recorder) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.urls[i], bytes.NewReader(n.bodies[i]))
	if err != nil {
		rec.Observe(time.Since(intended), "transport", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := n.api.Client.Do(req)
	if err != nil {
		rec.Observe(time.Since(intended), "transport", err)
		return
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	status := "HTTP " + strconv.Itoa(res.StatusCode)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("no-op heartbeat: %s", status)
	}
	rec.Observe(time.Since(intended), status, err)
}

// memberID is the id of simulated member i.
func memberID(i int) string { return fmt.Sprintf("m-%05d", i) }
