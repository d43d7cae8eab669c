package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/metrics"
)

const dashboardDir = "grafana/dashboards"

// Every metric a dashboard panel queries is one the coordinator registers.
func TestDashboardMetricsExist(t *testing.T) {
	registered := registeredMetrics(t)
	metricName := regexp.MustCompile(metrics.Namespace + `_[a-z_]+`)
	for file, d := range dashboards(t) {
		exprs := fields(d, "expr")
		if len(exprs) == 0 {
			t.Errorf("%s: no Prometheus query", file)
		}
		for _, expr := range exprs {
			for _, name := range metricName.FindAllString(expr, -1) {
				if !registered[name] && !registered[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] {
					t.Errorf("%s: query %q uses %s, which the coordinator does not export", file, expr, name)
				}
			}
		}
	}
}

// The coordinator API datasource takes its credentials from the environment
// through basic auth; no datasource URL carries credentials.
func TestDatasourceProvisioning(t *testing.T) {
	raw, err := os.ReadFile("grafana/provisioning/datasources/datasources.yml")
	if err != nil {
		t.Fatal(err)
	}
	var prov struct {
		Datasources []struct {
			UID            string            `yaml:"uid"`
			Type           string            `yaml:"type"`
			URL            string            `yaml:"url"`
			BasicAuth      bool              `yaml:"basicAuth"`
			BasicAuthUser  string            `yaml:"basicAuthUser"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(raw, &prov); err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{}
	env := regexp.MustCompile(`^\$\{[A-Z_]+\}$`)
	for _, ds := range prov.Datasources {
		uids[ds.UID] = ds.Type
		if containsCredentials(ds.URL) || strings.Contains(ds.URL, "@") {
			t.Errorf("datasource %s: url %q carries credentials", ds.UID, ds.URL)
		}
		if ds.Type != "yesoreyeram-infinity-datasource" {
			continue
		}
		if !ds.BasicAuth || !env.MatchString(ds.BasicAuthUser) || !env.MatchString(ds.SecureJSONData["basicAuthPassword"]) {
			t.Errorf("datasource %s: want basic auth with user and password from environment variables, got user %q", ds.UID, ds.BasicAuthUser)
		}
	}
	for file, d := range dashboards(t) {
		for _, ds := range datasourceRefs(d) {
			if typ, ok := uids[ds.UID]; !ok || typ != ds.Type {
				t.Errorf("%s: datasource %+v is not provisioned", file, ds)
			}
		}
	}
}

// dashboards parses every dashboard JSON file.
func dashboards(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dashboardDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dashboardDir, err)
	}
	out := map[string]any{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = d
	}
	return out
}

// fields returns the string values of every object member named key, at
// any depth.
func fields(v any, key string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == key {
				out = append(out, s)
			}
			out = append(out, fields(x, key)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, fields(x, key)...)
		}
	}
	return out
}

type datasourceRef struct{ UID, Type string }

// datasourceRefs returns every {"datasource":{"uid","type"}} of a dashboard.
func datasourceRefs(v any) []datasourceRef {
	var out []datasourceRef
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if ds, ok := x.(map[string]any); ok && k == "datasource" {
				uid, _ := ds["uid"].(string)
				typ, _ := ds["type"].(string)
				out = append(out, datasourceRef{uid, typ})
			}
			out = append(out, datasourceRefs(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, datasourceRefs(x)...)
		}
	}
	return out
}

// containsCredentials reports query parameters or userinfo that look like
// credentials.
func containsCredentials(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"password", "passwd", "token", "secret", "authorization", "apikey", "api_key"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// registeredMetrics returns the names of every metric the coordinator
// registers, from the collectors' descriptors.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	rec := &recorder{names: map[string]bool{}}
	metrics.New(rec, "dashboard-test", metrics.WithMemberSeries(1000))
	if len(rec.names) == 0 {
		t.Fatal("no metric registered")
	}
	return rec.names
}

// recorder is a Registerer that keeps the names of the descriptors of what
// is registered.
type recorder struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }
