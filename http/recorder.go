package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// maxErrorBody bounds the error body a statusRecorder keeps; error bodies
// are small JSON objects.
const maxErrorBody = 4 << 10

// statusRecorder is the edge's one pass-through ResponseWriter recorder:
// it passes a response through to the writer below and notes its status
// and the start of an error (≥ 400) body, to read its errorCode. The
// request observer (ObserveRequests) and the audit middleware read the
// same one (recorderFor): a response is wrapped once however many of them
// watch it. (A batch item's answerRecorder is no pass-through: it has no
// writer below.)
type statusRecorder struct {
	http.ResponseWriter
	status  int // 0 until the handler answers
	errBody []byte
}

// recorderFor returns w's recorder: w itself when it is one (an outer
// middleware's), else a new one over w.
func recorderFor(w http.ResponseWriter) *statusRecorder {
	if rec, ok := w.(*statusRecorder); ok {
		return rec
	}
	return &statusRecorder{ResponseWriter: w}
}

func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.status >= http.StatusBadRequest && len(s.errBody) < maxErrorBody {
		s.errBody = append(s.errBody, b[:min(len(b), maxErrorBody-len(s.errBody))]...)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush,
// deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// answered returns the status the handler answered: 200, as net/http
// sends, when it wrote nothing.
func (s *statusRecorder) answered() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// errorCode returns the errorCode of a docs/protocol.md §0 error body, "" for anything else.
func (s *statusRecorder) errorCode() string {
	var body contract.ErrorBody
	if json.Unmarshal(s.errBody, &body) != nil {
		return ""
	}
	return string(body.ErrorCode)
}
