package report

import (
	"fmt"
	"strings"

	"github.com/rtload/rtload/results"
)

// writeProfiled says what a profiled run's profiled trials cost and
// where their profiles are: per (variant, reader), the per-call p50 in
// the profiled trials against the timed ones (results.ProfilerCosts),
// then the profile files. Nothing for a run without profiled trials.
func writeProfiled(b *strings.Builder, s *results.Summary) {
	if len(s.ProfiledTrials) == 0 {
		return
	}
	unit := s.Clock.TickUnit()
	fmt.Fprintf(b, "\nprofiled trials: %d, kept out of the tables above; the profiler's cost, per-call p50 (%s) timed vs profiled:\n", len(s.ProfiledTrials), unit)
	per := results.PerReader(s)
	for _, c := range results.ProfilerCosts(s) {
		label := c.Variant
		if per {
			label += "/" + c.Reader
		}
		fmt.Fprintf(b, "  %s: %.0f vs %.0f (%+.1f%%)\n", label, c.Timed.Ticks(results.P50), c.Profiled.Ticks(results.P50), 100*c.P50Change())
	}
	var files []string
	for _, p := range s.Profiles {
		if p.Pprof != "" {
			files = append(files, p.Pprof)
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(b, "profiles: %s (rtload explain DIR says where in the kernel the time goes)\n", strings.Join(files, ", "))
	}
}
