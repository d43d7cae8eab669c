package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
)

// readHistory reads key's assignment history through c with query q,
// failing the test unless it answers 200.
func readHistory(t *testing.T, c *coordtest.Server, key group.Key, q url.Values) contract.HistoryView {
	t.Helper()
	path := contract.Expand(contract.GroupHistory, key.StreamPrefix, key.ConsumerGroup)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var h contract.HistoryView
	if st := c.Admin().Call(http.MethodGet, path, nil, &h); st != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", path, st)
	}
	return h
}

// historyLines renders entries as "shard from>to cause@epoch", from and
// to the coordinators for a group-level entry.
func historyLines(es []contract.HistoryEntry) string {
	var b strings.Builder
	for _, e := range es {
		from, to := e.FromMember, e.ToMember
		if e.Shard == contract.GroupLevelShard {
			from, to = "coordinator "+e.FromCoordinator, e.ToCoordinator
		}
		b.WriteString(strconv.Itoa(e.Shard) + " " + from + ">" + to + " " + string(e.Cause) + "@" + strconv.FormatInt(e.GroupEpoch, 10) + "\n")
	}
	return b.String()
}

// GET …/history answers the group's history as openapi.yaml describes it,
// filtered by shard and since (RFC 3339 or epoch milliseconds), and a bad
// query value with 400 INVALID_REQUEST naming the parameter.
func TestHistoryEndpoint(t *testing.T) {
	c := newCluster(t)
	c.createGroup(4)
	a := c.member("member-a")
	c.converge(4, a)
	c.Clock.Advance(time.Second)
	b := c.member("member-b")
	c.converge(4, a, b)

	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	h := readHistory(t, c.Server, key, nil)
	want := "0 >member-a join@2\n1 >member-a join@2\n2 >member-a join@2\n3 >member-a join@2\n2 member-a>member-b join@3\n3 member-a>member-b join@3\n"
	if got := historyLines(h.Entries); got != want || h.StreamPrefix != "orders" || h.ConsumerGroup != "workers" {
		t.Fatalf("history %s/%s:\n%s\nwant\n%s", h.StreamPrefix, h.ConsumerGroup, got, want)
	}
	joinedB := h.Entries[4].At
	if joinedB.Time().Sub(h.Entries[0].At.Time()) != time.Second {
		t.Fatalf("entries at %v and %v, a second apart on the clock", h.Entries[0].At, joinedB)
	}

	if got := historyLines(readHistory(t, c.Server, key, url.Values{"shard": {"3"}}).Entries); got != "3 >member-a join@2\n3 member-a>member-b join@3\n" {
		t.Errorf("shard 3:\n%s", got)
	}
	for _, since := range []string{joinedB.String(), strconv.FormatInt(int64(joinedB), 10)} {
		if got := historyLines(readHistory(t, c.Server, key, url.Values{"since": {since}}).Entries); got != "2 member-a>member-b join@3\n3 member-a>member-b join@3\n" {
			t.Errorf("since %s:\n%s", since, got)
		}
	}
	if got := readHistory(t, c.Server, key, url.Values{"shard": {"9"}}); got.Entries == nil || len(got.Entries) != 0 {
		t.Errorf("a shard without entries: %+v, want entries []", got)
	}

	for _, q := range []string{"shard=x", "shard=-1", "shard=1.5", "since=yesterday", "since=-5"} {
		var e contract.ErrorBody
		path := contract.Expand(contract.GroupHistory, "orders", "workers") + "?" + q
		param, _, _ := strings.Cut(q, "=")
		if st := c.Admin().Call(http.MethodGet, path, nil, &e); st != http.StatusBadRequest ||
			e.ErrorCode != contract.CodeInvalidRequest || !strings.HasPrefix(e.Message, param+": must be") {
			t.Errorf("?%s: HTTP %d %+v, want 400 INVALID_REQUEST on %s", q, st, e, param)
		}
	}
	var e contract.ErrorBody
	if st := c.Admin().Call(http.MethodGet, contract.Expand(contract.GroupHistory, "orders", "nobody"), nil, &e); st != http.StatusNotFound || e.ErrorCode != contract.CodeGroupNotFound {
		t.Errorf("unknown group: HTTP %d %+v", st, e)
	}
}

// The history is stored with the group: the coordinator a group moves to
// when its owner leaves the cluster answers the entries the first one
// recorded, then the handover from the first to itself (group-level,
// answered as openapi.yaml describes it, and to no shard's query), then
// its own decisions.
func TestHistorySurvivesHandover(t *testing.T) {
	cs := coordtest.StartCluster(t, 2, coordtest.Options{Handler: conformantHistory(t)})
	a, b := cs[0], cs[1]
	key := group.Key{StreamPrefix: a.PlacedOn("history", cs...), ConsumerGroup: "g"}
	b.Admin().Create(key, 4)
	m1, m2 := b.Member(key, "m-1"), b.Member(key, "m-2")
	b.WaitFor(func() bool { return m1.Heartbeat().Status == contract.StatusOK && len(m1.Owned()) == 4 }, "m-1 reads every shard")
	b.WaitFor(func() bool {
		m2.Heartbeat()
		m1.Heartbeat()
		return len(m1.Owned()) == 2 && len(m2.Owned()) == 2
	}, "m-1 and m-2 share the shards")
	before := historyLines(readHistory(t, b, key, nil).Entries) // served by a, the owner
	if want := "0 >m-1 join@2\n1 >m-1 join@2\n2 >m-1 join@2\n3 >m-1 join@2\n2 m-1>m-2 join@3\n3 m-1>m-2 join@3\n"; before != want {
		t.Fatalf("history on a:\n%s\nwant\n%s", before, want)
	}

	// a leaves the cluster as on SIGTERM: it hands its groups over to b.
	a.Node.Leave()
	a.Actors.HandOver()
	if err := a.Node.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(func() bool { return m2.Leave().Status == contract.StatusOK }, "m-2's leave answered by b")
	after := historyLines(readHistory(t, b, key, nil).Entries)
	handover := "-1 coordinator " + a.ID + ">" + b.ID + " handover@3\n"
	if want := before + handover + "2 m-2>m-1 leave@4\n3 m-2>m-1 leave@4\n"; after != want {
		t.Fatalf("history on b after the handover:\n%s\nwant\n%s", after, want)
	}
	if got := historyLines(readHistory(t, b, key, url.Values{"shard": {"2"}}).Entries); got != "2 >m-1 join@2\n2 m-1>m-2 join@3\n2 m-2>m-1 leave@4\n" {
		t.Errorf("shard 2 after the handover:\n%s", got)
	}
	if owner := m2.Header.Get(contract.OwnerHeader); owner != b.URL {
		t.Errorf("m-2's leave answered by %q, want %s (the group moved)", owner, b.URL)
	}
}

// conformantHistory checks the history answers against openapi.yaml
// (conformant) and serves every other request (the cluster's internal
// routes among them) as it is.
func conformantHistory(t *testing.T) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		checked := conformant(t, h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/history") {
				checked.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}
