package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// /console redirects to /console/, which serves index.html with the base
// path; the other files come with their types and the security headers.
func TestHandler(t *testing.T) {
	h := Handler(`/api/"v1"`)
	if rec := get(t, h, "/console"); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/console/" {
		t.Errorf("/console: %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
	for _, path := range []string{"/console/", "/console/index.html"} {
		rec := get(t, h, path)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(body, `content="/api/&#34;v1&#34;"`) || strings.Contains(body, basePlaceholder) {
			t.Errorf("%s: %d %q\n%s", path, rec.Code, rec.Header().Get("Content-Type"), body)
		}
	}
	for path, ctype := range map[string]string{
		"/console/app.js": "text/javascript", "/console/style.css": "text/css", "/console/favicon.svg": "image/svg+xml",
	} {
		rec := get(t, h, path)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) {
			t.Errorf("%s: %d %q, want 200 %s", path, rec.Code, rec.Header().Get("Content-Type"), ctype)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
	}
	if rec := get(t, h, "/console/missing.js"); rec.Code != http.StatusNotFound {
		t.Errorf("/console/missing.js: %d, want 404", rec.Code)
	}
}

// TestBadFileNames: paths that decode to invalid UTF-8 or to names no file
// system holds answer 404, never 500 (issue 21, defect 6).
func TestBadFileNames(t *testing.T) {
	h := Handler("/coord/v1")
	for _, path := range []string{"/console/%ff", "/console/a%80b.js", "/console/%e2%82", "/console/a//b.js", "/console/../console.go"} {
		if rec := get(t, h, path); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, rec.Code)
		}
	}
	if rec := get(t, h, "/console/app.js"); rec.Code != http.StatusOK {
		t.Errorf("app.js: %d", rec.Code)
	}
}
