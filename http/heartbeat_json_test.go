package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// wantEncodedLikeJSON fails unless appendHeartbeat encodes r exactly as
// json.Marshal does.
func wantEncodedLikeJSON(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, r contract.HeartbeatResponse) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendHeartbeat(nil, &r); string(got) != string(want) {
		t.Fatalf("appendHeartbeat(%#v) =\n%s\nwant (json.Marshal)\n%s", r, got, want)
	}
}

func TestHeartbeatEncodingMatchesEncodingJSON(t *testing.T) {
	for name, r := range map[string]contract.HeartbeatResponse{
		"zero": {},
		"ok": {ResponseTo: "r1", Status: contract.StatusOK, MemberID: "m1", MemberEpoch: 3, HeartbeatIntervalMs: 1000,
			RebalanceTimeoutMs: 60000, GroupEpoch: 7, AssignmentEpoch: 7, MetadataVersion: 2,
			Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(0, 2, 4095), PendingShards: contract.NewShardSet(1), MetadataVersion: 2,
				FencingTokens: contract.ShardFences{{ShardIndex: 0, FencingToken: 5}, {ShardIndex: 2, FencingToken: 7}, {ShardIndex: 4095, FencingToken: 7}}}},
		"retry":          group.RetryResponse(group.DefaultSettings(), &contract.HeartbeatRequest{RequestID: "r2", MemberID: "m2", MemberEpoch: -1}),
		"empty not nil":  {Assignment: contract.AssignmentPayload{AssignedShards: contract.ShardSet{}, PendingShards: contract.ShardSet{}}},
		"negative":       {MemberEpoch: -1, GroupEpoch: -9223372036854775808, MetadataVersion: 9223372036854775807, Assignment: contract.AssignmentPayload{AssignedShards: contract.ShardSet{-3}}},
		"html":           {ResponseTo: "<a href='x'>&</a>", MemberID: "a\"b\\c/d"},
		"control":        {ResponseTo: "tab\tnl\ncr\rnul\x00\x1f\x7f", Status: "\b\f"},
		"unicode":        {ResponseTo: "zürich-東京-🙂", MemberID: "line\u2028para\u2029"},
		"invalid utf-8":  {ResponseTo: "bad\xff\xfe", MemberID: "cut\xe6\x97"},
		"unknown status": {Status: "SOMETHING_NEW"},
	} {
		t.Run(name, func(t *testing.T) { wantEncodedLikeJSON(t, r) })
	}
}

func TestHeartbeatEncodingMatchesEncodingJSONOnGeneratedValues(t *testing.T) {
	bytes := rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "bytes")) })
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[A-Za-z0-9._:-]{0,40}`), bytes)
	shards := rapid.Custom(func(t *rapid.T) contract.ShardSet {
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return contract.ShardSet{}
		}
		return contract.NewShardSet(rapid.SliceOfN(rapid.IntRange(-5, 1<<20), 1, 20).Draw(t, "shards")...)
	})
	fences := rapid.Custom(func(t *rapid.T) contract.ShardFences {
		if rapid.Bool().Draw(t, "no fences") {
			return nil
		}
		return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) contract.ShardFence {
			return contract.ShardFence{ShardIndex: rapid.IntRange(-5, 1<<20).Draw(t, "shard"), FencingToken: rapid.Int64().Draw(t, "token")}
		}), 0, 20).Draw(t, "fences")
	})
	rapid.Check(t, func(t *rapid.T) {
		wantEncodedLikeJSON(t, contract.HeartbeatResponse{
			ResponseTo:          str.Draw(t, "responseTo"),
			Status:              contract.HeartbeatStatus(str.Draw(t, "status")),
			MemberID:            str.Draw(t, "memberId"),
			MemberEpoch:         rapid.Int64().Draw(t, "memberEpoch"),
			HeartbeatIntervalMs: rapid.Int64().Draw(t, "heartbeatIntervalMs"),
			RebalanceTimeoutMs:  rapid.Int64().Draw(t, "rebalanceTimeoutMs"),
			MemberLeaseTtlMs:    rapid.Int64().Draw(t, "memberLeaseTtlMs"),
			GroupEpoch:          rapid.Int64().Draw(t, "groupEpoch"),
			AssignmentEpoch:     rapid.Int64().Draw(t, "assignmentEpoch"),
			MetadataVersion:     rapid.Int64().Draw(t, "metadataVersion"),
			Assignment: contract.AssignmentPayload{
				AssignedShards:  shards.Draw(t, "assigned"),
				PendingShards:   shards.Draw(t, "pending"),
				MetadataVersion: rapid.Int64().Draw(t, "assignmentMetadataVersion"),
				FencingTokens:   fences.Draw(t, "fencingTokens"),
			},
		})
	})
}

// Every field of contract.HeartbeatResponse, at any depth, holds a value
// other than its zero, and the hand encoder writes what encoding/json
// writes: a field added to the type and not to appendHeartbeat fails here.
func TestHeartbeatEncodingCoversEveryField(t *testing.T) {
	var r contract.HeartbeatResponse
	populate(t, reflect.ValueOf(&r).Elem(), new(int))
	wantEncodedLikeJSON(t, r)
}

// populate sets v and, at any depth, every exported field, element and
// value in it to a value other than the zero, each one distinct (*n
// counts them).
func populate(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				populate(t, v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", *n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		populate(t, s.Index(0), n)
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		populate(t, p.Elem(), n)
		v.Set(p)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		populate(t, k, n)
		populate(t, e, n)
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		t.Fatalf("populate: no value for %s (kind %s)", v.Type(), v.Kind())
	}
	if v.IsZero() {
		t.Fatalf("populate left %s zero", v.Type())
	}
}

// writeHeartbeat answers exactly what writeJSON answered for the same value.
func TestWriteHeartbeatMatchesWriteJSON(t *testing.T) {
	r := contract.HeartbeatResponse{ResponseTo: "r1", Status: contract.StatusOK, MemberID: "m1",
		Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(3)}}
	got, want := httptest.NewRecorder(), httptest.NewRecorder()
	writeHeartbeat(got, &r)
	writeJSON(want, http.StatusOK, r)
	if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
		t.Errorf("writeHeartbeat: %d %q %s, writeJSON: %d %q %s", got.Code, got.Header().Get("Content-Type"), got.Body,
			want.Code, want.Header().Get("Content-Type"), want.Body)
	}
}

func BenchmarkHeartbeatEncoding(b *testing.B) {
	r := contract.HeartbeatResponse{ResponseTo: "member-00042-17", Status: contract.StatusOK, MemberID: "member-00042", MemberEpoch: 3,
		HeartbeatIntervalMs: 1000, RebalanceTimeoutMs: 60000, GroupEpoch: 1001, AssignmentEpoch: 1001, MetadataVersion: 1,
		Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(42), MetadataVersion: 1}}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(r)
		}
	})
	b.Run("appendHeartbeat", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendHeartbeat(buf[:0], &r)
		}
	})
}
