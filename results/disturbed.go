package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Whose a trial's mark is. A verdict drops a process the machine
// disturbed and judges a fresh one in its place (rtload check, run
// --processes); it never drops one the workload disturbed itself, since a
// fresh process would repeat it and dropping it would hide a change that
// follows the code under test (B makes the reader overrun until RT
// throttling stops it: the starvation is B's, and so is every spike it
// causes).

// Cause says whose a judged trial mark is (Trial.Cause).
type Cause string

// Causes of a mark.
const (
	// CauseMachine: something outside the run asked for disturbed the
	// trial, which a fresh process does not inherit: a thread at or above
	// the reader's priority on its CPU (starving it, or sharing it:
	// MarkShared, another rtload's reader too), RT throttling the reader
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

// Judged reports whether a trial mark of kind k makes a trial not the
// trial asked for in a verdict's eyes: MarkInvalid, MarkEmpty,
// MarkStarved, MarkShared and MarkTraffic (compare.TrialMarkKinds quotes
// them). MarkRtload is reported, never judged.
func (k MarkKind) Judged() bool {
	return k == MarkInvalid || k == MarkEmpty || k == MarkStarved || k == MarkShared || k == MarkTraffic
}

// Cause says whose mark m (one of t's judged marks) is, and why in a few
// words ("reader rt ran 97% of its window itself").
func (t *Trial) Cause(m Mark) (Cause, string) {
	switch m.Kind {
	case MarkStarved:
		if why := t.selfBusy(m.Reader); why != "" {
			return CauseWorkload, why
		}
		if why := t.starvedByOwn(m.Reader); why != "" {
			return CauseWorkload, why
		}
		return CauseMachine, "kept off its CPU by another thread or RT throttling"
	case MarkEmpty:
		for _, s := range t.Marks {
			if s.Kind == MarkStarved && s.Reader == m.Reader {
				if c, why := t.Cause(s); c == CauseMachine {
					return c, "measured nothing: " + why
				}
			}
		}
		return CauseWorkload, "reader " + m.Reader + " measured nothing without a machine's starvation to explain it"
	case MarkInvalid:
		if m.Reader != "" {
			return CauseWorkload, "a setting of reader " + m.Reader + " not as asked, in every process alike"
		}
		if t.Kernel != nil && slices.ContainsFunc(t.Kernel.Events, func(e KernelEvent) bool { return e.Kind == RTThrottled }) {
			for _, r := range t.Readers {
				if why := t.selfBusy(r.Name); why != "" {
					return CauseWorkload, "RT throttling with " + why
				}
			}
		}
		return CauseMachine, "the kernel or rtload's own garbage collection changed what the trial measured"
	case MarkShared:
		// Another process's thread (another rtload's reader, a thread at
		// or above the reader's priority) on the reader's CPU: never the
		// run's own.
		return CauseMachine, "another process's thread on reader " + m.Reader + "'s CPU"
	case MarkTraffic:
		for _, tf := range t.Traffic {
			if tf.Endpoint != m.Endpoint {
				continue
			}
			if tf.Starved != "" {
				return CauseMachine, "sender " + tf.Endpoint + " kept off its CPU"
			}
			if tf.Applied != nil && t.stolen(tf.Applied.CPUs) {
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
func (t *Trial) selfBusy(name string) string {
	i := slices.IndexFunc(t.Readers, func(r Reader) bool { return r.Name == name })
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
func (t *Trial) starvedByOwn(name string) string {
	i := slices.IndexFunc(t.Readers, func(r Reader) bool { return r.Name == name })
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
		if why := t.selfBusy(o.Name); why != "" {
			return fmt.Sprintf("reader %s kept off its CPU by its own run's reader %s (%s %d): %s", name, o.Name, o.Applied.Policy, o.Applied.Priority, why)
		}
	}
	return ""
}

// stolen reports whether the hypervisor took 10 ms or more of one of cpus
// during t (StealNs; as the engine's steal notes count it).
func (t *Trial) stolen(cpus []int) bool {
	for _, c := range cpus {
		if c >= 0 && c < len(t.StealNs) && t.StealNs[c] >= int64(10*time.Millisecond) {
			return true
		}
	}
	return false
}

// Counter is the value of r's counter name (Counters), ok when counted.
func (r *Reader) Counter(name string) (uint64, bool) {
	for _, c := range r.Counters {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
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

// Disturbances lists each process of s whose trials hold a judged mark
// (MarkKind.Judged), in process order: CauseMachine when every one is the
// machine's (Trial.Cause), else CauseWorkload; profiled trials are never
// judged and count for nothing.
func (s *Summary) Disturbances() []Disturbance {
	byProc := map[int]*Disturbance{}
	var order []int
	for i := range s.Trials {
		t := &s.Trials[i]
		for _, m := range t.Marks {
			if !m.Kind.Judged() {
				continue
			}
			c, _ := t.Cause(m)
			d, ok := byProc[t.Process]
			if !ok {
				d = &Disturbance{Process: t.Process, Cause: c, Why: t.Brief(m)}
				byProc[t.Process], order = d, append(order, t.Process)
			} else if c == CauseWorkload && d.Cause == CauseMachine {
				d.Cause, d.Why = c, t.Brief(m)
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

// maxBrief bounds Brief's text of a mark (runes, before its kind).
const maxBrief = 80

// Brief is mark m of t in a few words with its kind, for a one-line
// count of replaced processes: a starved reader from its own counters,
// "reader rt off CPU 1 for 66ms (starved)"; any other the mark's text up
// to its first "; " (and before a parenthesis that cut left open), at
// most maxBrief runes, then the kind:
// "clocksource changed (tsc → hpet at 1.2 s) (invalid)".
func (t *Trial) Brief(m Mark) string {
	if m.Kind == MarkStarved {
		i := slices.IndexFunc(t.Readers, func(r Reader) bool { return r.Name == m.Reader })
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

// WithoutProcesses is s without the trials and process records of the
// processes in drop: a shallow copy (trials are shared, never changed),
// s itself when drop is empty.
func (s *Summary) WithoutProcesses(drop []int) *Summary {
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
