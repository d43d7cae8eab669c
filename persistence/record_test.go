package persistence_test

import (
	"errors"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// decodeOne decodes a group with the given aggregate and member document m.
func decodeOne(aggregate, member string) (*group.Group, error) {
	return persistence.Decode(persistence.Document{
		Aggregate:     []byte(aggregate),
		Members:       map[string][]byte{"m": []byte(member)},
		SchemaVersion: 1, LayoutVersion: 2,
	}, 1)
}

const plainAggregate = `{"streamPrefix":"p","consumerGroup":"g","shardCount":1}`

// TestMemberStateDecodes checks that a stored member state reads as the
// state's constant, escaped or not, any other string as it is, null as
// unset, and a number as corrupt.
func TestMemberStateDecodes(t *testing.T) {
	for in, want := range map[string]group.MemberState{
		`"ACTIVE"`: group.MemberActive, `"FENCED"`: group.MemberFenced, `"STARTING"`: group.MemberStarting,
		`"LEAVING"`: group.MemberLeaving, `"EXPIRED"`: group.MemberExpired, `"ACT\u0049VE"`: group.MemberActive,
		`"odd"`: "odd", `""`: "", `null`: "",
	} {
		g, err := decodeOne(plainAggregate, `{"memberId":"m","state":`+in+`}`)
		if err != nil || g.Members["m"].State != want {
			t.Errorf("state %s: got %v, %v; want %q", in, g, err, want)
		}
	}
	if _, err := decodeOne(plainAggregate, `{"memberId":"m","state":7}`); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("state 7: %v, want ErrCorrupt", err)
	}
}

// TestStoreRevisionNotRead checks that the aggregate's storeRevision is
// never read: whatever it holds, the group decodes.
func TestStoreRevisionNotRead(t *testing.T) {
	for _, rev := range []string{`1`, `1.5`, `"7"`, `null`, `{"x":[1]}`} {
		agg := `{"streamPrefix":"p","consumerGroup":"g","storeRevision":` + rev + `,"shardCount":1}`
		if _, err := decodeOne(agg, `{"memberId":"m"}`); err != nil {
			t.Errorf("storeRevision %s: %v", rev, err)
		}
	}
}
