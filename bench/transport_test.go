package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRawTransportReusesBoundedConnections(t *testing.T) {
	var conns, inFlight, most atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.RequestURI() != "/a/b?c=d" || r.Header.Get("X-Test") != "1" {
			t.Errorf("%s %s %v", r.Method, r.URL.RequestURI(), r.Header)
		}
		_, _ = w.Write(bytes.ToUpper(body))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	api, err := NewAPI(srv.URL, 3)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/a/b?c=d", strings.NewReader("hello"))
			req.Header.Set("X-Test", "1")
			res, err := api.Client.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(b) != "HELLO" {
				t.Errorf("body %q", b)
			}
		})
	}
	wg.Wait()
	if conns.Load() > 3 || most.Load() > 3 {
		t.Errorf("%d connections, %d requests at once; at most 3 allowed", conns.Load(), most.Load())
	}
	api.Close()
}

func TestRawTransportDropsBrokenConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	}))
	defer srv.Close()
	api, err := NewAPI(srv.URL, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // one slot: each request needs the previous connection closed
		res, err := api.Client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	srv.Close()
	if _, err := api.Client.Get(srv.URL); err == nil {
		t.Error("request to a closed server succeeded")
	}
}
