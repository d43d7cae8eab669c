package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Transport is the member protocol over HTTP (docs/protocol.md §4.1): it
// encodes a heartbeat as JSON, posts it to the group's heartbeat URL,
// decodes the answer and returns the answer's header, whose OwnerHeader
// names the coordinator to send the next heartbeat to. Member uses it;
// simulated members (internal/testkit/membersim, the bench) use it to speak the
// protocol as a real member does. Request and answer buffers are pooled,
// so a heartbeat allocates little beyond the answer it returns. A
// Transport is safe for concurrent use.
type Transport struct {
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Authorize, when set, adds credentials to each request.
	Authorize func(context.Context, *http.Request) error
}

// maxAnswerBytes bounds an answer's body that is read.
const maxAnswerBytes = 8 << 20

// Heartbeat posts req, the heartbeat of member req.MemberID in the group
// g of stream prefix p, to the API at base (scheme, host and base path)
// and returns the decoded answer and the answer's header (nil when no
// answer arrived). An answer other than 200 is an *APIError; one that is
// not a heartbeat answer to req (its responseTo or memberId differ) is an
// error too. An error changes nothing: the caller treats it as a lost
// answer.
func (t *Transport) Heartbeat(ctx context.Context, base, p, g string, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, http.Header, error) {
	var out contract.HeartbeatResponse
	body := getBuffer()
	if err := json.NewEncoder(body).Encode(req); err != nil {
		putBuffer(body)
		return out, nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+contract.HeartbeatPath(p, g, req.MemberID), &requestBody{buf: body})
	if err != nil {
		putBuffer(body)
		return out, nil, err
	}
	hr.ContentLength = int64(body.Len())
	hr.Header.Set("Content-Type", "application/json")
	if t.Authorize != nil {
		if err := t.Authorize(ctx, hr); err != nil {
			putBuffer(body)
			return out, nil, err
		}
	}
	hc := t.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(hr) // closes body, which returns it to the pool
	if err != nil {
		return out, nil, err
	}
	defer res.Body.Close()
	answer := getBuffer()
	defer putBuffer(answer)
	if _, err := answer.ReadFrom(io.LimitReader(res.Body, maxAnswerBytes)); err != nil {
		return out, res.Header, err
	}
	if res.StatusCode != http.StatusOK {
		return out, res.Header, apiError(res, answer.Bytes())
	}
	if err := json.Unmarshal(answer.Bytes(), &out); err != nil {
		return contract.HeartbeatResponse{}, res.Header, fmt.Errorf("heartbeat answer %s: %w", answer.Bytes(), err)
	}
	if out.ResponseTo != req.RequestID || out.MemberID != req.MemberID {
		return contract.HeartbeatResponse{}, res.Header, fmt.Errorf("heartbeat %s of %s answered as %q of %q", req.RequestID, req.MemberID, out.ResponseTo, out.MemberID)
	}
	return out, res.Header, nil
}

// apiError is the *APIError of a non-2xx answer res with body raw.
func apiError(res *http.Response, raw []byte) *APIError {
	ae := &APIError{StatusCode: res.StatusCode}
	if n, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && n > 0 {
		ae.RetryAfter = time.Duration(n) * time.Second
	}
	var eb contract.ErrorBody
	if json.Unmarshal(raw, &eb) == nil {
		ae.ErrorCode, ae.Message = eb.ErrorCode, eb.Message
	}
	return ae
}

// buffers recycles the heartbeat bodies; buffers grown beyond
// maxPooledBuffer are dropped so one large answer does not pin memory.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 64 << 10

func getBuffer() *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		buffers.Put(b)
	}
}

// requestBody is a pooled buffer sent as a request body. The HTTP
// transport closes a request's body once it is done with it (possibly
// after Do returned), and only then is the buffer reused.
type requestBody struct {
	buf    *bytes.Buffer
	closed atomic.Bool
}

func (b *requestBody) Read(p []byte) (int, error) { return b.buf.Read(p) }

func (b *requestBody) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		putBuffer(b.buf)
	}
	return nil
}
