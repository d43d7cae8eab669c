package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// writeHeartbeat writes resp as the 200 JSON body of a heartbeat answer,
// encoded by appendHeartbeat without reflection into a pooled buffer.
func writeHeartbeat(w http.ResponseWriter, resp *contract.HeartbeatResponse) {
	bp := heartbeatBuffers.Get().(*[]byte)
	b := appendHeartbeat((*bp)[:0], resp)
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= maxPooledBody {
		*bp = b
		heartbeatBuffers.Put(bp)
	}
}

// heartbeatBuffers recycles the encoding buffers of writeHeartbeat.
var heartbeatBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendHeartbeat appends the JSON encoding of r to b: byte for byte what
// json.Marshal produces for a contract.HeartbeatResponse (its field order and
// names, no omitempty, shard sets as [{"shardIndex":n},…] and fencing
// tokens as [{"shardIndex":n,"fencingToken":t},…], both [] when empty, strings escaped as encoding/json escapes them). Tests compare the
// two on generated values and on a response with every field set
// (TestHeartbeatEncodingCoversEveryField), so a field added to the type
// and not here fails them.
func appendHeartbeat(b []byte, r *contract.HeartbeatResponse) []byte {
	b = append(b, `{"responseTo":`...)
	b = appendJSONString(b, r.ResponseTo)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(r.Status))
	b = append(b, `,"memberId":`...)
	b = appendJSONString(b, r.MemberID)
	b = append(b, `,"memberEpoch":`...)
	b = strconv.AppendInt(b, r.MemberEpoch, 10)
	b = append(b, `,"heartbeatIntervalMs":`...)
	b = strconv.AppendInt(b, r.HeartbeatIntervalMs, 10)
	b = append(b, `,"rebalanceTimeoutMs":`...)
	b = strconv.AppendInt(b, r.RebalanceTimeoutMs, 10)
	b = append(b, `,"memberLeaseTtlMs":`...)
	b = strconv.AppendInt(b, r.MemberLeaseTtlMs, 10)
	b = append(b, `,"groupEpoch":`...)
	b = strconv.AppendInt(b, r.GroupEpoch, 10)
	b = append(b, `,"assignmentEpoch":`...)
	b = strconv.AppendInt(b, r.AssignmentEpoch, 10)
	b = append(b, `,"metadataVersion":`...)
	b = strconv.AppendInt(b, r.MetadataVersion, 10)
	b = append(b, `,"assignment":{"assignedShards":`...)
	b = r.Assignment.AssignedShards.AppendJSON(b)
	b = append(b, `,"pendingShards":`...)
	b = r.Assignment.PendingShards.AppendJSON(b)
	b = append(b, `,"metadataVersion":`...)
	b = strconv.AppendInt(b, r.Assignment.MetadataVersion, 10)
	b = append(b, `,"fencingTokens":`...)
	b = r.Assignment.FencingTokens.AppendJSON(b)
	return append(b, "}}"...)
}

// appendJSONString appends s as a JSON string the way encoding/json does.
// Printable ASCII other than the characters it escapes (", \, and the
// HTML-sensitive <, >, &) is copied; any other string, rare on this path
// (names are validated, docs/protocol.md §3), is encoded by encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
