package streams

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A group's pages leave out the entries of the other groups sharing the
// dead-letter stream, examining at most deadLetterScanPages pages' worth
// each: behind many other entries a page is short (here empty) with a
// cursor, and the cursors lead to the group's entry. A blank group lists
// every entry; redrive and delete refuse another group's.
func TestDeadLettersFilterByGroup(t *testing.T) {
	client := newTestClient(t)
	ops := NewOperator(client)
	prefix := testPrefix(t, client)
	dlq := prefix + ":dead-letter" // under the prefix, so that the test's cleanup deletes it
	add := func(group string) string {
		t.Helper()
		id, err := client.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq,
			Values: DeadLetterFields(StreamKey(prefix, 0), "1-1", group, 5, "boom", map[string]any{"k": "v"})}).Result()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ours := add("billing")
	var others []string
	for range 25 {
		others = append(others, add("shipping"))
	}

	const limit = 2 // a page examines at most 20 entries
	var pages [][]DeadLetter
	for cursor := ""; ; {
		page, err := ops.DeadLetters(t.Context(), dlq, prefix, "billing", cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page.Entries)
		if page.NextCursor == nil || len(pages) > 3 {
			break
		}
		cursor = *page.NextCursor
	}
	if len(pages) != 2 || len(pages[0]) != 0 || len(pages[1]) != 1 {
		t.Fatalf("billing's pages: %+v, want an empty one (20 of shipping's examined) and one with billing's entry", pages)
	}
	if d := pages[1][0]; d.ID != ours || d.Group != "billing" || d.SourceShard == nil || *d.SourceShard != 0 || d.Deliveries != 5 || d.Error != "boom" || d.Fields["k"] != "v" {
		t.Errorf("billing's entry: %+v", d)
	}

	all, err := ops.DeadLetters(t.Context(), dlq, prefix, "", "", 100)
	if err != nil || len(all.Entries) != 26 || all.NextCursor != nil || all.Entries[0].ID != others[24] || all.Entries[0].Group != "shipping" {
		t.Fatalf("every group's page: %d entries, cursor %v, %v", len(all.Entries), all.NextCursor, err)
	}

	if _, err := ops.Redrive(t.Context(), dlq, prefix, "billing", 1, others[0]); !errors.Is(err, ErrOtherGroup) {
		t.Errorf("billing redrives shipping's entry: %v, want ErrOtherGroup", err)
	}
	if err := ops.DeleteDeadLetter(t.Context(), dlq, "billing", others[0]); !errors.Is(err, ErrOtherGroup) {
		t.Errorf("billing deletes shipping's entry: %v, want ErrOtherGroup", err)
	}
	if err := ops.DeleteDeadLetter(t.Context(), dlq, "billing", ours); err != nil {
		t.Errorf("billing deletes its own entry: %v", err)
	}
	if n := client.XLen(t.Context(), dlq).Val(); n != 25 {
		t.Errorf("%d entries left, want shipping's 25", n)
	}
}
