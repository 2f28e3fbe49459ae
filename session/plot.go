package session

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/plot"
)

// PlotDoc is the image rtload plot wrote (--format json: schema
// rtload-plot).
type PlotDoc struct {
	Schema  string   `json:"schema"`
	Version int      `json:"version"`
	File    string   `json:"file"`
	Columns []string `json:"columns"`
}

// Plot draws the results directories dirs (labels, when given, naming
// their columns) into the image o.Out. A directory that is not a
// readable results directory is bad input (UsageError), as for compare.
func Plot(dirs, labels []string, o plot.Options) (*PlotDoc, error) {
	cols, err := plot.Load(dirs, labels)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	if err := plot.Render(cols, o); err != nil {
		return nil, err
	}
	doc := &PlotDoc{Schema: SchemaPlot, Version: SchemaVersion, File: o.Out, Columns: make([]string, len(cols))}
	for i, c := range cols {
		doc.Columns[i] = c.Label
	}
	return doc, nil
}

// Wrote is the line that names the image written (plot prints it on
// stderr), escaped for a terminal.
func (d *PlotDoc) Wrote() string {
	noun := "columns"
	if len(d.Columns) == 1 {
		noun = "column"
	}
	return fmt.Sprintf("plot: wrote %s (%s, %d %s: %s)", termsafe.Escape(d.File),
		strings.TrimPrefix(strings.ToLower(filepath.Ext(d.File)), "."), len(d.Columns), noun, termsafe.Escape(strings.Join(d.Columns, ", ")))
}
