package batchwire_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
)

func sampleItems() []batchwire.Item {
	return []batchwire.Item{
		{Path: "/coord/v1/streams/orders/groups/g/members/m1/heartbeat", Header: http.Header{
			"Authorization": {"Bearer abc"}, "X-Forwarded-For": {"10.0.0.1, 127.0.0.1"}, "Content-Type": {"application/json"},
			"X-Many": {"a", "", "b"},
		}, Body: []byte(`{"memberId":"m1","memberEpoch":3,"ownedShards":[{"shardIndex":1}]}`)},
		{Path: "/p", Header: http.Header{}, Body: []byte{}},
		{Path: "", Header: http.Header{"Empty": {}}, Body: []byte("\x00\xff not JSON")},
	}
}

func encodeItems(items []batchwire.Item) []byte {
	records := make([][]byte, len(items))
	for i, it := range items {
		records[i] = batchwire.AppendItem(nil, it.Path, it.Header, it.Body)
	}
	return batchwire.Batch(records)
}

func TestItemsRoundTrip(t *testing.T) {
	want := sampleItems()
	got, err := batchwire.Items(encodeItems(want), len(want))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Items: %v\n got %#v\nwant %#v", err, got, want)
	}
	if _, err := batchwire.Items(encodeItems(want), len(want)-1); err == nil {
		t.Errorf("a batch over maxItems was decoded")
	}
	if got, err := batchwire.Items(batchwire.Batch(nil), 4); err != nil || len(got) != 0 {
		t.Errorf("empty batch: %v %v", got, err)
	}
}

func TestAnswersRoundTrip(t *testing.T) {
	want := []batchwire.Answer{
		{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "X-Coordinator-Owner": {"http://127.0.0.1:1"}}, Body: []byte(`{"status":"OK"}`)},
		{Status: 404, Header: http.Header{}, Body: []byte{}},
	}
	b := []byte{byte(len(want))}
	for _, a := range want {
		b = batchwire.AppendAnswer(b, a.Status, a.Header, a.Body)
	}
	got, err := batchwire.Answers(b, len(want))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Answers: %v\n got %#v\nwant %#v", err, got, want)
	}
	if _, err := batchwire.Answers(b, len(want)+1); err == nil {
		t.Errorf("an answer with fewer answers than items was decoded")
	}
	bad := batchwire.Batch([][]byte{batchwire.AppendAnswer(nil, 42, nil, nil)})
	if _, err := batchwire.Answers(bad, 1); err == nil {
		t.Errorf("status 42 was decoded")
	}
}

// Every proper prefix of a batch, and a batch with a byte after its last
// record, is refused rather than decoded into fewer or empty items.
func TestTruncatedAndTrailingBytesAreRefused(t *testing.T) {
	b := encodeItems(sampleItems())
	for n := range len(b) {
		if items, err := batchwire.Items(b[:n], 16); err == nil {
			t.Fatalf("prefix of %d of %d bytes decoded into %d items", n, len(b), len(items))
		}
	}
	if _, err := batchwire.Items(append(b, 0), 16); err == nil {
		t.Errorf("a trailing byte was accepted")
	}
}

// A forged count cannot make the decoder allocate for entries the body
// cannot hold.
func TestForgedCountsAreRefused(t *testing.T) {
	for name, b := range map[string][]byte{
		"items":   {0xff, 0xff, 0xff, 0xff, 0x0f},
		"header":  {1, 1, '/', 0xff, 0xff, 0xff, 0xff, 0x0f},
		"values":  {1, 1, '/', 1, 1, 'A', 0xff, 0xff, 0xff, 0x0f},
		"body":    {1, 1, '/', 0, 0xff, 0xff, 0xff, 0x0f},
		"varint":  {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"nothing": {},
	} {
		if _, err := batchwire.Items(b, 1<<20); err == nil {
			t.Errorf("%s: forged batch decoded", name)
		}
	}
}

// FuzzItems: any body is decoded or refused without a panic, and a body
// that decodes encodes back to the same items.
func FuzzItems(f *testing.F) {
	f.Add(encodeItems(sampleItems()))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := batchwire.Items(b, 256)
		if err != nil {
			return
		}
		again, err := batchwire.Items(encodeItems(items), 256)
		if err != nil || !reflect.DeepEqual(again, items) {
			t.Fatalf("re-encoded items differ: %v", err)
		}
	})
}
