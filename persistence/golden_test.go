package persistence_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

var update = flag.Bool("update", false, "rewrite the golden documents in testdata")

// notStored names the group fields that live in memory only: the golden
// groups leave them at their zero value and decoding never sets them.
var notStored = map[string]bool{"Meta.Work": true, "Member.LeaseHold": true}

// TestGoldenDocuments pins the stored form byte for byte: the documents
// Encode writes for a group whose every stored field is set (full) and for
// one that leaves every optional field unset (sparse) equal the golden
// files, and decoding them gives the group back. A field added to a group
// type fails the full case until it is given a value here; the golden
// file then shows whether it is stored.
func TestGoldenDocuments(t *testing.T) {
	for name, g := range map[string]*group.Group{"full": fullGroup(), "sparse": sparseGroup()} {
		t.Run(name, func(t *testing.T) {
			if name == "full" {
				for _, v := range []any{g.Meta, *g.Members["m-1"]} {
					for _, path := range zeroFields(reflect.ValueOf(v), reflect.TypeOf(v).Name()) {
						t.Errorf("full group leaves %s unset", path)
					}
				}
			}
			doc := persistence.Encode(g)
			got := goldenText(doc)
			file := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Encode differs from %s:\ngot\n%s\nwant\n%s", file, got, want)
			}
			decoded, err := persistence.Decode(parseGolden(t, want), 1)
			if err != nil {
				t.Fatal(err)
			}
			if name == "full" {
				if !reflect.DeepEqual(decoded.Meta, g.Meta) || !reflect.DeepEqual(decoded.Members, g.Members) ||
					!reflect.DeepEqual(decoded.Targets, g.Targets) {
					t.Errorf("decoded group differs:\ngot  %+v %+v\nwant %+v %+v", decoded.Meta, decoded.Members, g.Meta, g.Members)
				}
			}
			storetest.Equal(t, g, decoded)
		})
	}
}

// goldenText lists a document's aggregate and member documents, one per
// line, members by id.
func goldenText(doc persistence.Document) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "aggregate %s\n", doc.Aggregate)
	for _, id := range slices.Sorted(maps.Keys(doc.Members)) {
		fmt.Fprintf(&b, "member %s %s\n", id, doc.Members[id])
	}
	return b.Bytes()
}

// parseGolden reads goldenText back into a layout-2 document.
func parseGolden(t *testing.T, text []byte) persistence.Document {
	doc := persistence.Document{Members: map[string][]byte{}, SchemaVersion: 1, LayoutVersion: 2}
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "aggregate "); ok {
			doc.Aggregate = []byte(rest)
			continue
		}
		id, body, ok := strings.Cut(strings.TrimPrefix(line, "member "), " ")
		if !ok {
			t.Fatalf("golden line %q", line)
		}
		doc.Members[id] = []byte(body)
	}
	return doc
}

// zeroFields returns the paths of the fields under v (a struct) that hold
// their zero value, looking into nested structs, pointers, slices and map
// values, except those named in notStored.
func zeroFields(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if notStored[v.Type().Name()+"."+f.Name] {
				continue
			}
			p := path + "." + f.Name
			if v.Field(i).IsZero() {
				out = append(out, p)
				continue
			}
			out = append(out, zeroFields(v.Field(i), p)...)
		}
	case reflect.Pointer:
		out = append(out, zeroFields(v.Elem(), path)...)
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, zeroFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out = append(out, zeroFields(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k))...)
		}
	}
	return out
}

