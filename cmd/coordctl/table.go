package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// tableWriter writes aligned columns separated by two spaces.
type tableWriter struct{ w *tabwriter.Writer }

func newTable(out io.Writer) *tableWriter {
	return &tableWriter{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
}

// row writes one row; values are formatted with fmt.Sprint, tabs and line
// breaks inside them replaced by spaces.
func (t *tableWriter) row(values ...any) {
	cells := make([]string, len(values))
	for i, v := range values {
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(fmt.Sprint(v))
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *tableWriter) flush() error { return t.w.Flush() }

// print writes v as indented JSON (-o json) or through table.
func (c *call) print(v any, table func(*tableWriter)) error {
	if c.output == "json" {
		enc := json.NewEncoder(c.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := newTable(c.out)
	table(tw)
	return tw.flush()
}

// optional renders a nullable value, "-" for null.
func optional[T any](v *T) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
