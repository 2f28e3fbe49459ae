package verdict

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rtload/rtload/results"
)

// A process the machine disturbed (a judged trial mark of the machine's:
// results.Trial.Cause) is left out of the verdict; in a check's new run a
// fresh process runs in its place, within the budget. One the workload
// disturbed itself is never left out: a fresh process would repeat it,
// and leaving it out would hide a change that follows the code under test
// (Unjudgeable names it, and the run cannot be judged).
//
// Leaving processes out is a selection, and a selection can bias: if what
// disturbs a process also slows the ones it spares (a busy machine trips
// a mark in some processes and slows the others without one), the clean
// processes are not the machine's average. So at most a third of a side's
// processes may be left out (one always may, when another remains): past
// that the verdict would rest on what the disturbance chose rather than
// on the run, and the side cannot be judged. The same rule holds for the
// baseline, which is judged on its clean processes: at least two thirds
// of them, and at least one.

// Dropped is how one side of a check dealt with its disturbed processes
// (Report.Replaced, Report.BaselineDropped).
type Dropped struct {
	// Processes is how many processes the side ran (the new run's,
	// replaced ones included), MaxDropped the most that may be left out of
	// them (maxDropped).
	Processes  int `json:"processes"`
	MaxDropped int `json:"max_dropped"`
	// Disturbed are the processes the machine disturbed, left out of the
	// verdict, each with why; in the new run a fresh process ran in the
	// place of each.
	Disturbed []results.Disturbance `json:"disturbed"`
	// TooMany says more were disturbed than may be left out: the side
	// cannot be judged.
	TooMany bool `json:"too_many,omitempty"`
}

// maxDropped is the most of n processes a side may leave out: a third,
// rounded down, and always one (when every process was left out the side
// has nothing to judge: Reason).
func maxDropped(n int) int { return max(n/3, 1) }

// dropDisturbed is s without the processes the machine disturbed, and
// how (d: nil when none was). ran is how many processes s ran.
func dropDisturbed(s *results.Summary, ran int) (*results.Summary, *Dropped) {
	var d *Dropped
	var procs []int
	for _, x := range s.Disturbances() {
		if x.Cause != results.CauseMachine {
			continue
		}
		if d == nil {
			d = &Dropped{Processes: ran, MaxDropped: maxDropped(ran)}
		}
		d.Disturbed = append(d.Disturbed, x)
		procs = append(procs, x.Process)
	}
	if d == nil {
		return s, nil
	}
	d.TooMany = len(procs) > d.MaxDropped
	return s.WithoutProcesses(procs), d
}

// whys are the distinct reasons of d's disturbed processes, the first
// few, "; "-joined.
func (d *Dropped) whys() string {
	const most = 3
	var out []string
	for _, x := range d.Disturbed {
		if len(out) == most {
			out = append(out, "…")
			break
		}
		if !slices.Contains(out, x.Why) {
			out = append(out, x.Why)
		}
	}
	return strings.Join(out, "; ")
}

// Reason is why side label cannot be judged for d, "" when it can: too
// many processes disturbed ("new: 4 of 6 processes disturbed: …; at most
// 2 of 6 may be left out"), or, when the side is final (a baseline, a
// run that ended: no fresh process will come), every one.
func (d *Dropped) Reason(label string, final bool) string {
	switch {
	case d == nil:
		return ""
	case d.TooMany:
		return fmt.Sprintf("%s: %d of %d processes disturbed by the machine: %s; at most %d of %d may be left out (a third: past that the verdict would rest on what the disturbance chose)",
			label, len(d.Disturbed), d.Processes, d.whys(), d.MaxDropped, d.Processes)
	case final && len(d.Disturbed) >= d.Processes:
		return fmt.Sprintf("%s: every process disturbed by the machine (%d of %d): %s", label, len(d.Disturbed), d.Processes, d.whys())
	}
	return ""
}

// judged reports whether d's side was judged on its clean processes: d
// is not nil, not too many were disturbed, and one was not.
func (d *Dropped) judged() bool {
	return d != nil && !d.TooMany && len(d.Disturbed) < d.Processes
}

// Line says in one line what a side left out: "replaced 1 of 6
// processes (at most 2: a third): reader rt off CPU 1 for 66ms (starved)"
// for the new run,
// "baseline: judged on 9 of 10 processes: left out 1 disturbed by the
// machine: …" for the baseline.
func (d *Dropped) Line(baseline bool) string {
	if baseline {
		return fmt.Sprintf("baseline: judged on %d of %d processes: left out %d disturbed by the machine: %s",
			d.Processes-len(d.Disturbed), d.Processes, len(d.Disturbed), d.whys())
	}
	return fmt.Sprintf("replaced %d of %d processes (at most %d: a third): %s", len(d.Disturbed), d.Processes, d.MaxDropped, d.whys())
}

// Replacer is engine.Options.Replacements for `rtload run --processes
// planned`: a fresh process in the place of each the machine disturbed,
// at most maxDropped(planned) of them (a check against the run leaves
// them out, and would leave out no more: replace.go), each said on log
// as it is found ("process 3 disturbed by the machine (…): a fresh
// process runs in its place (1 of at most 3)"), and the rest said not
// replaced.
func Replacer(planned int, log io.Writer) func(*results.Summary) int {
	said := map[int]bool{}
	return func(s *results.Summary) int {
		most, k := maxDropped(planned), 0
		for _, d := range s.Disturbances() {
			if d.Cause != results.CauseMachine {
				continue
			}
			k++
			if said[d.Process] {
				continue
			}
			said[d.Process] = true
			if k <= most {
				fmt.Fprintf(log, "process %d disturbed by the machine (%s): a fresh process runs in its place (%d of at most %d)\n", d.Process+1, d.Why, k, most)
			} else {
				fmt.Fprintf(log, "process %d disturbed by the machine (%s): not replaced: at most %d of %d may be (a third)\n", d.Process+1, d.Why, most, planned)
			}
		}
		return min(k, most)
	}
}

// RunDropped is what a check would leave out of run s as a baseline: its
// processes the machine disturbed (nil when none was).
func RunDropped(s *results.Summary) *Dropped {
	_, d := dropDisturbed(s, s.ProcessCount())
	return d
}

// RunLine says in one line what a check will leave out of a run of
// several processes: "disturbed by the machine: 1 of 11 processes, which
// a check leaves out (run ran a fresh one in the place of each, at most
// a third): reader rt off CPU 1 for 66ms (starved)".
func (d *Dropped) RunLine() string {
	return fmt.Sprintf("disturbed by the machine: %d of %d processes, which a check leaves out (run ran a fresh one in the place of each, at most a third): %s",
		len(d.Disturbed), d.Processes, d.whys())
}
