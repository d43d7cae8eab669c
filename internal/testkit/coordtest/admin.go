package coordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Admin calls one coordinator's API, with Authorization when it is set.
type Admin struct {
	c             *Server
	Authorization string
}

// Admin returns an admin client of c without credentials.
func (c *Server) Admin() *Admin { return &Admin{c: c} }

// Do sends method path (under the base path) with body ("" for none, JSON
// otherwise) and returns the answer's status, header and body; a transport
// failure fails the test.
func (a *Admin) Do(method, path, body string) (int, http.Header, string) {
	a.c.t.Helper()
	req, err := http.NewRequestWithContext(a.c.t.Context(), method, a.c.Base+path, strings.NewReader(body))
	if err != nil {
		a.c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Authorization != "" {
		req.Header.Set("Authorization", a.Authorization)
	}
	resp, err := a.c.HTTP.Client().Do(req)
	if err != nil {
		a.c.t.Fatalf("%s %s on %s: %v", method, path, a.c.ID, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// Call sends in JSON-encoded (none when nil) and, when out is non-nil,
// decodes the answer's body into it, an error's (contract.ErrorBody)
// too; it returns the status. A body that does not decode fails the test.
func (a *Admin) Call(method, path string, in, out any) int {
	a.c.t.Helper()
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			a.c.t.Fatal(err)
		}
	}
	st, _, answer := a.Do(method, path, body.String())
	if out != nil && answer != "" {
		if err := json.Unmarshal([]byte(answer), out); err != nil {
			a.c.t.Fatalf("%s %s: decoding answer (%d) %s: %v", method, path, st, answer, err)
		}
	}
	return st
}

// GroupPath is the path of key's group under the base path.
func GroupPath(key group.Key) string { return contract.GroupPath(key.StreamPrefix, key.ConsumerGroup) }

// Create creates key's group with shards shards and returns its view; any
// answer but 201 fails the test.
func (a *Admin) Create(key group.Key, shards int) contract.GroupView {
	a.c.t.Helper()
	var v contract.GroupView
	if st := a.Call(http.MethodPost, GroupPath(key), map[string]any{"initialShardCount": shards, "requestedBy": "coordtest"}, &v); st != http.StatusCreated {
		a.c.t.Fatalf("create %s on %s: status %d", key, a.c.ID, st)
	}
	return v
}

// Group reads key's group; any answer but 200 fails the test.
func (a *Admin) Group(key group.Key) contract.GroupView {
	a.c.t.Helper()
	var v contract.GroupView
	if st := a.Call(http.MethodGet, GroupPath(key), nil, &v); st != http.StatusOK {
		a.c.t.Fatalf("get %s on %s: status %d", key, a.c.ID, st)
	}
	return v
}
