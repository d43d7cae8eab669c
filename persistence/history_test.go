package persistence_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// A stored history entry whose cause this codec does not know makes the
// group corrupt: it is never rewritten without it.
func TestHistoryUnknownCauseIsCorrupt(t *testing.T) {
	doc := persistence.Encode(fullGroup())
	doc.Aggregate = bytes.Replace(doc.Aggregate, []byte(`"cause":"work-rebalance"`), []byte(`"cause":"moon-phase"`), 1)
	if _, err := persistence.Decode(doc, 1); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("decode: %v, want ErrCorrupt", err)
	}
}

// Decoded history entries share one string per member id.
func TestHistoryDecodesMemberIDsOnce(t *testing.T) {
	g := fullGroup()
	meta := g.Meta
	meta.History = []group.Change{
		{At: 1, Epoch: 1, Shard: 0, Cause: group.CauseJoin, To: "member-a"},
		{At: 2, Epoch: 2, Shard: 0, Cause: group.CauseLeave, From: "member-a", To: "member-b"},
		{At: 3, Epoch: 3, Shard: 1, Cause: group.CauseScale, From: "member-b"},
	}
	g.Apply(group.MetaRecord{Meta: meta})
	decoded, err := persistence.Decode(persistence.Encode(g), 1)
	if err != nil {
		t.Fatal(err)
	}
	h := decoded.History
	if len(h) != 3 || h[1].From != "member-a" || h[2].From != "member-b" || h[0].At != contract.Instant(1) {
		t.Fatalf("decoded history %+v", h)
	}
	if unsafe.StringData(h[0].To) != unsafe.StringData(h[1].From) || unsafe.StringData(h[1].To) != unsafe.StringData(h[2].From) {
		t.Error("a member id decoded into several strings")
	}
}

// A handover is stored as a history entry of shard -1 from and to the
// coordinators' ids, and decodes back to the same group-level Change.
func TestHistoryStoresHandover(t *testing.T) {
	g := fullGroup()
	meta := g.Meta
	handover := group.Change{At: 5, Epoch: 9, Shard: contract.GroupLevelShard, Cause: group.CauseHandover, From: "coord-a", To: "coord-b"}
	meta.History = []group.Change{handover}
	g.Apply(group.MetaRecord{Meta: meta})
	doc := persistence.Encode(g)
	if want := `"history":[{"at":5,"epoch":9,"shard":-1,"cause":"handover","from":"coord-a","to":"coord-b"}]`; !strings.Contains(string(doc.Aggregate), want) {
		t.Fatalf("aggregate %s, want it to hold %s", doc.Aggregate, want)
	}
	decoded, err := persistence.Decode(doc, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded.History) != 1 || decoded.History[0] != handover || !decoded.History[0].GroupLevel() {
		t.Fatalf("decoded history %+v, want [%+v]", decoded.History, handover)
	}
}
