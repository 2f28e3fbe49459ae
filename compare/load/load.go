package load

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// Runs reads the Summary of every results directory in dirs (see
// report.ReadSummary) and checks its per-wakeup logs (streamed; see
// compare.Run.WakeupLogs); a sessions directory (store.IsSessions) is read as
// one run pooling its sessions (sessions.go). labels names the runs; empty means the base name of
// each directory. Labels must be as many as dirs, non-empty, unique, and
// free of "/" (which splits a table header).
func Runs(dirs, labels []string) ([]compare.Run, error) {
	if len(dirs) == 0 {
		return nil, errors.New("compare: no results directories")
	}
	if len(labels) == 0 {
		labels = defaultLabels(dirs)
	}
	if err := CheckLabels(dirs, labels); err != nil {
		return nil, err
	}
	runs := make([]compare.Run, len(dirs))
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
			runs[i] = compare.Run{Label: labels[i], Dir: d, Summary: s, WakeupLogs: map[compare.ReaderIndex]wakelog.ReadStats{}, Foreign: true,
				Notes: []string{"wakeup latency only, read from " + filepath.Base(d) + " (no scenario, environment or per-call data)"}}
			continue
		}
		s, err := store.ReadSummary(d)
		if err != nil {
			return nil, fmt.Errorf("compare %s: %w", labels[i], err)
		}
		runs[i] = compare.Run{Label: labels[i], Dir: d, Summary: s, WakeupLogs: map[compare.ReaderIndex]wakelog.ReadStats{}}
		loadProfiles(&runs[i])
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
				runs[i].WakeupLogs[compare.ReaderIndex{Trial: ti, Reader: ri}] = st
				if st.Torn != "" { // its last row not read: said, never silent
					runs[i].Notes = append(runs[i].Notes, "wakeup log: "+st.Torn)
				}
			}
		}
	}
	return runs, nil
}

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
