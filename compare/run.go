package compare

import (
	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
)

// Run is one results directory under the label that names its columns
// ("unhard", "hard").
type Run struct {
	Label string
	// Dir is the results directory (or summary.json) it was read from.
	Dir     string
	Summary *results.Summary
	// WakeupLogs says what was read of each reader's per-wakeup log (the
	// files summary.json lists for it, streamed by
	// wakelog.EachReaderWakeup: checked row by row, none held), keyed by
	// the reader's position in Summary. Missing logs are simply absent.
	// No verdict uses the rows (calls and wakeups are not samples).
	WakeupLogs map[ReaderIndex]wakelog.ReadStats
	// Notes says which logs could not be read, and why.
	Notes []string
	// Unread says which of the run's files (wakeup logs, profiles) were
	// not read, and why: each is in Notes too. A fleet's controller marks
	// the host whose files are here (deploy/ansible).
	Unread []string
	// Foreign marks a run read from another tool's histogram file
	// (cyclictest -h text, an HdrHistogram log): wakeup latency only, no
	// scenario, environment or clock to compare.
	Foreign bool
	// Profiles are the run's variant profiles read back (compare/load).
	Profiles []explain.ProfiledVariant
	// Sessions are the sessions of a run read from a sessions directory
	// (compare/load), in order; nil for a results directory.
	Sessions []Session
}

// ReaderIndex is a reader's position in a Summary: Trials[Trial].Readers[Reader].
type ReaderIndex struct{ Trial, Reader int }
