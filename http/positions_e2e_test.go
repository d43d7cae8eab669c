package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// shardPosition is a position in the reset answer.
type shardPosition struct {
	LastDeliveredID *string `json:"lastDeliveredId"`
	Lag             *int64  `json:"lag"`
	Pending         *int64  `json:"pending"`
}

type resetAnswer struct {
	To     string `json:"to"`
	Forced bool   `json:"forced"`
	Shards []struct {
		ShardIndex int           `json:"shardIndex"`
		HeldBy     []string      `json:"heldBy"`
		Before     shardPosition `json:"before"`
		After      shardPosition `json:"after"`
	} `json:"shards"`
}

// A forced offset reset on real streams (the racing variant; live resets
// are in liveops_e2e_test.go): to the end while a member holds the shards,
// then shard 0 alone back to the start and to a time; the answer shows each
// shard's position before and after, and Redis agrees.
func TestResetOffsetsEndToEnd(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(2, 1)
	// Three entries a second apart, after whatever the stream's id is now.
	info, err := e.rdb.XInfoStream(t.Context(), e.streamKey(0)).Result()
	if err != nil {
		t.Fatal(err)
	}
	last, _, _ := strings.Cut(info.LastGeneratedID, "-")
	t0, _ := strconv.ParseInt(last, 10, 64)
	ids := []string{}
	for i := range int64(3) {
		ids = append(ids, strconv.FormatInt(t0+1000*(i+1), 10)+"-0")
	}
	for _, id := range ids {
		if err := e.rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: e.streamKey(0), ID: id, Values: []any{"payload", id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	e.add(1, "y")
	reset := e.groupPath() + "/offsets/reset"

	e.expectError("POST", reset, map[string]any{"to": "SOMEWHERE", "requestedBy": "ops"}, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("POST", reset, map[string]any{"to": "ID", "entryId": "x", "requestedBy": "ops"}, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("POST", reset, map[string]any{"to": "LATEST", "shards": []int{2}, "force": true, "requestedBy": "ops"}, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("POST", reset, map[string]any{"to": "LATEST"}, http.StatusBadRequest, "INVALID_REQUEST")

	var a resetAnswer
	e.expect("POST", reset, map[string]any{"to": "LATEST", "force": true, "requestedBy": "ops", "reason": "skip the backlog"}, http.StatusOK, &a)
	if !a.Forced || len(a.Shards) != 2 || *a.Shards[0].Before.Lag != 3 || *a.Shards[1].Before.Lag != 1 ||
		*a.Shards[0].After.Lag != 0 || *a.Shards[1].After.Lag != 0 || len(a.Shards[0].HeldBy) != 1 {
		t.Fatalf("LATEST: %+v", a)
	}
	if g := e.groupInfo(0, e.key.ConsumerGroup); g.Lag != 0 {
		t.Errorf("XINFO GROUPS after LATEST: lag %d", g.Lag)
	}

	// The member leaves: shard 0 alone goes back to the start.
	ms[0].Leave()
	e.Heartbeat(e.key, ms[0])
	e.expect("POST", reset, map[string]any{"to": "EARLIEST", "shards": []int{0}, "force": true, "requestedBy": "ops"}, http.StatusOK, &a)
	if n := e.rdb.XLen(t.Context(), e.streamKey(0)).Val(); len(a.Shards) != 1 || len(a.Shards[0].HeldBy) != 0 ||
		*a.Shards[0].After.LastDeliveredID != "0-0" || *a.Shards[0].After.Lag != n {
		t.Fatalf("EARLIEST: %+v: after %s lag %d", a, *a.Shards[0].After.LastDeliveredID, *a.Shards[0].After.Lag)
	}
	// To the time of the second entry: it and the third are delivered again.
	e.expect("POST", reset, map[string]any{"to": "TIMESTAMP", "timestampMs": t0 + 2000, "shards": []int{0}, "force": true, "requestedBy": "ops"}, http.StatusOK, &a)
	if got := e.readAll(e.streamKey(0), e.key.ConsumerGroup, "check", true); got != 2 {
		t.Errorf("after TIMESTAMP of the second entry: %d entries delivered, want 2 (%+v)", got, a)
	}
	e.expect("POST", reset, map[string]any{"to": "ID", "entryId": ids[0], "shards": []int{0}, "force": true, "requestedBy": "ops"}, http.StatusOK, &a)
	if *a.Shards[0].After.LastDeliveredID != ids[0] || *a.Shards[0].Before.LastDeliveredID != ids[2] {
		t.Errorf("ID: %+v", a.Shards[0])
	}
}

type deadLetterPage struct {
	Stream  string `json:"stream"`
	Length  int64  `json:"length"`
	Entries []struct {
		ID           string            `json:"id"`
		SourceStream string            `json:"sourceStream"`
		SourceID     string            `json:"sourceId"`
		SourceShard  *int              `json:"sourceShard"`
		Group        string            `json:"group"`
		Deliveries   int64             `json:"deliveries"`
		Error        string            `json:"error"`
		Fields       map[string]string `json:"fields"`
	} `json:"entries"`
	NextCursor *string `json:"nextCursor"`
}

// ids returns the ids of p's entries.
func (p deadLetterPage) ids() []string {
	ids := make([]string, len(p.Entries))
	for i, d := range p.Entries {
		ids[i] = d.ID
	}
	return ids
}

type deadLetterResults struct {
	Stream  string `json:"stream"`
	Results []struct {
		ID, Status, Stream, NewID, ErrorCode string
	} `json:"results"`
}

// Dead letters as the Go client writes them: listed newest first with where
// they came from, the group that dead-lettered them, their delivery count
// and last error; another group's entries are left out unless allGroups is
// set, and refused to this group's redrive and delete, as is an entry that
// names no group (listed, but nobody's to remove). One is redriven to its
// shard, one deleted, and ids that are gone or malformed fail alone.
func TestDeadLettersEndToEnd(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	dlq := contract.DeadLetterStream(e.prefix)
	t.Cleanup(func() { e.rdb.Del(t.Context(), dlq) })
	add := func(values map[string]any) string {
		id, err := e.rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: values}).Result()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := add(contract.DeadLetterFields(e.streamKey(1), "1-1", e.key.ConsumerGroup, 5, "boom", map[string]any{"key": "k1", "payload": "p1"}))
	second := add(map[string]any{"stream": e.streamKey(0), "id": "2-1", "deliveries": 6, "error": "bang", "field:payload": "p2"}) // names no group
	var others []string
	for i := range 3 {
		others = append(others, add(contract.DeadLetterFields(e.streamKey(0), fmt.Sprintf("3-%d", i), "another-group", 5, "", map[string]any{"payload": "p3"})))
	}

	var page deadLetterPage
	e.expect("GET", e.monitoringPath()+"/dead-letters?limit=1", nil, http.StatusOK, &page)
	if page.Stream != dlq || page.Length != 5 || page.NextCursor == nil || !slices.Equal(page.ids(), []string{second}) {
		t.Fatalf("first page (past the other group's entries): %+v", page)
	}
	e.expect("GET", e.monitoringPath()+"/dead-letters?limit=1&cursor="+*page.NextCursor, nil, http.StatusOK, &page)
	if !slices.Equal(page.ids(), []string{first}) || page.NextCursor != nil {
		t.Fatalf("second page: %+v", page)
	}
	if d := page.Entries[0]; d.SourceStream != e.streamKey(1) || d.SourceID != "1-1" || d.SourceShard == nil || *d.SourceShard != 1 ||
		d.Group != e.key.ConsumerGroup || d.Deliveries != 5 || d.Error != "boom" || d.Fields["key"] != "k1" || d.Fields["payload"] != "p1" {
		t.Errorf("dead letter: %+v", d)
	}
	e.expect("GET", e.monitoringPath()+"/dead-letters?allGroups=true", nil, http.StatusOK, &page)
	if want := []string{others[2], others[1], others[0], second, first}; !slices.Equal(page.ids(), want) || page.Entries[0].Group != "another-group" || page.Entries[3].Group != "" {
		t.Errorf("every group's entries: %+v, want ids %v", page, want)
	}
	e.expectError("GET", e.monitoringPath()+"/dead-letters?allGroups=yes", nil, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("GET", e.monitoringPath()+"/dead-letters?stream=elsewhere", nil, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("GET", e.monitoringPath()+"/dead-letters?cursor=x", nil, http.StatusBadRequest, "INVALID_REQUEST")

	var res deadLetterResults
	e.expect("POST", e.groupPath()+"/dead-letters/redrive", map[string]any{"ids": []string{first, "9-9", "x", others[0]}, "requestedBy": "ops"}, http.StatusOK, &res)
	if len(res.Results) != 4 || res.Results[0].Status != "REDRIVEN" || res.Results[0].Stream != e.streamKey(1) ||
		res.Results[1].ErrorCode != "DEAD_LETTER_NOT_FOUND" || res.Results[2].ErrorCode != "INVALID_REQUEST" ||
		res.Results[3].ErrorCode != "DEAD_LETTER_OF_ANOTHER_GROUP" {
		t.Fatalf("redrive: %+v", res)
	}
	redriven, err := e.rdb.XRange(t.Context(), e.streamKey(1), res.Results[0].NewID, res.Results[0].NewID).Result()
	if err != nil || len(redriven) != 1 || redriven[0].Values["payload"] != "p1" || redriven[0].Values["key"] != "k1" {
		t.Errorf("redriven entry on %s: %+v %v", e.streamKey(1), redriven, err)
	}
	own := add(contract.DeadLetterFields(e.streamKey(0), "4-1", e.key.ConsumerGroup, 5, "", map[string]any{"payload": "p4"}))
	e.expect("POST", e.groupPath()+"/dead-letters/delete", map[string]any{"ids": []string{own, second, others[1]}, "requestedBy": "ops"}, http.StatusOK, &res)
	if len(res.Results) != 3 || res.Results[0].Status != "DELETED" || res.Results[1].ErrorCode != "DEAD_LETTER_OF_ANOTHER_GROUP" ||
		res.Results[2].ErrorCode != "DEAD_LETTER_OF_ANOTHER_GROUP" {
		t.Fatalf("delete: %+v", res)
	}
	e.expect("POST", e.groupPath()+"/dead-letters/redrive", map[string]any{"ids": []string{second}, "requestedBy": "ops"}, http.StatusOK, &res)
	if len(res.Results) != 1 || res.Results[0].ErrorCode != "DEAD_LETTER_OF_ANOTHER_GROUP" {
		t.Fatalf("redrive of the entry naming no group: %+v", res)
	}
	if n := e.rdb.XLen(t.Context(), dlq).Val(); n != 4 {
		t.Errorf("dead-letter stream length %d after a redrive and a delete, want the other group's 3 and the one naming no group", n)
	}
	e.expectError("POST", e.groupPath()+"/dead-letters/delete", map[string]any{"ids": []string{}, "requestedBy": "ops"}, http.StatusBadRequest, "INVALID_REQUEST")
	e.expectError("POST", "/streams/"+e.prefix+"/groups/none/dead-letters/delete", map[string]any{"ids": []string{second}, "requestedBy": "ops"}, http.StatusNotFound, "GROUP_NOT_FOUND")
}
