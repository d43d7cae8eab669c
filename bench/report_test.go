package bench

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintTables(t *testing.T) {
	r := &Report{Phases: []Phase{
		{Name: "ceiling/closed", Mode: "closed", Throughput: 100, Statuses: map[string]int64{"HTTP 200": 5}},
		{Name: "steady/open", Mode: "open", OfferedRate: 50, OtherCores: 0.6, Statuses: map[string]int64{"OK": 4, "RETRY": 1}},
	}}
	r.evaluate()
	var out bytes.Buffer
	r.PrintTables(&out)
	for _, want := range []string{"ceiling/closed", "HTTP 200=5", "OK=4 RETRY=1", "warning: other processes used up to 0.60 cores (steady/open)",
		"P1 ", "P3 ", "P4e", "P5c"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	r.Phases[1].OtherCores = 0.1
	out.Reset()
	r.PrintTables(&out)
	if strings.Contains(out.String(), "warning") {
		t.Errorf("warned without background load:\n%s", out.String())
	}
}
