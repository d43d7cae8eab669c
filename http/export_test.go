package httpapi

import (
	"crypto/sha256"
	"net/http"
	"time"
)

// SignForwarded sets req's mark as coordinator sender sets it when it
// forwards a request with body to coordinator receiver at at, signed with
// key (what sender shares with receiver: cluster.ForwardKeys.With); body
// need not be the body req carries (a test of a changed body sends
// another): the mark signs body's length and digest.
func SignForwarded(req *http.Request, sender string, key []byte, receiver string, at time.Time, body []byte) {
	digest := sha256.Sum256(body)
	signForward(req.Header, req.Method, req.URL.RequestURI(), sender, key, receiver, at, int64(len(body)), &digest)
}

// ForwardWindow is how far a mark's time may lie from the receiver's
// clock.
const ForwardWindow = forwardWindow
