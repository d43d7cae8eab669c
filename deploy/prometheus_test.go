package deploy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// A real Prometheus server, configured from prometheus/prometheus.yml with
// the coordinator's job pointed at an in-process coordinator, scrapes
// /actuator/prometheus and loads the alert rules.
func TestPrometheusScrapesTheCoordinator(t *testing.T) {
	bin := tool(t, "prometheus")
	c := startCoordinator(t)
	target, err := url.Parse(c.url)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := scrapeConfig(t, target.Host)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), config, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	logs, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		logs.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("prometheus log:\n%s", out)
		}
	})

	api := "http://" + addr + "/api/v1/"
	for _, query := range []string{
		`redis_stream_coord_up{coordinator="deploy-test"} == 1`,
		`redis_stream_coord_heartbeat_total{coordinator="deploy-test",stream="orders",group="billing",status="OK"}`,
	} {
		waitForResult(t, api+"query?query="+url.QueryEscape(query))
	}
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name string } `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	get(t, api+"rules", &rules)
	n := 0
	for _, g := range rules.Data.Groups {
		n += len(g.Rules)
	}
	if n != 17 {
		t.Errorf("prometheus loaded %d alert rules, want 17", n)
	}
}

// scrapeConfig returns prometheus/prometheus.yml with the coordinator job
// scraping target every second and the rule files made absolute.
func scrapeConfig(t *testing.T, target string) []byte {
	t.Helper()
	raw, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	rules, _ := cfg["rule_files"].([]any)
	for i, r := range rules {
		abs, err := filepath.Abs(filepath.Join("prometheus", r.(string)))
		if err != nil {
			t.Fatal(err)
		}
		rules[i] = abs
	}
	found := false
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		job := j.(map[string]any)
		if job["job_name"] == "redis-stream-coordinator" {
			found = true
			job["scrape_interval"] = "1s"
			job["static_configs"] = []any{map[string]any{"targets": []any{target}}}
		}
	}
	if !found {
		t.Fatal("prometheus.yml has no redis-stream-coordinator job")
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitForResult polls a Prometheus instant query until it returns a
// non-empty vector.
func waitForResult(t *testing.T, query string) {
	t.Helper()
	eventually.True(t, "a result for "+query, func() bool {
		var resp struct {
			Status string `json:"status"`
			Data   struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		return tryGet(query, &resp) == nil && resp.Status == "success" && len(resp.Data.Result) > 0
	})
}

func get(t *testing.T, u string, v any) {
	t.Helper()
	if err := tryGet(u, v); err != nil {
		t.Fatal(err)
	}
}

func tryGet(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &url.Error{Op: "GET", URL: u, Err: errStatus(resp.Status)}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

type errStatus string

func (e errStatus) Error() string { return strings.TrimSpace(string(e)) }
