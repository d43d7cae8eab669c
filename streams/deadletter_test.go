package streams

import (
	"errors"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
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
			Values: contract.DeadLetterFields(contract.StreamKey(prefix, 0), "1-1", group, 5, "boom", map[string]any{"k": "v"})}).Result()
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
	var pages [][]contract.DeadLetter
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

// A tally counts a dead-letter stream's entries by group, reading only
// what was added since its last update (across several batches), and
// counts again from the start once entries are gone.
func TestDeadLetterTally(t *testing.T) {
	client := newTestClient(t)
	ops := NewOperator(client)
	prefix := testPrefix(t, client)
	dlq := prefix + ":dead-letter"
	add := func(group string, n int) []string {
		t.Helper()
		pipe := client.Pipeline()
		cmds := make([]*redis.StringCmd, n)
		for i := range cmds {
			values := contract.DeadLetterFields(contract.StreamKey(prefix, 0), "1-1", group, 5, "boom", nil)
			if group == "" {
				delete(values, contract.DeadLetterFieldGroup)
			}
			cmds[i] = pipe.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: values})
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, n)
		for i, c := range cmds {
			ids[i] = c.Val()
		}
		return ids
	}
	var tally DeadLetterTally
	check := func(when string, billing, shipping int64) {
		t.Helper()
		if err := ops.UpdateTally(t.Context(), dlq, &tally); err != nil {
			t.Fatal(err)
		}
		if b, s := tally.Of("billing"), tally.Of("shipping"); b != billing || s != shipping {
			t.Errorf("%s: billing %d, shipping %d; want %d, %d", when, b, s, billing, shipping)
		}
	}
	check("no stream", 0, 0)
	billing := add("billing", 2)
	add("", 1)
	check("first entries", 3, 1)
	add("shipping", tallyBatch+1)
	check("more than a batch added", 3, tallyBatch+2)
	if err := client.XDel(t.Context(), dlq, billing[0]).Err(); err != nil {
		t.Fatal(err)
	}
	add("billing", 1)
	check("one removed, one added", 3, tallyBatch+2)
}

// An entry that names no group is listed to every group but is nobody's to
// remove: redrive and delete refuse it (ErrOtherGroup) and it stays.
func TestDeadLetterWithoutGroupIsNotRemovable(t *testing.T) {
	client := newTestClient(t)
	ops := NewOperator(client)
	prefix := testPrefix(t, client)
	dlq := prefix + ":dead-letter"
	values := contract.DeadLetterFields(contract.StreamKey(prefix, 0), "1-1", "", 5, "boom", map[string]any{"k": "v"})
	delete(values, contract.DeadLetterFieldGroup)
	id, err := client.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq, Values: values}).Result()
	if err != nil {
		t.Fatal(err)
	}
	page, err := ops.DeadLetters(t.Context(), dlq, prefix, "billing", "", 10)
	if err != nil || len(page.Entries) != 1 || page.Entries[0].ID != id || page.Entries[0].Group != "" {
		t.Fatalf("billing's page: %+v, %v; want the entry naming no group", page, err)
	}
	if _, err := ops.Redrive(t.Context(), dlq, prefix, "billing", 1, id); !errors.Is(err, ErrOtherGroup) {
		t.Errorf("redrive of an entry naming no group: %v, want ErrOtherGroup", err)
	}
	if err := ops.DeleteDeadLetter(t.Context(), dlq, "billing", id); !errors.Is(err, ErrOtherGroup) {
		t.Errorf("delete of an entry naming no group: %v, want ErrOtherGroup", err)
	}
	if n := client.XLen(t.Context(), dlq).Val(); n != 1 {
		t.Errorf("%d entries left, want 1", n)
	}
	if n := client.XLen(t.Context(), contract.StreamKey(prefix, 0)).Val(); n != 0 {
		t.Errorf("the refused redrive added %d entries to the shard", n)
	}
}

// Only the prefix's own dead-letter stream resolves: never a key of
// another prefix that merely starts with "<prefix>-".
func TestResolveDeadLetterStream(t *testing.T) {
	for _, name := range []string{"", "orders-dead-letter"} {
		if got, err := ResolveDeadLetterStream("orders", name); err != nil || got != "orders-dead-letter" {
			t.Errorf("ResolveDeadLetterStream(orders, %q) = %q, %v", name, got, err)
		}
	}
	for _, name := range []string{"orders-eu:0", "orders-eu-dead-letter", "orders-eu", "orders:0", "orders", "orders-dead-letter-2",
		"orders-dead-letter:0", "shipping-dead-letter", " orders-dead-letter", "ORDERS-dead-letter"} {
		if got, err := ResolveDeadLetterStream("orders", name); !errors.Is(err, ErrNotDeadLetterStream) {
			t.Errorf("ResolveDeadLetterStream(orders, %q) = %q, %v; want ErrNotDeadLetterStream", name, got, err)
		}
	}
}
