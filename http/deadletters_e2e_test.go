package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// Issue 42 item 7: the dead-letter routes of group <P>/g reach <P>'s own
// dead-letter stream only. A shard of another prefix that starts with
// "<P>-" (<P>-eu:0) and that prefix's dead-letter stream (<P>-eu-dead-letter)
// can be neither paged nor deleted nor redriven, even when their entries
// carry g's name: 400 INVALID_REQUEST, and every entry stays.
func TestDeadLetterRoutesReachOnlyTheirPrefix(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	own := contract.DeadLetterStream(e.prefix)
	foreign := []string{e.prefix + "-eu:0", contract.DeadLetterStream(e.prefix + "-eu"), e.prefix + "-eu", e.prefix + ":0"}
	t.Cleanup(func() { e.rdb.Del(t.Context(), append(foreign, own)...) })
	ids := map[string]string{}
	for _, key := range append(foreign, own) {
		id, err := e.rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: key,
			Values: contract.DeadLetterFields(e.streamKey(0), "1-1", e.key.ConsumerGroup, 5, "boom", map[string]any{"payload": "keep"})}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[key] = id
	}

	for _, key := range foreign {
		r := e.expectError("GET", e.monitoringPath()+"/dead-letters?stream="+url.QueryEscape(key), nil, http.StatusBadRequest, "INVALID_REQUEST")
		if !strings.Contains(r.Message, own) {
			t.Errorf("GET with stream %s: message %q does not name %s", key, r.Message, own)
		}
		for _, action := range []string{"delete", "redrive"} {
			e.expectError("POST", e.groupPath()+"/dead-letters/"+action,
				map[string]any{"stream": key, "ids": []string{ids[key]}, "requestedBy": "ops", "reason": "probe"}, http.StatusBadRequest, "INVALID_REQUEST")
		}
		if n := e.rdb.XLen(t.Context(), key).Val(); n != 1 {
			t.Errorf("%s has %d entries after the refused delete and redrive, want 1", key, n)
		}
	}
	if n := e.rdb.XLen(t.Context(), e.streamKey(0)).Val(); n != 1 {
		t.Errorf("shard 0 has %d entries: a refused redrive added to it", n)
	}

	// The prefix's own stream, named or not, is served.
	var page deadLetterPage
	e.expect("GET", e.monitoringPath()+"/dead-letters?stream="+url.QueryEscape(own), nil, http.StatusOK, &page)
	if page.Stream != own || len(page.Entries) != 1 || page.Entries[0].ID != ids[own] {
		t.Fatalf("own dead letters: %+v", page)
	}
	var res deadLetterResults
	e.expect("POST", e.groupPath()+"/dead-letters/delete", map[string]any{"stream": own, "ids": []string{ids[own]}, "requestedBy": "ops"}, http.StatusOK, &res)
	if len(res.Results) != 1 || res.Results[0].Status != "DELETED" || res.Stream != own {
		t.Fatalf("delete from the own stream: %+v", res)
	}
}

// Issue 42 item 2 through the HTTP API: pages of big entries stay within
// the read budget. A single-shard page of 1000 entries of 16 KiB is cut
// short (fewer records, a next cursor, HeaderReadTruncated) instead of
// reading 16 MiB; a far tail cursor answers the oldest entry; a tail page
// in the middle, more than the budget from both ends, is 400.
func TestMessageExplorersWithinTheReadBudget(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	const entries, size = 600, 16 << 10
	payload := strings.Repeat("x", size)
	var ids []string
	for done := 0; done < entries; done += 100 {
		pipe := e.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, 100)
		for j := range cmds {
			cmds[j] = pipe.XAdd(t.Context(), &redis.XAddArgs{Stream: e.streamKey(0), Values: []any{"payload", payload}})
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			ids = append(ids, c.Val())
		}
	}

	st, header, body := e.Admin().Do("GET", e.monitoringPath()+"/shards/0/messages?direction=FORWARD&limit=1000", "")
	var page struct {
		Limit   int `json:"limit"`
		Records []struct {
			RecordID string `json:"recordId"`
		} `json:"records"`
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal([]byte(body), &page); st != http.StatusOK || err != nil {
		t.Fatalf("shard page: %d %v %.200s", st, err, body)
	}
	n := len(page.Records)
	if n == 0 || n*size > 2*streams.MaxReadBytes || header.Get(httpapi.HeaderReadTruncated) != "true" ||
		page.NextCursor == nil || *page.NextCursor != ids[n-1] || page.Records[0].RecordID != ids[0] || page.Limit != 1000 {
		t.Fatalf("shard page of 1000 big entries: %d records, next %v, %s %q", n, page.NextCursor, httpapi.HeaderReadTruncated, header.Get(httpapi.HeaderReadTruncated))
	}
	st, header, _ = e.Admin().Do("GET", e.monitoringPath()+"/shards/0/messages?limit=10", "")
	if st != http.StatusOK || header.Get(httpapi.HeaderReadTruncated) != "" {
		t.Fatalf("a page within the budget: %d, %s %q", st, httpapi.HeaderReadTruncated, header.Get(httpapi.HeaderReadTruncated))
	}

	grafana := func(cursor string, limit int) (int, http.Header, string) {
		return e.Admin().Do("GET", fmt.Sprintf("/monitoring/grafana/messages?streamPrefix=%s&consumerGroup=%s&shardIndex=all&direction=FORWARD&limit=%d&cursor=%s",
			url.QueryEscape(e.prefix), url.QueryEscape(e.key.ConsumerGroup), limit, url.QueryEscape(cursor)), "")
	}
	st, _, body = grafana(streams.TailCursorPrefix+"999999999", 1)
	var rows []struct {
		RecordID       string  `json:"recordId"`
		ShardIndex     int     `json:"shardIndex"`
		PageNextCursor *string `json:"pageNextCursor"`
	}
	if err := json.Unmarshal([]byte(body), &rows); st != http.StatusOK || err != nil || len(rows) != 1 || rows[0].RecordID != ids[0] || rows[0].ShardIndex != 0 ||
		rows[0].PageNextCursor == nil || *rows[0].PageNextCursor != fmt.Sprintf("%s%d", streams.TailCursorPrefix, entries-2) {
		t.Fatalf("far tail cursor: %d %v %.300s", st, err, body)
	}
	r := e.expectError("GET", fmt.Sprintf("/monitoring/grafana/messages?streamPrefix=%s&consumerGroup=%s&shardIndex=all&limit=1&cursor=%s",
		url.QueryEscape(e.prefix), url.QueryEscape(e.key.ConsumerGroup), streams.TailCursorPrefix+"300"), nil, http.StatusBadRequest, "INVALID_REQUEST")
	if !strings.Contains(r.Message, "cursor") {
		t.Errorf("middle tail page refused with %q", r.Message)
	}
}
