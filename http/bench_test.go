package httpapi

import (
	"net/http"
	"testing"
)

const benchNoopPath = "/coord/v1/bench/noop/streams/orders/groups/orders-consumer/members/m1/heartbeat"

func TestBenchNoopIsOffByDefault(t *testing.T) {
	errorOf(t, do(newTestAPI(&fakeCoord{}), "POST", benchNoopPath, validHeartbeat), http.StatusNotFound, "NOT_FOUND")
}

func TestBenchNoopDecodesWithoutTheCoordinator(t *testing.T) {
	f := &fakeCoord{}
	api := newTestAPI(f, func(o *Options) { o.BenchEndpoints = true })
	rec := do(api, "POST", benchNoopPath, validHeartbeat)
	wantJSON(t, rec, http.StatusOK, `{"status":"OK"}`)
	if f.Calls != 0 || f.LastHeartbeat != nil {
		t.Errorf("the coordinator was called: %d calls", f.Calls)
	}
	errorOf(t, do(api, "POST", benchNoopPath, `{"protocolVersion":0}`), http.StatusBadRequest, "INVALID_REQUEST")
	errorOf(t, do(api, "POST", benchNoopPath, `{`), http.StatusBadRequest, "INVALID_REQUEST")
}
