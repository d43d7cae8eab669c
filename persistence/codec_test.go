package persistence_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

var (
	key = group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	now = time.UnixMilli(1_700_000_200_000).UTC()
)

func TestEncodeLayout(t *testing.T) {
	g := storetest.Group(key, "m-0", "m-1", "m-2")
	doc := persistence.Encode(g)
	if doc.SchemaVersion != 1 || doc.LayoutVersion != 2 || !doc.UpdatedAt.Equal(g.UpdatedAt.Time()) {
		t.Fatalf("versions %d/%d, updatedAt %v", doc.SchemaVersion, doc.LayoutVersion, doc.UpdatedAt)
	}
	var agg map[string]json.RawMessage
	if err := json.Unmarshal(doc.Aggregate, &agg); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"streamPrefix": `"orders"`, "consumerGroup": `"billing"`, "schemaVersion": "1", "storeRevision": "1",
		"shardCount": "8", "members": "{}", "targetAssignments": "{}", "activeReshardingId": `"reshard-1"`,
		"createdAt": `"2023-11-14T22:13:20.000Z"`,
	} {
		if got := string(agg[field]); got != want {
			t.Errorf("aggregate %s = %s, want %s", field, got, want)
		}
	}
	for id, want := range map[string]string{"m-0": `[{"shardIndex":0},{"shardIndex":1}]`, "m-1": `[]`, "m-2": `null`} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc.Members[id], &m); err != nil {
			t.Fatal(err)
		}
		if got := string(m["targetAssignment"]); got != want {
			t.Errorf("%s targetAssignment = %s, want %s", id, got, want)
		}
		if got := string(m["memberId"]); got != `"`+id+`"` {
			t.Errorf("%s memberId = %s", id, got)
		}
	}
	got, err := persistence.Decode(doc, 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Equal(t, g, got)
}

func TestEncodeEmptyMigrations(t *testing.T) {
	g := storetest.Group(key)
	meta := g.Meta
	meta.Migrations, meta.ActiveReshardingID = nil, nil
	g.Apply(group.MetaRecord{Meta: meta})
	if agg := string(persistence.Encode(g).Aggregate); !strings.Contains(agg, `"migrations":{}`) {
		t.Errorf("aggregate %s: want migrations {}", agg)
	}
}

