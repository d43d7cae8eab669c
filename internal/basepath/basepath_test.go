package basepath

import "testing"

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"":            Default,
		"   ":         Default,
		"/":           Default,
		"//":          Default,
		"/coord/v1":   "/coord/v1",
		"/api/":       "/api",
		" /api// ":    "/api",
		"api":         "/api",
		"api/v2/":     "/api/v2",
		"/nested/x/y": "/nested/x/y",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
