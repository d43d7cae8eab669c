package streams

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestPlanResetOnRealData resolves every target kind against a stream of
// entries 1-1 … 10-1 whose group delivered up to 6-1, and checks the
// counts; setting the planned id moves the group there.
func TestPlanResetOnRealData(t *testing.T) {
	client := newTestClient(t)
	key := testPrefix(t, client) + ":0"
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("%d-1", i+1)
	}
	xadd(t, client, key, ids...)
	if err := client.XGroupCreate(t.Context(), key, "g", "6-1").Err(); err != nil {
		t.Fatal(err)
	}
	op := NewOperator(client)
	cases := []struct {
		name                 string
		p                    Position
		setID                string
		redelivered, skipped int64
	}{
		{"earliest", Position{Kind: Earliest}, "0", 6, 0},
		{"latest", Position{Kind: Latest}, "10-1", 0, 4},
		{"id", Position{Kind: AfterID, ID: "3-1"}, "3-1", 3, 0},
		{"timestamp", Position{Kind: Timestamp, TimestampMs: 9}, "8-18446744073709551615", 0, 2},
		{"back 2", Position{Kind: By, By: -2}, "4-1", 2, 0},
		{"back past the start", Position{Kind: By, By: -50}, "0", 6, 0},
		{"forward 3", Position{Kind: By, By: 3}, "9-1", 0, 3},
		{"forward past the end", Position{Kind: By, By: 50}, "10-1", 0, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := op.PlanReset(t.Context(), key, "g", tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if plan.SetID != tc.setID || plan.Redelivered != tc.redelivered || plan.Skipped != tc.skipped {
				t.Fatalf("plan %+v, want setId %s, redelivered %d, skipped %d", plan, tc.setID, tc.redelivered, tc.skipped)
			}
			if plan.Before.LastDeliveredID == nil || *plan.Before.LastDeliveredID != "6-1" {
				t.Fatalf("before %+v, want 6-1", plan.Before)
			}
		})
	}
	if err := op.SetID(t.Context(), key, "g", "4-1"); err != nil {
		t.Fatal(err)
	}
	pos, err := op.GroupPosition(t.Context(), key, "g")
	if err != nil || pos.LastDeliveredID == nil || *pos.LastDeliveredID != "4-1" {
		t.Fatalf("after SetID: %+v, %v", pos, err)
	}
	if _, err := op.PlanReset(t.Context(), key, "g", Position{Kind: By}); err == nil {
		t.Fatal("BY 0 was accepted")
	}
}

// TestSetIDCreatesMissingGroup: setting a position on a stream without the
// group (or without the stream) creates the group there.
func TestSetIDCreatesMissingGroup(t *testing.T) {
	client := newTestClient(t)
	key := testPrefix(t, client) + ":0"
	op := NewOperator(client)
	if err := op.SetID(t.Context(), key, "g", "0"); err != nil {
		t.Fatal(err)
	}
	pos, err := op.GroupPosition(t.Context(), key, "g")
	if err != nil || pos.LastDeliveredID == nil {
		t.Fatalf("group not created: %+v, %v", pos, err)
	}
}

// TestAckPendingAbove: only the pending entries above the id given are
// acknowledged; "" acknowledges every one.
func TestAckPendingAbove(t *testing.T) {
	client := newTestClient(t)
	key := testPrefix(t, client) + ":0"
	xadd(t, client, key, "1-1", "2-1", "3-1", "4-1", "5-1")
	if err := client.XGroupCreate(t.Context(), key, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.XReadGroup(t.Context(), &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"}, Count: 5, Block: -1}).Err(); err != nil {
		t.Fatal(err)
	}
	op := NewOperator(client)
	if n, err := op.AckPending(t.Context(), key, "g", "3-1"); err != nil || n != 2 {
		t.Fatalf("above 3-1: %d acknowledged, %v", n, err)
	}
	if p := client.XPending(t.Context(), key, "g").Val(); p.Count != 3 || p.Higher != "3-1" {
		t.Fatalf("pending after: %+v", p)
	}
	if n, err := op.AckPending(t.Context(), key, "g", ""); err != nil || n != 3 {
		t.Fatalf("every one: %d acknowledged, %v", n, err)
	}
}
