package httpapi

import (
	"crypto/sha256"
	"net/http"
	"time"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// SignForwarded sets req's mark as coordinator sender sets it when it
// forwards a request with body to coordinator receiver at at (body need
// not be the body req carries: a test of a changed body sends another).
func SignForwarded(req *http.Request, sender persistence.Coordinator, receiver string, at time.Time, body []byte) {
	digest := sha256.Sum256(body)
	signForward(req.Header, req.Method, req.URL.RequestURI(), sender, receiver, at, &digest)
}

// ForwardWindow is how far a mark's time may lie from the receiver's
// clock.
const ForwardWindow = forwardWindow
