// Package interleave holds the record bench/cmd/interleave writes with
// -json and bench/cmd/verdicts reads back (make bench-verdicts): the
// seed and A/A runs' paired changes, one definition for both commands.
package interleave

// Figures are the seed and A/A runs' figures (bench/cmd/interleave
// -json): what bench/cmd/verdicts reads back.
type Figures struct {
	// Seed is seed 000's recvmsg/recvfrom run (nil: -only left it out).
	Seed *Figure `json:"seed,omitempty"`
	// AA are the interleaved A/A runs, in order.
	AA []Figure `json:"aa,omitempty"`
}

// Figure is one run's paired change of its second variant against its
// first (stats.Paired over its ABBA block pairs).
type Figure struct {
	// Name is the run's directory under -keep; Command its rtload
	// command line (without --out).
	Name    string `json:"name"`
	Command string `json:"command"`
	// Pairs is the number of block pairs; ChangePct, LoPct, HiPct the
	// change and its 95% CI in % (absent: no interval); HalfWidthPct the
	// CI's half-width in %, HoldsOne whether it holds 0% (a ratio of 1).
	Pairs        int      `json:"pairs"`
	ChangePct    *float64 `json:"change_pct,omitempty"`
	LoPct        *float64 `json:"ci_low_pct,omitempty"`
	HiPct        *float64 `json:"ci_high_pct,omitempty"`
	HalfWidthPct *float64 `json:"half_width_pct,omitempty"`
	HoldsOne     bool     `json:"holds_one"`
	Method       string   `json:"method"`
	// WindowNs is the measured window of the interleaved trial (every
	// variant's blocks); WallNs the whole run's wall time (summary.json
	// start to end: setup, warm-up and write-out included).
	WindowNs int64 `json:"window_ns"`
	WallNs   int64 `json:"wall_ns"`
	// Marks are the run's trial marks ("traffic", "invalid").
	Marks string `json:"marks,omitempty"`
}