func TestMutationOf(t *testing.T) {
	base := storetest.Group(key, "m-0", "m-1", "m-2")
	live := *base.Members["m-0"]
	live.LastHeartbeatAt++
	meta := base.Meta
	meta.GroupEpoch++
	tests := []struct {
		name      string
		recs      []group.Record
		aggregate bool
		puts      []string
		deletes   []string
	}{
		{"lease renewal", []group.Record{group.MemberRecord{Member: &live, LivenessOnly: true}}, false, []string{"m-0"}, nil},
		{"meta only", []group.Record{group.MetaRecord{Meta: meta}}, true, nil, nil},
		{"target change", []group.Record{group.TargetRecord{MemberID: "m-2", Shards: contract.NewShardSet(4)}}, false, []string{"m-2"}, nil},
		{"target removed", []group.Record{group.TargetRemovedRecord{MemberID: "m-0"}}, false, []string{"m-0"}, nil},
		{"join", []group.Record{
			group.MetaRecord{Meta: meta},
			group.MemberRecord{Member: storetest.Member("m-9", meta.GroupEpoch)},
			group.TargetRecord{MemberID: "m-9"},
		}, true, []string{"m-9"}, nil},
		{"prune", []group.Record{group.MemberRemovedRecord{MemberID: "m-1"}, group.TargetRemovedRecord{MemberID: "m-1"}}, false, nil, []string{"m-1"}},
		{"upsert then prune", []group.Record{
			group.MemberRecord{Member: &live}, group.MemberRemovedRecord{MemberID: "m-0"}, group.TargetRemovedRecord{MemberID: "m-0"},
		}, false, nil, []string{"m-0"}},
		{"delete", []group.Record{group.DeletedRecord{}}, false, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := base.Clone()
			for _, r := range tc.recs {
				g.Apply(r)
			}
			m := persistence.MutationOf(g, tc.recs, now)
			if (m.Aggregate != nil) != tc.aggregate {
				t.Errorf("aggregate %s, want rewritten=%v", m.Aggregate, tc.aggregate)
			}
			if got := slices.Sorted(maps.Keys(m.PutMembers)); !slices.Equal(got, tc.puts) {
				t.Errorf("puts %v, want %v", got, tc.puts)
			}
			if !slices.Equal(m.DeleteMembers, tc.deletes) {
				t.Errorf("deletes %v, want %v", m.DeleteMembers, tc.deletes)
			}
			if !m.UpdatedAt.Equal(now) {
				t.Errorf("updatedAt %v", m.UpdatedAt)
			}
			if tc.name == "delete" {
				return
			}
			// Applying the delta to the stored document reproduces g.
			doc := persistence.Encode(base)
			if m.Aggregate != nil {
				doc.Aggregate = m.Aggregate
			}
			for id, b := range m.PutMembers {
				doc.Members[id] = b
			}
			for _, id := range m.DeleteMembers {
				delete(doc.Members, id)
			}
			got, err := persistence.Decode(doc, 2)
			if err != nil {
				t.Fatal(err)
			}
			storetest.Equal(t, g, got)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	good := persistence.Encode(storetest.Group(key, "m-0"))
	with := func(change func(d *persistence.Document)) persistence.Document {
		d := good
		d.Members = map[string][]byte{"m-0": good.Members["m-0"]}
		change(&d)
		return d
	}
	tests := map[string]persistence.Document{
		"schema 2":           with(func(d *persistence.Document) { d.SchemaVersion = 2 }),
		"layout 3":           with(func(d *persistence.Document) { d.LayoutVersion = 3 }),
		"aggregate not JSON": with(func(d *persistence.Document) { d.Aggregate = []byte(`{"streamPrefix":`) }),
		"aggregate string":   with(func(d *persistence.Document) { d.Aggregate = []byte(`"x"`) }),
		"aggregate schema 2": with(func(d *persistence.Document) {
			d.Aggregate = []byte(`{"streamPrefix":"p","consumerGroup":"g","schemaVersion":2,"shardCount":1}`)
		}),
		"no key":        with(func(d *persistence.Document) { d.Aggregate = []byte(`{"shardCount":1}`) }),
		"no shardCount": with(func(d *persistence.Document) { d.Aggregate = []byte(`{"streamPrefix":"p","consumerGroup":"g"}`) }),
		"member not JSON": with(func(d *persistence.Document) {
			d.Members["m-0"] = []byte(`{`)
		}),
		"member id mismatch": with(func(d *persistence.Document) {
			d.Members["m-1"] = d.Members["m-0"]
		}),
		"bad shard": with(func(d *persistence.Document) {
			d.Members["m-0"] = []byte(`{"memberId":"m-0","currentAssignment":[{"shardIndex":null}]}`)
		}),
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := persistence.Decode(doc, 3); !errors.Is(err, persistence.ErrCorrupt) {
				t.Errorf("Decode: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestDecodeLegacy(t *testing.T) {
	agg := `{"streamPrefix":"orders","consumerGroup":"billing","storeRevision":4,"groupEpoch":5,
	  "metadataVersion":2,"assignmentEpoch":5,"state":"RECONCILING",
	  "shardCountsByVersion":{"1":4,"2":6},"activeWriteVersion":2,"activeMigrationId":"mig-1",
	  "migrations":{"mig-1":{"migrationId":"mig-1","fromVersion":1,"toVersion":2,"state":"ACTIVE"},
	                "mig-0":{"fromShardCount":2,"toShardCount":4,"state":"DEPRECATED"}},
	  "members":{"a":{"memberId":"a","state":"ACTIVE","memberEpoch":5,"currentAssignment":[{"shardIndex":0}]},
	             "b":{"state":"EXPIRED","rebalanceTimeoutMs":1000}},
	  "targetAssignments":{"a":[{"shardIndex":0},{"shardIndex":1}]}}`
	doc := persistence.Document{Aggregate: []byte(agg), SchemaVersion: 1, LayoutVersion: 1}
	g, err := persistence.Decode(doc, 4)
	if err != nil {
		t.Fatal(err)
	}
	if g.ShardCount != 6 || g.ActiveReshardingID == nil || *g.ActiveReshardingID != "mig-1" {
		t.Errorf("shardCount %d, activeReshardingId %v", g.ShardCount, g.ActiveReshardingID)
	}
	want := map[string]group.Migration{
		"mig-1": {ReshardingID: "mig-1", FromShardCount: 4, ToShardCount: 6, State: group.MigrationActive},
		"mig-0": {ReshardingID: "mig-0", FromShardCount: 2, ToShardCount: 4, State: group.MigrationDeprecated},
	}
	if fmt.Sprint(g.Migrations) != fmt.Sprint(want) {
		t.Errorf("migrations %v, want %v", g.Migrations, want)
	}
	a, b := g.Members["a"], g.Members["b"]
	if a == nil || b == nil || a.RebalanceTimeoutMs != 60000 || b.RebalanceTimeoutMs != 1000 || b.MemberID != "b" {
		t.Fatalf("members %+v %+v", a, b)
	}
	if !g.Targets["a"].Equal(contract.NewShardSet(0, 1)) || len(g.Targets) != 1 {
		t.Errorf("targets %v", g.Targets)
	}

	// Member documents (layout 2) win over the embedded records.
	doc.Members = map[string][]byte{"a": []byte(`{"memberId":"a","state":"LEAVING","targetAssignment":null}`)}
	g, err = persistence.Decode(doc, 4)
	if err != nil {
		t.Fatal(err)
	}
	if g.Members["a"].State != group.MemberLeaving || len(g.Targets) != 0 {
		t.Errorf("overlay: member %+v, targets %v", g.Members["a"], g.Targets)
	}

	// Rewrite drops the embedded records: the aggregate carries none and
	// every member has its own document.
	m := persistence.Rewrite(g, now)
	rewritten, err := persistence.Decode(persistence.Document{
		Aggregate: m.Aggregate, Members: m.PutMembers, SchemaVersion: 1, LayoutVersion: 2,
	}, 5)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Equal(t, g, rewritten)
	if !strings.Contains(string(m.Aggregate), `"members":{}`) || len(m.PutMembers) != 2 {
		t.Errorf("rewrite: aggregate %s, %d member documents", m.Aggregate, len(m.PutMembers))
	}
}

func TestWithStoreRevision(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"storeRevision":1,"x":2}`, `{"storeRevision":42,"x":2}`},
		{`{"a":{"b":1}, "storeRevision" : 0}`, `{"a":{"b":1}, "storeRevision":42}`},
		{`{"streamPrefix":"\"storeRevision\":7","storeRevision":3}`, `{"streamPrefix":"\"storeRevision\":7","storeRevision":42}`},
		{`{"members":{"storeRevision":{"x":1}},"storeRevision":3}`, `{"members":{"storeRevision":{"x":1}},"storeRevision":42}`},
		{`{"x":1}`, `{"x":1}`},
	}
	for _, tc := range tests {
		if got := string(persistence.WithStoreRevision([]byte(tc.in), 42)); got != tc.want {
			t.Errorf("WithStoreRevision(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestKeyOf(t *testing.T) {
	k := group.Key{StreamPrefix: "a:b", ConsumerGroup: "c"}
	got, err := persistence.KeyOf(persistence.Encode(storetest.Group(k)).Aggregate)
	if err != nil || got != k {
		t.Errorf("KeyOf = %v, %v", got, err)
	}
	for _, bad := range []string{`{`, `{"streamPrefix":"a"}`} {
		if _, err := persistence.KeyOf([]byte(bad)); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("KeyOf(%s): %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestTimes(t *testing.T) {
	s := persistence.FormatTime(now)
	if s != "2023-11-14T22:16:40.000Z" {
		t.Errorf("FormatTime = %s", s)
	}
	if got, err := persistence.ParseTime(s); err != nil || !got.Equal(now) {
		t.Errorf("ParseTime(%s) = %v, %v", s, got, err)
	}
	if got, err := persistence.ParseTime(""); err != nil || !got.IsZero() {
		t.Errorf("ParseTime(\"\") = %v, %v", got, err)
	}
	if _, err := persistence.ParseTime("yesterday"); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("ParseTime(yesterday): %v", err)
	}
}
