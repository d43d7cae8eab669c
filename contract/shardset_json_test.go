package contract_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// genericShards decodes like ShardSet.UnmarshalJSON without its fast path.
func genericShards(data string) (contract.ShardSet, error) {
	var raw []struct {
		ShardIndex *int `json:"shardIndex"`
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return nil, err
	}
	var idx []int
	for _, r := range raw {
		if r.ShardIndex == nil {
			return nil, fmt.Errorf("null")
		}
		idx = append(idx, *r.ShardIndex)
	}
	return contract.NewShardSet(idx...), nil
}

func TestShardSetDecodingMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`null`, ` null `, `[]`, ` [ ] `, `[{"shardIndex":3}]`, `[{"shardIndex":3},{"shardIndex":1},{"shardIndex":3}]`,
		"[ {\n\"shardIndex\" : 7 } ,\t{\"shardIndex\":-2}]", `[{"shardIndex":0,"extra":true}]`, `[{"extra":1,"shardIndex":5}]`,
		`[{"shardIndex":1.0}]`, `[{"shardIndex":1e2}]`, `[{"shardIndex":null}]`, `[{"shardIndex":"1"}]`, `[{}]`,
		`[{"shard\u0049ndex":4}]`, `[{"shardIndex":12345678901234567890}]`, `[{"shardIndex":4}`, `[{"shardIndex":4}]x`,
		`{"shardIndex":4}`, `[{"shardIndex":4},]`, `[{"SHARDINDEX":4}]`,
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		var b strings.Builder
		b.WriteString("[")
		for i := range r.IntN(20) {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", r.IntN(2)) + ",")
			}
			fmt.Fprintf(&b, `{"shardIndex":%s%d}`, strings.Repeat(" ", r.IntN(2)), r.IntN(1000)-10)
		}
		b.WriteString("]")
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		want, wantErr := genericShards(in)
		var got contract.ShardSet
		err := json.Unmarshal([]byte(in), &got)
		if (err != nil) != (wantErr != nil) || !got.Equal(want) {
			t.Errorf("%s: got %v (%v), encoding/json %v (%v)", in, got, err, want, wantErr)
		}
	}
}

func TestInstantDecodesEscapedAndPlainStrings(t *testing.T) {
	var a, b contract.Instant
	if err := json.Unmarshal([]byte(`"2026-05-21T00:00:03.123Z"`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`"2026-05-21T00:00:03.123\u005a"`), &b); err != nil {
		t.Fatal(err)
	}
	if a != b || a.String() != "2026-05-21T00:00:03.123Z" {
		t.Errorf("%v %v", a, b)
	}
	if err := json.Unmarshal([]byte(`"yesterday"`), &a); err == nil {
		t.Error("invalid instant accepted")
	}
}

// BenchmarkShardSetDecode decodes ten shards with ShardSet.UnmarshalJSON
// and, for comparison, with encoding/json's reflection (its fallback).
func BenchmarkShardSetDecode(b *testing.B) {
	data, _ := json.Marshal(contract.Range(0, 10))
	b.Run("ShardSet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s contract.ShardSet
			if err := json.Unmarshal(data, &s); err != nil || len(s) != 10 {
				b.Fatal(s, err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if s, err := genericShards(string(data)); err != nil || len(s) != 10 {
				b.Fatal(s, err)
			}
		}
	})
}
