package view

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/report"
)

// writeMetadata prints the Metadata table: one row per fact that differs,
// one column per rtload run.
func writeMetadata(r *compare.Result, b *strings.Builder) {
	if len(r.Metadata) == 0 {
		return
	}
	var labels []string
	for _, ri := range r.Runs {
		if !ri.Foreign {
			labels = append(labels, ri.Label)
		}
	}
	b.WriteString("\nmetadata that differs between the runs (mmtests-style; every other fact is the same):\n")
	rows := [][]string{append([]string{""}, labels...)}
	for _, d := range r.Metadata {
		rows = append(rows, append([]string{d.Field}, d.Values...))
	}
	for i := range rows {
		rows[i][0] = "  " + rows[i][0]
	}
	report.Aligned(b, rows, nil)
}

// inMetadata reports whether the metadata table shows field (a
// Differences field): a row of that name, or for "cmdline" a row of one
// of its parameters.
func inMetadata(r *compare.Result, field string) bool {
	for _, d := range r.Metadata {
		if d.Field == field || (field == "cmdline" && strings.HasPrefix(d.Field, "cmdline ")) {
			return true
		}
	}
	return false
}

// splitWarnings returns the warnings and infos the metadata table does not
// show, and a line naming the warned fields it does ("" when none).
func splitWarnings(r *compare.Result) (warnings, info []compare.Difference, line string) {
	var shown []string
	for _, d := range r.Warnings {
		if inMetadata(r, d.Field) {
			shown = append(shown, d.Field)
		} else {
			warnings = append(warnings, d)
		}
	}
	for _, d := range r.Info {
		if !inMetadata(r, d.Field) {
			info = append(info, d)
		}
	}
	if len(shown) > 0 {
		line = fmt.Sprintf("WARNING: runs differ in %s (above): not the same machine setup, compare with care\n", strings.Join(shown, ", "))
	}
	return warnings, info, line
}
