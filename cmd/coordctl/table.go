package main

import (
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
