package deploy

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// tool returns the path of a binary of the Debian package "prometheus".
// Without it the test is skipped, except in CI, where it fails.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found: CI must install the Debian package prometheus (.ci/run)", name)
	}
	t.Skipf("%s not found: install the Debian package prometheus to run this test (CI always runs it)", name)
	return ""
}

// The alert rules and the scrape configuration are valid, and the rules'
// unit tests pass.
func TestPromtool(t *testing.T) {
	promtool := tool(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "prometheus/alerts.yml"},
		{"test", "rules", "prometheus/alerts_test.yml"},
		{"check", "config", "prometheus/prometheus.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
