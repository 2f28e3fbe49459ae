package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rtload/rtload/results"
)

// The JSON documents rtload prints with --format json. Each carries its
// schema name and SchemaVersion; a version only grows when a field
// changes meaning or goes away (fields are only ever added within one).
const (
	SchemaVersion = 2
	// SchemaReport is RunReport: `rtload run` and `rtload report`.
	SchemaReport = "rtload-report"
	// SchemaCheck is CheckReport: `rtload check`.
	SchemaCheck = "rtload-check"
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

// NewRunReport describes run r (from Load, or built from a summary in
// memory) as a RunReport, Saved set.
func NewRunReport(r Run) (*RunReport, error) {
	res, err := Compare([]Run{r})
	if err != nil {
		return nil, err
	}
	return &RunReport{Schema: SchemaReport, Version: SchemaVersion, Dir: r.Dir, Saved: true, Summary: r.Summary,
		Columns: res.Columns, Metrics: res.Metrics, Notes: res.Notes, Interleaved: res.Interleaved}, nil
}

// CheckReport is `rtload check --format json`: the gate's verdict and
// the comparison it judged.
type CheckReport struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Verdict is GateNotSlower, GateSlower, GateUndecided or
	// GateCannotJudge; ExitCode the code rtload exits with (0, 1, 125; 130
	// when interrupted).
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exit_code"`
	// Baseline is the baseline's results directory, Results the new run's
	// ("" when it measured nothing); Error why the run could not judge
	// (it failed, or lacked a privilege), "" otherwise.
	Baseline string `json:"baseline"`
	Results  string `json:"results,omitempty"`
	// ResultsRemoved says Results was a temporary directory, removed once
	// the verdict was printed (check --keep or --out keeps it).
	ResultsRemoved bool   `json:"results_removed,omitempty"`
	Error          string `json:"error,omitempty"`
	Gate           Gate   `json:"gate"`
	// Compare is the comparison of baseline and new run; nil when there
	// was nothing to compare.
	Compare *Result `json:"compare,omitempty"`
	// Sequential is how the check added processes and when it stopped
	// (check --budget); nil when it ran none.
	Sequential *Sequential `json:"sequential,omitempty"`
}

// Sequential is a check's sequential sampling (stats.Stop with Pocock's
// boundary): the candidate took one fresh process after another and the
// verdict was looked at after the processes LookProcesses lists, each
// look's intervals at Level, until it was decided, the budget was spent,
// or the last look.
type Sequential struct {
	BudgetNs int64 `json:"budget_ns"`
	// MaxLooks is the looks planned (after the first process timed the
	// rest) and LookProcesses the candidate processes each planned look
	// falls at; Looks the looks made, at Processes candidate processes.
	MaxLooks      int   `json:"max_looks"`
	LookProcesses []int `json:"look_processes"`
	Looks         int   `json:"looks"`
	Processes     int   `json:"processes"`
	// BaselineProcesses is the baseline's process count (the side that
	// cannot grow).
	BaselineProcesses int `json:"baseline_processes"`
	// Metrics is how many metrics each look judged and Level the
	// per-metric confidence level of each look's intervals (Pocock over
	// MaxLooks at 5%/Metrics).
	Metrics int     `json:"metrics"`
	Level   float64 `json:"level"`
	// Stop is why it stopped: decided, budget spent, last look, cannot
	// judge, or the run's end.
	Stop      string `json:"stop"`
	ElapsedNs int64  `json:"elapsed_ns"`
}

// WriteJSON writes v indented, the one layout of every --format json.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Short says in a few words how a check sampled and why it stopped, for
// its closing block (Line says it all).
func (q Sequential) Short() string {
	procs := func(n int) string {
		if n == 1 {
			return "1 process"
		}
		return fmt.Sprintf("%d processes", n)
	}
	return fmt.Sprintf("sampled: %s against %s of the baseline, look %d of %d (Pocock, %.2f%% per metric); stopped: %s after %v of the %v budget",
		procs(q.Processes), procs(q.BaselineProcesses), q.Looks, q.MaxLooks, q.Level*100, q.Stop,
		time.Duration(q.ElapsedNs).Round(time.Second), time.Duration(q.BudgetNs))
}

// Line says in one line how a check sampled and why it stopped.
func (q Sequential) Line() string {
	return fmt.Sprintf("check: n = %d candidate processes against %d baseline processes; look %d of %d planned at %v processes "+
		"(Pocock repeated CIs: each look at %.2f%% per metric over %d metrics, so that stopping at the first decided look keeps the false-alarm rate at 5%%); "+
		"stopped: %s after %v of the %v budget",
		q.Processes, q.BaselineProcesses, q.Looks, q.MaxLooks, q.LookProcesses, q.Level*100, q.Metrics,
		q.Stop, time.Duration(q.ElapsedNs).Round(time.Second), time.Duration(q.BudgetNs))
}
