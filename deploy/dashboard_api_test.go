package deploy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Every coordinator API path a dashboard panel or variable calls is routed
// and answers Grafana rows (a non-empty JSON array) for the stream and
// group of startCoordinator's flow, without Redis.
func TestDashboardAPIPathsAnswerRows(t *testing.T) {
	c := startCoordinator(t)
	vars := strings.NewReplacer("$stream", "orders", "$group", "billing")
	calls := 0
	for file, d := range dashboards(t) {
		for _, u := range fields(d, "url") {
			if !strings.HasPrefix(u, "/coord/v1/") {
				continue
			}
			calls++
			resp, err := http.Get(c.url + vars.Replace(u))
			if err != nil {
				t.Fatal(err)
			}
			var rows []map[string]any
			err = json.NewDecoder(resp.Body).Decode(&rows)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || err != nil || len(rows) == 0 {
				t.Errorf("%s: GET %s: %d, %d rows (%v)", file, u, resp.StatusCode, len(rows), err)
			}
		}
	}
	if calls == 0 {
		t.Fatal("no dashboard calls the coordinator API")
	}
}
