package compare

import (
	"encoding/json"
	"io"

	"github.com/rtload/rtload/results"
)

// The JSON documents rtload prints with --format json (a check's is
// verdict.Report, schema verdict.Schema). Each carries its schema name
// and SchemaVersion; a version only grows when a field
// changes meaning or goes away (fields are only ever added within one).
const (
	// 3: a gate's metrics carry their change and its CI in "interval"
	// only (verdict.Metric; 2 had change_pct, ci_low_pct and ci_high_pct
	// beside it); rtload-report's fields are as in 2.
	SchemaVersion = 3
	// SchemaReport is RunReport: `rtload run` and `rtload report`.
	SchemaReport = "rtload-report"
	// SchemaCompare is Result: `rtload compare`.
	SchemaCompare = "rtload-compare"
)

// RunReport is one results directory as `rtload run --format json` and
// `rtload report --format json` print it: the summary (the contract,
// results.Summary, "version" 3) and what compare computes over that one
// run: per-column percentiles and every headline metric, each variant
// against the first with its 95% CI.
type RunReport struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Dir is the results directory; Saved is false when summary.json
	// could not be written in full (rtload run), SaveError says why.
	Dir       string `json:"dir"`
	Saved     bool   `json:"saved"`
	SaveError string `json:"save_error,omitempty"`
	// Error is why the run failed or stopped, when it did (rtload run).
	Error   string           `json:"error,omitempty"`
	Summary *results.Summary `json:"summary"`
	Columns []Column         `json:"columns"`
	Metrics []Metric         `json:"metrics"`
	Notes   []string         `json:"notes,omitempty"`
	// Interleaved are the paired changes of interleaved variants
	// (Result.Interleaved).
	Interleaved []Interleaved `json:"interleaved,omitempty"`
}

// NewRunReport describes run r (from compare/load, or built from a
// summary in memory) as a RunReport, Saved set.
func NewRunReport(r Run) (*RunReport, error) {
	res, err := Model([]Run{r}, Options{})
	if err != nil {
		return nil, err
	}
	return &RunReport{Schema: SchemaReport, Version: SchemaVersion, Dir: r.Dir, Saved: true, Summary: r.Summary,
		Columns: res.Columns, Metrics: res.Metrics, Notes: res.Notes, Interleaved: res.Interleaved}, nil
}

// WriteJSON writes v indented, the one layout of every --format json.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
