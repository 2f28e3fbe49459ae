package compare

// ProfileDiff is one variant's kernel profile in one run against the same
// variant in the first run that profiled it (two kernels, two builds):
// the per-call drain cost difference attributed to the kernel functions
// that carry it, as `rtload explain` attributes one variant against
// another.
type ProfileDiff struct {
	Variant string `json:"variant"`
	// Run and Baseline are the run labels: Run − Baseline.
	Run      string `json:"run"`
	Baseline string `json:"baseline"`
	// CallNs and BaselineCallNs are the measured drain ns per call of the
	// profiled trials; TotalNs their difference.
	CallNs         float64 `json:"call_ns"`
	BaselineCallNs float64 `json:"baseline_call_ns"`
	TotalNs        float64 `json:"total_ns"`
	// Explained is the share of TotalNs the seats account for;
	// Unexplained says why the profile cannot explain it, "" when it does.
	Explained   float64 `json:"explained"`
	Unexplained string  `json:"unexplained,omitempty"`
	// Seats are where the difference sits; Funcs the kernel functions
	// whose drain cost differs most (entry-path functions left out).
	Seats []ProfileSeat `json:"seats"`
	Funcs []ProfileFunc `json:"funcs"`
	// Text is profile.Attribution.Text and the function list, as printed.
	Text string `json:"text"`
	// Err says why there is no attribution (a profile not read, no calls).
	Err string `json:"error,omitempty"`
}

// ProfileSeat is one seat of a ProfileDiff: own work (only one side does
// it) or the shared path at a different cost.
type ProfileSeat struct {
	Func string   `json:"func"`
	Kind string   `json:"kind"`
	Path []string `json:"path"`
	ProfileFunc
}

// ProfileFunc is one function's difference in ns per call, with its 95%
// interval and the samples on each side (Run, Baseline).
type ProfileFunc struct {
	Func            string  `json:"func,omitempty"`
	DiffNs          float64 `json:"diff_ns_per_call"`
	LowNs           float64 `json:"ci_low_ns"`
	HighNs          float64 `json:"ci_high_ns"`
	Samples         uint64  `json:"samples"`
	BaselineSamples uint64  `json:"baseline_samples"`
}
