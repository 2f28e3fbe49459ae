package compare

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
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
	// Profiles are the run's variant profiles read back (profile.go).
	Profiles []explain.ProfiledVariant
	// Sessions are the sessions of a run read from a sessions directory
	// (sessions.go), in order; nil for a results directory.
	Sessions []Session
}

// Load reads the Summary of every results directory in dirs (see
// report.ReadSummary) and checks its per-wakeup logs (streamed; see
// Run.WakeupLogs); a sessions directory (store.IsSessions) is read as
// one run pooling its sessions (sessions.go). labels names the runs; empty means the base name of
// each directory. Labels must be as many as dirs, non-empty, unique, and
// free of "/" (which splits a table header).
func Load(dirs, labels []string) ([]Run, error) {
	if len(dirs) == 0 {
		return nil, errors.New("compare: no results directories")
	}
	if len(labels) == 0 {
		labels = defaultLabels(dirs)
	}
	if err := CheckLabels(dirs, labels); err != nil {
		return nil, err
	}
	runs := make([]Run, len(dirs))
	rows := wakelog.NewRowBudget()
	for i, d := range dirs {
		if store.IsSessions(d) {
			r, err := loadSessions(d, labels[i], rows)
			if err != nil {
				return nil, fmt.Errorf("compare %s: %w", labels[i], err)
			}
			runs[i] = r
			continue
		}
		if s, ok, err := readForeign(d); ok {
			if err != nil {
				return nil, fmt.Errorf("compare %s: %w", labels[i], err)
			}
			runs[i] = Run{Label: labels[i], Dir: d, Summary: s, WakeupLogs: map[ReaderIndex]wakelog.ReadStats{}, Foreign: true,
				Notes: []string{"wakeup latency only, read from " + filepath.Base(d) + " (no scenario, environment or per-call data)"}}
			continue
		}
		s, err := store.ReadSummary(d)
		if err != nil {
			return nil, fmt.Errorf("compare %s: %w", labels[i], err)
		}
		runs[i] = Run{Label: labels[i], Dir: d, Summary: s, WakeupLogs: map[ReaderIndex]wakelog.ReadStats{}}
		runs[i].loadProfiles()
		base := d
		if !safeio.IsDir(d) {
			base = filepath.Dir(d)
		}
		for ti, t := range s.Trials {
			for ri, rd := range t.Readers {
				if len(rd.WakeupLog) == 0 {
					continue
				}
				st, err := rows.EachReaderWakeup(base, rd, func(record.Wakeup) {})
				if err != nil {
					runs[i].Notes = append(runs[i].Notes, err.Error())
					runs[i].Unread = append(runs[i].Unread, err.Error())
					continue
				}
				runs[i].WakeupLogs[ReaderIndex{ti, ri}] = st
			}
		}
	}
	return runs, nil
}

// ReaderIndex is a reader's position in a Summary: Trials[Trial].Readers[Reader].
type ReaderIndex struct{ Trial, Reader int }

// CheckLabels reports why labels cannot name the runs in dirs, or nil.
func CheckLabels(dirs, labels []string) error {
	if len(labels) != len(dirs) {
		return fmt.Errorf("compare: %d labels for %d results directories (give one --label per directory, comma-separated)", len(labels), len(dirs))
	}
	seen := map[string]bool{}
	for _, l := range labels {
		switch {
		case strings.TrimSpace(l) == "":
			return errors.New("compare: empty label")
		case strings.Contains(l, "/"):
			return fmt.Errorf("compare: label %q contains \"/\"", l)
		case seen[l]:
			return fmt.Errorf("compare: label %q given twice", l)
		}
		seen[l] = true
	}
	return nil
}

// defaultLabels names runs after their directories, or "run1", "run2", …
// when two base names clash.
func defaultLabels(dirs []string) []string {
	out := make([]string, len(dirs))
	seen := map[string]bool{}
	clash := false
	for i, d := range dirs {
		b := filepath.Base(filepath.Clean(d))
		if b == results.SummaryFile {
			b = filepath.Base(filepath.Dir(filepath.Clean(d)))
		}
		b = strings.ReplaceAll(b, "/", "_")
		if b == "" || b == "." || seen[b] {
			clash = true
		}
		seen[b] = true
		out[i] = b
	}
	if clash {
		for i := range out {
			out[i] = fmt.Sprintf("run%d", i+1)
		}
	}
	return out
}
