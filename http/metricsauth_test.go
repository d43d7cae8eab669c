package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// /metrics and /actuator/prometheus stay open without a metrics
// credential; with one, only a request carrying it is served, others get
// 401 UNAUTHORIZED with a challenge for each configured scheme.
func TestMetricsCredential(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "redis_stream_coord_up 1\n") })
	scrape := func(api http.Handler, path string, auth func(*http.Request)) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != nil {
			auth(req)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		return rec
	}
	bearer := func(token string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	}
	basic := func(user, password string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, password) }
	}
	served := func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && bytes.Contains(rec.Body.Bytes(), []byte("redis_stream_coord_up"))
	}
	for _, c := range []struct {
		name      string
		cred      MetricsCredential
		challenge []string
		accepted  []func(*http.Request)
		refused   []func(*http.Request)
	}{
		{name: "open", accepted: []func(*http.Request){nil, bearer("x"), basic("u", "p")}},
		{name: "bearer", cred: MetricsCredential{BearerToken: "s3cret"}, challenge: []string{`Bearer realm="metrics"`},
			accepted: []func(*http.Request){bearer("s3cret")},
			refused:  []func(*http.Request){nil, bearer(""), bearer("s3cre"), bearer("s3cretx"), basic("u", "s3cret")}},
		{name: "basic", cred: MetricsCredential{Username: "prom", Password: "pw"}, challenge: []string{`Basic realm="metrics"`},
			accepted: []func(*http.Request){basic("prom", "pw")},
			refused:  []func(*http.Request){nil, basic("prom", "p"), basic("admin", "pw"), basic("prom", ""), bearer("pw")}},
		{name: "both", cred: MetricsCredential{BearerToken: "t", Username: "prom", Password: "pw"},
			challenge: []string{`Bearer realm="metrics"`, `Basic realm="metrics"`},
			accepted:  []func(*http.Request){bearer("t"), basic("prom", "pw")},
			refused:   []func(*http.Request){nil, bearer("pw"), basic("prom", "t")}},
	} {
		api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Metrics, o.MetricsCredential = metrics, c.cred })
		for _, path := range []string{"/metrics", "/actuator/prometheus"} {
			for i, auth := range c.accepted {
				if rec := scrape(api, path, auth); !served(rec) {
					t.Errorf("%s %s: accepted credential %d: %d %s", c.name, path, i, rec.Code, rec.Body)
				}
			}
			for i, auth := range c.refused {
				rec := scrape(api, path, auth)
				errorOf(t, rec, http.StatusUnauthorized, codeUnauthorized)
				if got := rec.Header().Values("WWW-Authenticate"); !slices.Equal(got, c.challenge) {
					t.Errorf("%s %s: refused credential %d: challenge %q, want %q", c.name, path, i, got, c.challenge)
				}
			}
		}
	}
}
