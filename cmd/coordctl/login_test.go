package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// loginServer answers POST /coord/v1/auth/login as a coordinator does:
// a token for admin/password, 401 otherwise; every other path is 401 too
// (an unauthenticated request under the base path is refused before 404).
func loginServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Username, Password string }
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/coord/v1/auth/login" ||
			json.NewDecoder(r.Body).Decode(&in) != nil || in.Username != "admin" || in.Password != "password" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":"UNAUTHORIZED","errorCode":"UNAUTHORIZED","message":"Authentication required"}`))
			return
		}
		_, _ = w.Write([]byte(`{"accessToken":"tok","expiresAt":"2030-01-01T00:00:00Z","roles":["ADMIN"]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// login accepts the coordinator's URL with or without the API's base path
// (the URL the coordinator logs at start) and stores the server without
// it; a refused login names the URL and the user it tried.
func TestLoginServerURLWithOrWithoutBasePath(t *testing.T) {
	srv := loginServer(t)
	for _, server := range []string{srv.URL, srv.URL + "/", srv.URL + "/coord/v1", srv.URL + "/coord/v1/"} {
		config := filepath.Join(t.TempDir(), "config.json")
		c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": config}}
		if code, out, errOut := c.run("password\n", "login", "--server", server, "--username", "admin"); code != exitOK || !strings.Contains(out, "Logged in to "+srv.URL+" as admin") {
			t.Errorf("login --server %s: exit %d\n%s%s", server, code, out, errOut)
		}
		if s, err := loadSettings(config); err != nil || s.Server != srv.URL || s.Token != "tok" {
			t.Errorf("login --server %s stored %+v, %v; want server %s", server, s, err, srv.URL)
		}
	}
	c := ctl{t: t, env: map[string]string{"COORDCTL_CONFIG": filepath.Join(t.TempDir(), "config.json")}}
	code, _, errOut := c.run("wrong\n", "login", "--server", srv.URL+"/coord/v1", "--username", "admin")
	if code != exitAuth || !strings.Contains(errOut, srv.URL+"/coord/v1/auth/login") || !strings.Contains(errOut, `user "admin"`) {
		t.Errorf("login with a wrong password: exit %d %q, want %d naming the URL and the user", code, errOut, exitAuth)
	}
}