// fullGroup returns a group whose every stored field is set, down to the
// pointers of nested values; its member m-1 has a target, m-2 an empty one.
func fullGroup() *group.Group {
	const at = contract.Instant(1_700_000_000_000)
	active := "reshard-2"
	id, delivered, acked := "1700000000000-0", "1700000000100-3", "1700000000050-1"
	lag, pending := int64(7), int64(2)
	pos := func(n int64) *contract.GroupPosition {
		return &contract.GroupPosition{LastDeliveredID: &delivered, Lag: &lag, Pending: &n}
	}
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{
		StreamPrefix: "orders", ConsumerGroup: "billing",
		GroupEpoch: 9, MetadataVersion: 4, AssignmentEpoch: 8, State: group.GroupReconciling, ShardCount: 8,
		Migrations: map[string]group.Migration{
			"reshard-1": {ReshardingID: "reshard-1", FromShardCount: 2, ToShardCount: 4, State: group.MigrationDeprecated, CreatedAt: at + 1, UpdatedAt: at + 2},
			active:      {ReshardingID: active, FromShardCount: 4, ToShardCount: 8, State: group.MigrationDraining, CreatedAt: at + 3, UpdatedAt: at + 4},
		},
		ActiveReshardingID: &active,
		MetadataCorrection: &group.MetadataCorrection{
			TargetMetadataVersion: 4, ObservedMetadataVersion: 3, RequestedAt: at + 5, UpdatedAt: at + 6,
			AcknowledgedMembers: []string{"m-1", "m-2"},
		},
		CreatedAt: at, UpdatedAt: at + 7,
		PausedShards: contract.NewShardSet(6, 7),
		LiveResets: []group.LiveReset{{
			ResetID: "reset-1", State: contract.ResetFailed,
			Target: group.ResetTarget{To: "BY", EntryID: id, TimestampMs: 1_699_999_999_000, By: -5},
			Shards: []group.ShardReset{
				{ShardIndex: 4, PausedFrom: []string{"m-1"}, SetID: id, Before: pos(pending), After: pos(1)},
				{ShardIndex: 5, PausedFrom: []string{"m-1", "m-2"}, SetID: acked, Before: pos(3), After: pos(4)},
			},
			RequestedBy: "ops", Reason: "replay \"the\" day", Error: "XGROUP SETID: no such key",
			CreatedAt: at + 8, ApplyingAt: at + 9, UpdatedAt: at + 10,
		}},
		Assignor: group.AssignorWork,
		History: []group.Change{{
			At: at + 11, Epoch: 9, Shard: 3, Cause: group.CauseWorkRebalance, From: "m-2", To: "m-1",
			Work: &group.WorkEvidence{Weight: 2.5, FromLoad: 1.25, ToLoad: 0.5},
		}},
		Coordinator: "coord-b",
	}})
	for i, mid := range []string{"m-1", "m-2"} {
		n := int64(i)
		stream := fmt.Sprintf("orders:%d", i)
		g.Apply(group.MemberRecord{Member: &group.Member{
			MemberID: mid, MemberName: "consumer-" + mid, State: group.MemberLeaving,
			MemberEpoch: 9 + n, MetadataVersion: 4, RuntimeMaxConcurrency: 16, ActiveConsumerWorkers: 3,
			CurrentAssignment:    contract.NewShardSet(0, 1),
			GrantedAssignment:    contract.NewShardSet(0, 1, 2),
			Revoking:             contract.NewShardSet(3),
			LastHeartbeatAt:      at + 20 + contract.Instant(n),
			MemberLeaseExpiresAt: at + 10_020,
			RebalanceTimeoutMs:   30_000,
			RebalanceDeadlineAt:  at + 30_020,
			ShardProgress: group.ProgressList{{
				Shard: contract.Shard{ShardIndex: 1}, StreamKey: &stream, LastDeliveredID: &delivered,
				LastAckedID: &acked, PendingCount: 5 + n, UpdatedAt: at + 19,
			}},
			PreviousMemberEpoch:       8,
			PreviousGrantedAssignment: contract.NewShardSet(0, 4),
			GrantEpochs:               []int64{5, 7, 9},
		}})
	}
	g.Apply(group.TargetRecord{MemberID: "m-1", Shards: contract.NewShardSet(0, 1, 2)})
	g.Apply(group.TargetRecord{MemberID: "m-2"})
	return g
}

// sparseGroup returns a group that leaves every optional field unset: no
// migrations, correction, pauses or assignor, a live reset without the
// optional target and shard fields, and members without sets, times,
// progress or target.
func sparseGroup() *group.Group {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{
		StreamPrefix: "p", ConsumerGroup: "g", State: group.GroupEmpty, ShardCount: 1,
		LiveResets: []group.LiveReset{{
			ResetID: "r", State: contract.ResetPausing, Target: group.ResetTarget{To: "LATEST"},
			Shards: []group.ShardReset{{ShardIndex: 0}},
		}},
	}})
	g.Apply(group.MemberRecord{Member: &group.Member{MemberID: "m"}})
	g.Apply(group.MemberRecord{Member: &group.Member{
		MemberID: "n", State: group.MemberExpired, CurrentAssignment: contract.ShardSet{},
		ShardProgress: group.ProgressList{{}},
	}})
	return g
}
