package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// MetricsCredential optionally protects /metrics and /actuator/prometheus
// (config monitoring.metrics-auth). With neither a token nor a user name
// they stay open, as a Prometheus scrape configuration expects by default.
// Either credential is accepted when both are set.
type MetricsCredential struct {
	// BearerToken, when set, is accepted as "Authorization: Bearer <token>"
	// (Prometheus: authorization.credentials).
	BearerToken string
	// Username and Password, when Username is set, are accepted as HTTP
	// Basic credentials (Prometheus: basic_auth).
	Username, Password string
}

// enabled reports whether a credential is configured.
func (c MetricsCredential) enabled() bool { return c.BearerToken != "" || c.Username != "" }

// protect returns h behind c: a request without an accepted credential is
// answered 401 with an UNAUTHORIZED error body and a challenge for the
// configured scheme(s). An unconfigured c returns h itself.
func (c MetricsCredential) protect(h http.Handler) http.Handler {
	if !c.enabled() {
		return h
	}
	var challenge []string
	if c.BearerToken != "" {
		challenge = append(challenge, `Bearer realm="metrics"`)
	}
	if c.Username != "" {
		challenge = append(challenge, `Basic realm="metrics"`)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.accepts(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header()["Www-Authenticate"] = challenge
		writeError(w, http.StatusUnauthorized, codeUnauthorized, "Authentication required: the metrics credential (monitoring.metrics-auth)")
	})
}

// accepts reports whether r carries a configured credential. The
// comparisons take the same time whatever the guess.
func (c MetricsCredential) accepts(r *http.Request) bool {
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && c.BearerToken != "" {
		return same(token, c.BearerToken)
	}
	if user, password, ok := r.BasicAuth(); ok && c.Username != "" {
		return same(user, c.Username) && same(password, c.Password)
	}
	return false
}

// same compares a and b in constant time, their lengths included.
func same(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
