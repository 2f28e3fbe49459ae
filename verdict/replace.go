package verdict

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
)

// A process the machine disturbed (a judged trial mark of the machine's:
// markCause) is left out of the verdict; in a check's new run a
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
	Disturbed []Disturbance `json:"disturbed"`
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
	for _, x := range disturbances(s) {
		if x.Cause != CauseMachine {
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
	return withoutProcesses(s, procs), d
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
		return d.LineOf("baseline")
	}
	return fmt.Sprintf("replaced %d of %d processes (at most %d: a third): %s", len(d.Disturbed), d.Processes, d.MaxDropped, d.whys())
}

// LineOf says in one line what run label, which ended, left out:
// "hard: judged on 12 of 13 processes: left out 1 disturbed by the
// machine: …".
func (d *Dropped) LineOf(label string) string {
	return fmt.Sprintf("%s: judged on %d of %d processes: left out %d disturbed by the machine: %s",
		label, d.Processes-len(d.Disturbed), d.Processes, len(d.Disturbed), d.whys())
}

// processes are the processes d left out.
func (d *Dropped) processes() []int {
	out := make([]int, len(d.Disturbed))
	for i, x := range d.Disturbed {
		out[i] = x.Process
	}
	return out
}

// GateRuns is runs as a gate judges them (`rtload compare --fail-on`):
// each run less the processes the machine disturbed, as a check judges
// its baseline (each run ended: no fresh process will come, so the third
// rule holds with final set), with what each left out (LeftOut, one per
// run that had any) and why a run cannot be judged for it ("hard: 5 of
// 13 processes disturbed by the machine: …"). The processes a run of
// --processes replaced are the ones it said "a check leaves out". runs
// is not changed.
func GateRuns(runs []compare.Run) (out []compare.Run, left []LeftOut, reasons []string) {
	out = make([]compare.Run, len(runs))
	for i, r := range runs {
		out[i] = r
		if r.Summary == nil || r.Foreign {
			continue
		}
		clean, d := dropDisturbed(r.Summary, r.Summary.ProcessCount())
		if d == nil {
			continue
		}
		if why := d.Reason(r.Label, true); why != "" {
			// Kept whole: Unjudgeable names its marks. Too many is said
			// too; "every process" (one of one) would only repeat them.
			if d.TooMany {
				reasons = append(reasons, why)
			}
			continue
		}
		out[i].Summary = clean
		left = append(left, LeftOut{Label: r.Label, Dropped: d})
	}
	return out, left, reasons
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
		for _, d := range disturbances(s) {
			if d.Cause != CauseMachine {
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

// RunLine says in one line how many processes a run of several ran,
// which of them a check leaves out and why, and that the run's own
// figures (its report: the table, the headline statistics, the
// intervals) are over all of them, those included: "6 processes ran, 1
// left out by a check (disturbed by the machine: process 2: reader rt
// off CPU 1 for 176ms (starved)): the figures of this report are over
// all 6; a check judges the other 5 (a fresh process ran in the place of
// each, at most a third)". Past a third, a check cannot judge the run:
// it says so instead. Processes are numbered from 1, as the text does.
func (d *Dropped) RunLine() string {
	n, k := d.Processes, len(d.Disturbed)
	if d.TooMany {
		return fmt.Sprintf("%d processes ran, %d disturbed by the machine (%s): more than a check may leave out (at most %d, a third): a check cannot judge this run; the figures of this report are over all %d",
			n, k, d.which(), d.MaxDropped, n)
	}
	return fmt.Sprintf("%d processes ran, %d left out by a check (disturbed by the machine: %s): the figures of this report are over all %d; a check judges the other %d (a fresh process ran in the place of each, at most a third)",
		n, k, d.which(), n, n-k)
}

// which names d's disturbed processes, numbered from 1, with why:
// "process 2: reader rt off CPU 1 for 176ms (starved)", "processes 2, 5:
// …" (whys).
func (d *Dropped) which() string {
	nums := make([]string, len(d.Disturbed))
	for i, x := range d.Disturbed {
		nums[i] = strconv.Itoa(x.Process + 1)
	}
	word := "process "
	if len(nums) > 1 {
		word = "processes "
	}
	return word + strings.Join(nums, ", ") + ": " + d.whys()
}

// Whose a trial's mark is. A verdict drops a process the machine
// disturbed and judges a fresh one in its place (rtload check, run
// --processes); it never drops one the workload disturbed itself, since a
// fresh process would repeat it and dropping it would hide a change that
// follows the code under test (B makes the reader overrun until RT
// throttling stops it: the starvation is B's, and so is every spike it
// causes).

// Cause says whose a judged trial mark is (markCause).
type Cause string

// Causes of a mark.
const (
	// CauseMachine: something outside the run asked for disturbed the
	// trial, which a fresh process does not inherit: a thread at or above
	// the reader's priority on its CPU (starving it, or sharing it:
	// results.MarkShared, another rtload's reader too), RT throttling the reader
	// did not bring on itself, the hypervisor's steal, a clocksource or
	// TSC change of the kernel, rtload's own garbage collection.
	CauseMachine Cause = "machine"
	// CauseWorkload: the run asked for brought it on itself: a reader that
	// kept itself off its CPU by its own work (SelfBusyShare,
	// SelfOverrunShare), a sender that missed its rate or lag without being
	// kept off its CPU, a reader's seccomp filter not installed as asked,
	// a reader that measured nothing without a machine's starvation to
	// explain it.
	CauseWorkload Cause = "workload"
)

// Shares of a reader's own work past which its starvation (and RT
// throttling in its trial) is its own, not the machine's: RT throttling
// caps the real-time threads of a CPU together (950 ms of every 1 s by
// default), so a reader that ran half its window or more, or overran one
// tick in ten, made much of what was throttled. The reader of seed 000
// runs about a tenth of each 10 ms tick; a hog of 200 ms on its CPU costs
// it one overrun and 20 missed ticks, far below either share. Task-clock
// counts the reader's warm-up and tail too, so its share of the window
// errs toward the workload's (never replaced).
const (
	SelfBusyShare    = 0.5
	SelfOverrunShare = 0.1
)

// markCause says whose mark m (one of t's judged marks) is, and why in a few
// words ("reader rt ran 97% of its window itself").
func markCause(t *results.Trial, m results.Mark, noise []rtNoise) (Cause, string) {
	switch m.Kind {
	case results.MarkStarved:
		if why := selfBusy(t, m.Reader); why != "" {
			return CauseWorkload, why
		}
		if why := starvedByOwn(t, m.Reader); why != "" {
			return CauseWorkload, why
		}
		if why := starvedByNoise(t, m.Reader, noise); why != "" {
			return CauseWorkload, why
		}
		return CauseMachine, "kept off its CPU by another thread or RT throttling"
	case results.MarkEmpty:
		for _, s := range t.Marks {
			if s.Kind == results.MarkStarved && s.Reader == m.Reader {
				if c, why := markCause(t, s, noise); c == CauseMachine {
					return c, "measured nothing: " + why
				}
			}
		}
		return CauseWorkload, "reader " + m.Reader + " measured nothing without a machine's starvation to explain it"
	case results.MarkInvalid:
		if m.Reader != "" {
			return CauseWorkload, "a setting of reader " + m.Reader + " not as asked, in every process alike"
		}
		if t.Kernel != nil && slices.ContainsFunc(t.Kernel.Events, func(e results.KernelEvent) bool { return e.Kind == results.RTThrottled }) {
			for _, r := range t.Readers {
				if why := selfBusy(t, r.Name); why != "" {
					return CauseWorkload, "RT throttling with " + why
				}
			}
		}
		return CauseMachine, "the kernel or rtload's own garbage collection changed what the trial measured"
	case results.MarkShared:
		// Another process's thread (another rtload's reader, a thread at
		// or above the reader's priority) on the reader's CPU: never the
		// run's own.
		return CauseMachine, "another process's thread on reader " + m.Reader + "'s CPU"
	case results.MarkTraffic:
		for _, tf := range t.Traffic {
			if tf.Endpoint != m.Endpoint {
				continue
			}
			if tf.Starved != "" {
				return CauseMachine, "sender " + tf.Endpoint + " kept off its CPU"
			}
			if tf.Applied != nil && stolen(t, tf.Applied.CPUs) {
				return CauseMachine, "the hypervisor took sender " + tf.Endpoint + "'s CPU"
			}
		}
		return CauseWorkload, "sender " + m.Endpoint + " missed its rate or lag without being kept off its CPU"
	}
	return CauseWorkload, "not a judged mark"
}

// selfBusy says how reader name kept itself busy enough to be starved by
// its own work (SelfBusyShare, SelfOverrunShare), "" when it did not (or
// is not in t).
func selfBusy(t *results.Trial, name string) string {
	i := slices.IndexFunc(t.Readers, func(r results.Reader) bool { return r.Name == name })
	if i < 0 {
		return ""
	}
	r := &t.Readers[i]
	if run, ok := r.Counter("task-clock"); ok && t.DurationNs > 0 && float64(run) >= SelfBusyShare*float64(t.DurationNs) {
		return fmt.Sprintf("reader %s ran %.0f%% of its window itself", name, 100*float64(run)/float64(t.DurationNs))
	}
	if r.Wakeups > 0 && float64(r.Overruns) >= SelfOverrunShare*float64(r.Wakeups) {
		return fmt.Sprintf("reader %s overran %d of its %d ticks", name, r.Overruns, r.Wakeups)
	}
	return ""
}

// starvedByOwn says which of the trial's own readers kept reader name off
// its CPU, "" if none did: another reader of the same run, real-time at
// the same or a higher priority, sharing a CPU with it, and busy itself
// (selfBusy). A fresh process would repeat that: the workload's.
func starvedByOwn(t *results.Trial, name string) string {
	i := slices.IndexFunc(t.Readers, func(r results.Reader) bool { return r.Name == name })
	if i < 0 {
		return ""
	}
	r := &t.Readers[i]
	for j := range t.Readers {
		o := &t.Readers[j]
		if j == i || !o.Applied.RealTime() || o.Applied.Priority < r.Applied.Priority ||
			!slices.ContainsFunc(o.Applied.CPUs, func(c int) bool { return slices.Contains(r.Applied.CPUs, c) }) {
			continue
		}
		if why := selfBusy(t, o.Name); why != "" {
			return fmt.Sprintf("reader %s kept off its CPU by its own run's reader %s (%s %d): %s", name, o.Name, o.Applied.Policy, o.Applied.Priority, why)
		}
	}
	return ""
}

// rtNoise is a noise source of a run's scenario at a real-time policy:
// noise[Index], Threads threads at Policy Priority on CPUs (empty: any).
type rtNoise struct {
	Index    int
	Policy   string `json:"policy"`
	Priority int    `json:"priority"`
	CPUs     []int  `json:"cpus"`
}

// rtNoiseOf are the real-time noise sources of s's scenario (its spec
// as run, before variants: a variant that sets a noise's policy is not
// seen), nil when none or the spec cannot be read.
func rtNoiseOf(s *results.Summary) []rtNoise {
	var spec struct {
		Noise []rtNoise `json:"noise"`
	}
	if len(s.Spec) == 0 || json.Unmarshal(s.Spec, &spec) != nil {
		return nil
	}
	var out []rtNoise
	for i, n := range spec.Noise {
		if n.Policy == "fifo" || n.Policy == "rr" {
			n.Index = i
			out = append(out, n)
		}
	}
	return out
}

// starvedByNoise says why reader name of t was kept off its CPU by its
// own run's noise: a noise source at a real-time policy and at or above
// the reader's priority that may run on one of the reader's CPUs (the
// scenario asked for it: a fresh process would repeat it); "" when none.
func starvedByNoise(t *results.Trial, name string, noise []rtNoise) string {
	i := slices.IndexFunc(t.Readers, func(r results.Reader) bool { return r.Name == name })
	if i < 0 {
		return ""
	}
	r := &t.Readers[i]
	for _, n := range noise {
		if n.Priority < r.Applied.Priority || (len(n.CPUs) > 0 && !slices.ContainsFunc(n.CPUs, func(c int) bool { return slices.Contains(r.Applied.CPUs, c) })) {
			continue
		}
		where := "any CPU"
		if len(n.CPUs) > 0 {
			where = cpusText(n.CPUs)
		}
		return fmt.Sprintf("reader %s kept off its CPU by its own run's noise[%d] (SCHED_%s %d on %s)", name, n.Index, strings.ToUpper(n.Policy), n.Priority, where)
	}
	return ""
}

// stolen reports whether the hypervisor took 10 ms or more of one of cpus
// during t (StealNs; as the engine's steal notes count it).
func stolen(t *results.Trial, cpus []int) bool {
	for _, c := range cpus {
		if c >= 0 && c < len(t.StealNs) && t.StealNs[c] >= int64(10*time.Millisecond) {
			return true
		}
	}
	return false
}

// Disturbance is a process of a run that a judged mark disturbed.
type Disturbance struct {
	Process int `json:"process"`
	// Cause is CauseMachine when every judged mark of the process is the
	// machine's, else CauseWorkload.
	Cause Cause `json:"cause"`
	// Why is its first mark of that cause in a few words, with its kind:
	// "reader rt off CPU 1 for 66ms (starved)".
	Why string `json:"why"`
}

// disturbances lists each process of s whose trials hold a judged mark
// (results.MarkKind.Judged), in process order: CauseMachine when every one is the
// machine's (markCause), else CauseWorkload; profiled trials are never
// judged and count for nothing.
func disturbances(s *results.Summary) []Disturbance {
	noise := rtNoiseOf(s)
	byProc := map[int]*Disturbance{}
	var order []int
	for i := range s.Trials {
		t := &s.Trials[i]
		for _, m := range t.Marks {
			if !m.Kind.Judged() {
				continue
			}
			c, _ := markCause(t, m, noise)
			d, ok := byProc[t.Process]
			if !ok {
				d = &Disturbance{Process: t.Process, Cause: c, Why: brief(t, m)}
				byProc[t.Process], order = d, append(order, t.Process)
			} else if c == CauseWorkload && d.Cause == CauseMachine {
				d.Cause, d.Why = c, brief(t, m)
			}
		}
	}
	slices.Sort(order)
	out := make([]Disturbance, 0, len(order))
	for _, p := range order {
		out = append(out, *byProc[p])
	}
	return out
}

// maxBrief bounds brief's text of a mark (runes, before its kind).
const maxBrief = 80

// brief is mark m of t in a few words with its kind, for a one-line
// count of replaced processes: a starved reader from its own counters,
// "reader rt off CPU 1 for 66ms (starved)"; any other the mark's text up
// to its first "; " (and before a parenthesis that cut left open), at
// most maxBrief runes, then the kind:
// "clocksource changed (tsc → hpet at 1.2 s) (invalid)".
func brief(t *results.Trial, m results.Mark) string {
	if m.Kind == results.MarkStarved {
		i := slices.IndexFunc(t.Readers, func(r results.Reader) bool { return r.Name == m.Reader })
		if i >= 0 {
			r := &t.Readers[i]
			if wait, ok := r.Counter("runqueue-wait"); ok {
				return fmt.Sprintf("reader %s off %s for %v (starved)", m.Reader, cpusText(r.Applied.CPUs), time.Duration(wait).Round(time.Millisecond))
			}
		}
	}
	text, _, _ := strings.Cut(m.Text, "; ")
	for strings.Count(text, "(") > strings.Count(text, ")") {
		i := strings.LastIndex(text, " (") // a parenthesis the cut left open
		if i < 0 {
			break
		}
		text = text[:i]
	}
	if utf8.RuneCountInString(text) > maxBrief {
		text = string([]rune(text)[:maxBrief]) + "…"
	}
	return text + " (" + string(m.Kind) + ")"
}

// cpusText names cpus as the marks do: "CPU 1", "CPUs 1,3", "its CPU".
func cpusText(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "its CPU"
	case 1:
		return "CPU " + strconv.Itoa(cpus[0])
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return "CPUs " + strings.Join(s, ",")
}

// withoutProcesses is s without the trials and process records of the
// processes in drop: a shallow copy (trials are shared, never changed),
// s itself when drop is empty.
func withoutProcesses(s *results.Summary, drop []int) *results.Summary {
	if len(drop) == 0 {
		return s
	}
	out := *s
	out.Trials = nil
	for _, t := range s.Trials {
		if !slices.Contains(drop, t.Process) {
			out.Trials = append(out.Trials, t)
		}
	}
	out.Processes = nil
	for _, p := range s.Processes {
		if !slices.Contains(drop, p.Process) {
			out.Processes = append(out.Processes, p)
		}
	}
	return &out
}
