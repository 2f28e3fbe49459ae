package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/view"
	"github.com/rtload/rtload/stats"
)

// The adjusted verdict (issue 31). A gate judges a per-call cost
// regression-adjusted on a drift control timed in the same ticks
// (compare.Metric.AdjustedAt: CUPED on the logs, θ estimated within the
// sides, never assumed 1), so that the machine's change between a
// baseline and a check does not pass for the code's. The raw change is
// always kept beside it (Adjustment.Raw), and the gate judges the raw one
// when:
//
//   - --control none asks for it (Options.Control);
//   - the metric has no controls (older results, readers[].controls: 0);
//   - the sides ran in the same processes (two variants of one run), see
//     sameProcessesNote;
//   - the adjusted interval cannot be had (too few rounds for θ), or is
//     not narrower than the raw one: with a weak within-side correlation
//     and few processes, the degree of freedom spent on θ costs more than
//     the adjustment removes (measured here: 3 against 14 processes, r
//     0.72, ±34% adjusted against ±15% raw). The choice reads only the
//     noise within the sides (the intervals' widths), never the change
//     between them, so it cannot steer the verdict towards either answer;
//   - the entry-change rule fires (entryChanged): the null syscall moved
//     by more than the machine's change explains, which a change of the
//     system-call entry does (a mitigation, a seccomp filter). Adjusting
//     through it would take the entry's cost out of a real slowdown and
//     could call it faster.

// Control is the drift control a gate adjusts per-call costs on
// (--control); the zero value is ControlNull.
type Control string

// Controls a gate can adjust on.
const (
	ControlNull Control = "null" // the null syscall (the default): r 0.9 with the per-call cost under drift (issue 31)
	ControlLoop Control = "loop" // the user-space loop: blind to the system-call path, r 0.45 under drift (bench/DRIFT.md's smoke run)
	ControlNone Control = "none" // no adjustment: the raw change is judged
	// ControlRecv adjusts on the recv control (a datagram of the reader's
	// own, read with its own receiver: results.Controls.RecvData). It is
	// the recv path itself, so it also moves with a kernel change of that
	// path, the change a check exists to find, and takes it out: only for
	// a change outside the kernel's recv path (a scenario, user space),
	// never the default. Measured: ControlRecvNote.
	ControlRecv Control = "recv"
)

// ControlNames are the values --control takes.
var ControlNames = []Control{ControlNull, ControlLoop, ControlNone, ControlRecv}

// ParseControl reads a --control value; the error names the allowed ones.
func ParseControl(s string) (Control, error) {
	for _, c := range ControlNames {
		if strings.EqualFold(strings.TrimSpace(s), string(c)) {
			return c, nil
		}
	}
	names := make([]string, len(ControlNames))
	for i, c := range ControlNames {
		names[i] = string(c)
	}
	return "", fmt.Errorf("--control %q: allowed: %s", s, strings.Join(names, ", "))
}

// control is c with its default filled in, as compare names it ("" for
// none).
func (c Control) control() compare.Control {
	switch c {
	case ControlNone:
		return ""
	case ControlLoop:
		return compare.ControlLoop
	case ControlRecv:
		return compare.ControlRecv
	}
	return compare.ControlNull
}

// The entry-change rule's parameters, chosen by simulation (entry_test.go,
// TestEntryRuleSimulation; docs/ci-bisect.md quotes its table).
const (
	// EntryMargin is how far (as a fraction) the null syscall's change
	// net of the user loop's must lie beyond 0 before the rule says the
	// system-call entry changed. The machine's drift moves the null
	// syscall more than the user loop (cache and memory traffic slow the
	// kernel's entry path; the loop is a register-only chain): in bench's
	// drift smoke run (5 minutes under busy loops) the null syscall's mean
	// moved by up to +10% between phases while the loop's moved by 0–4%.
	// Below the margin such a move is taken for the machine's and adjusted
	// through; beyond it the raw change is judged.
	EntryMargin = 0.10
	// EntryMinSlope is the least share of the user loop's change the null
	// syscall is taken to follow: a change of the machine's speed
	// (frequency, a hypervisor's steal) moves two CPU-bound controls
	// alike, while the fitted within-side slope is diluted by the loop's
	// own noise towards 0.
	EntryMinSlope = 1.0
)

// Judgements of an Adjustment.
const (
	JudgedAdjusted = "adjusted"
	JudgedRaw      = "raw"
)

// sameProcessesNote says why a gate does not adjust sides that ran in
// the same processes. Measured on this repository's 2-vCPU VM with rtload
// run laight-450 --processes 3 (recvmsg against recvfrom, interleaved):
// the 240 ABBA block pairs' log ratio of the per-call cost correlates with
// the null syscall's at r = 0.12 (with the loop's at −0.04), so adjusting
// them would keep 98.5% of the variance (0.7% narrower); adjusting the
// per-process paired differences (stats.AdjustPaired) found θ 0.15, r 0.11
// within the sides and, spending one of the 2 degrees of freedom, made the
// interval 5 times wider (±3.8% against ±0.75%). The drift such a
// comparison suffers is common to both sides and cancels in its pairs, and
// a variant can move the control itself (a seccomp filter variant of one
// run moves the null syscall +22%).
const sameProcessesNote = "the sides ran in the same processes: the machine's drift is common to both and cancels in the pairs, and adjusting them measured no gain (r 0.11–0.12)"

// Adjustment is how a gate read a per-call metric against its drift
// controls: the change it judged (Judged, and Why when raw), θ and r of
// the adjustment, the raw and adjusted changes and the control's own, and
// the entry-change rule's reading. Every change is compare.Interval, at
// the gate's level.
type Adjustment struct {
	// Control is the control adjusted on ("null syscall", "user loop").
	Control string `json:"control"`
	// Judged is JudgedAdjusted or JudgedRaw; Why says why raw.
	Judged string `json:"judged"`
	Why    string `json:"why,omitempty"`
	// Theta is θ, the slope of the metric's logs on the control's logs
	// within the sides, R their correlation there, Rounds how many
	// rounds they came from; nil when not estimated.
	Theta  *float64 `json:"theta,omitempty"`
	R      *float64 `json:"r,omitempty"`
	Rounds int      `json:"rounds,omitempty"`
	// Raw is the unadjusted change, Adjusted the adjusted one (nil when
	// not computed), ControlChange the control's own change.
	Raw           *compare.Interval `json:"raw"`
	Adjusted      *compare.Interval `json:"adjusted,omitempty"`
	ControlChange *compare.Interval `json:"control_change,omitempty"`
	// NullNetOfLoop is the null syscall's change net of what the user
	// loop's change predicts (stats.Unexplained, slope at least
	// EntryMinSlope), LoopChange the loop's own change; EntryChanged says
	// the entry-change rule fired on them.
	NullNetOfLoop *compare.Interval `json:"null_net_of_loop,omitempty"`
	NullChange    *compare.Interval `json:"null_change,omitempty"`
	LoopChange    *compare.Interval `json:"loop_change,omitempty"`
	EntryChanged  bool              `json:"entry_changed,omitempty"`
	// NetOfLoop is the metric's change net of the user loop's at slope 1
	// (compare.Metric.NetOfAt), read when the loop's own interval
	// excludes 0; MachineGuard says why the verdict was held undecided
	// when the two readings disagree ("" when they agree or the loop did
	// not move).
	NetOfLoop    *compare.Interval `json:"net_of_loop,omitempty"`
	MachineGuard string            `json:"machine_guard,omitempty"`
}

// machineGuard is the machine guard on a per-call verdict at (m read at
// level against thr, as the gate judged it, adj how it read the
// controls). When the user loop's own change between the sides excludes
// 0, the machine's speed moved between them: the loop is user space
// only, and no kernel change moves it. Then the metric's change net of
// the loop's at slope 1 (NetOfAt) is read too, and the verdict stands
// only when both readings agree (both slower, or both not slower); else
// it is undecided, and adj.MachineGuard says why. A slope of 1 is the
// least the per-call cost follows a machine's speed (in the A/A checks
// below its log change was 1.3–1.7 times the loop's), so the net reading
// leaves part of the machine's change in, never more than the raw one
// does; the guard can only turn a verdict undecided.
//
// Why (bench/DRIFT.md; docs/ci-bisect.md): in 10 A/A checks of
// laight-450 at --threshold 5% (2026-12-07), the loop and the null syscall
// moved together, up to +15%, between the baseline and the check; θ
// estimated within the sides came out low where they barely varied within
// either side (r 0.15–0.41), the adjustment was not taken or took out
// part, and 3 of the 10 said slower. Re-judged with the guard (compare
// --fail-on), 2 of the 3 were undecided, every A/A "not slower" of 30
// stayed, and 8 of 10 checks of a real change stayed slower.
func machineGuard(m *compare.Metric, at compare.Metric, adj *Adjustment, level, thr float64, grow stats.Grow, machine []compare.Machine) compare.Metric {
	if m.SameProcesses() || at.Verdict == compare.VerdictUndecided || at.Invalid() {
		return at
	}
	loop := machineLoop(m, machine)
	if !loop.Defined() {
		loop = m.ControlChangeAt(compare.ControlLoop, level)
	}
	if !loop.Defined() || loop.Lo <= 0 && loop.Hi >= 0 {
		return at
	}
	net := m.NetOfAt(compare.ControlLoop, level)
	adj.NetOfLoop = compare.IntervalOf(net)
	nv := compare.VerdictUndecided
	if net.Defined() {
		nv = m.At(net, thr, grow).Verdict
	}
	if verdictClass(nv) == verdictClass(at.Verdict) {
		return at
	}
	adj.MachineGuard = fmt.Sprintf("%s the user loop (no system call: the machine's speed) moved %s, and net of it the change is %s (%s) where the judged one is %s: held undecided",
		view.MachineGuardWords, view.IntervalWords(compare.IntervalOf(loop)), view.IntervalWords(adj.NetOfLoop), nv, at.Verdict)
	at.Verdict, at.MethodNote = compare.VerdictUndecided, adj.MachineGuard
	return at
}

// machineLoop is the user loop's change on the machine line of m's run
// (every reader's rounds of the run against the baseline run's, at 95%:
// what the output prints), so that the guard reads one loop for every
// column of a run; undefined when there is none (m's own is read then).
func machineLoop(m *compare.Metric, machine []compare.Machine) stats.Change {
	for _, x := range machine {
		if x.UserLoop != nil && x.UserLoop.LowPct != nil && x.UserLoop.HighPct != nil && x.UserLoop.PointPct != nil &&
			(m.Column == x.Column || strings.HasSuffix(m.Column, "/"+x.Column)) {
			return stats.Change{Level: x.UserLoop.Level, Point: *x.UserLoop.PointPct / 100, Lo: *x.UserLoop.LowPct / 100, Hi: *x.UserLoop.HighPct / 100}
		}
	}
	return stats.Undefined("no machine line")
}

// verdictClass is a verdict as a gate reads it: slower, not slower
// (same included) or undecided.
func verdictClass(v string) string {
	if v == compare.VerdictSame {
		return compare.VerdictNotSlower
	}
	return v
}

// entryChanged is the entry-change rule on u, the null syscall's change
// net of the user loop's: it fires when u's interval excludes 0 and its
// point lies beyond ±EntryMargin. Both directions count: a cheaper entry
// (a mitigation removed) adjusted through would turn a real speed-up into
// a slowdown.
func entryChanged(u stats.Change) bool {
	if !u.Defined() {
		return false
	}
	return u.Lo > 0 && u.Point > EntryMargin || u.Hi < 0 && u.Point < -EntryMargin
}

// adjusted is the change a gate judges for m at level with control c
// (Options.Control), and how it read the controls (nil when m has none
// or c is ControlNone: the raw change, compare's).
func adjusted(m *compare.Metric, level float64, c Control) (stats.Change, *Adjustment) {
	raw := m.ChangeAt(level)
	k := c.control()
	if k == "" || !m.Controlled() {
		return raw, nil
	}
	adj := &Adjustment{Control: string(k), Judged: JudgedRaw, Raw: compare.IntervalOf(raw),
		ControlChange: compare.IntervalOf(m.ControlChangeAt(k, level))}
	null, loop := m.ControlChangeAt(compare.ControlNull, level), m.ControlChangeAt(compare.ControlLoop, level)
	adj.NullChange, adj.LoopChange = compare.IntervalOf(null), compare.IntervalOf(loop)
	u := m.NullNetOfLoopAt(level, EntryMinSlope)
	if u.Defined() {
		adj.NullNetOfLoop = compare.IntervalOf(u.Change)
		adj.EntryChanged = entryChanged(u.Change)
	}
	if m.SameProcesses() {
		adj.Why = sameProcessesNote
		return raw, adj
	}
	// The adjusted change is kept (JSON) even where it is not judged: what
	// adjusting through an entry change would have said.
	a := m.AdjustedAt(k, level)
	adj.Theta, adj.R, adj.Rounds = finite(a.Theta), finite(a.R), a.Rounds
	adj.Adjusted = compare.IntervalOf(a.Change)
	switch {
	case adj.EntryChanged && k != compare.ControlLoop:
		// Adjusting on the null syscall (or the recv control, a system
		// call too) would take the entry's change out of the metric; the
		// loop does not move with it.
		adj.Why = entryWhy(null, loop, u.Change) + "; the raw change is judged"
		return raw, adj
	case !a.Defined():
		adj.Why = "no adjusted interval: " + strings.Join(a.Notes, "; ")
		return raw, adj
	case raw.Defined() && a.HalfWidth() >= raw.HalfWidth():
		adj.Why = fmt.Sprintf("the adjustment did not narrow the interval (±%.1f%% adjusted against ±%.1f%% raw; r %s within the sides, one degree of freedom spent on θ)",
			a.HalfWidth()*100, raw.HalfWidth()*100, num(adj.R))
		return raw, adj
	}
	adj.Judged = JudgedAdjusted
	return a.Change, adj
}

// entryWhy is the entry-change rule's sentence, with net the null
// syscall's change net of the loop's (what the rule tests): "the null
// syscall moved +22.0% [+20.1, +24.0] with the user loop flat (+0.3%
// [-0.5, +1.1]), +21.6% [+19.5, +23.8] net of it: the system-call entry
// changed, not the machine".
func entryWhy(null, loop, net stats.Change) string {
	return fmt.Sprintf("the null syscall moved %s with the user loop %s, %s net of it: the system-call entry changed, not the machine",
		view.IntervalWords(compare.IntervalOf(null)), loopWords(loop), view.IntervalWords(compare.IntervalOf(net)))
}

// loopWords is the user loop's change: "flat (+0.3% [-0.5, +1.1])" when
// its interval holds 0.
func loopWords(c stats.Change) string {
	w := view.IntervalWords(compare.IntervalOf(c))
	if c.Defined() && c.Lo <= 0 && c.Hi >= 0 {
		return "flat (" + w + ")"
	}
	return w
}

// finite is v's address, nil for NaN or ±Inf.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Words say in a few words, for a closing line, how the gate read the
// metric: "adjusted on the null syscall (θ 1.21, r 0.92; raw +8.3% [+3.1,
// +13.8])", or why the raw change was judged; "" when there is nothing
// to say (no controls, or sides in the same processes: Long says why).
func (a *Adjustment) Words() string {
	if a == nil || a.Judged != JudgedAdjusted && a.Why == sameProcessesNote {
		return ""
	}
	return a.Long()
}

// Long is Words for every case, as the gate's verdict lines print it.
func (a *Adjustment) Long() string {
	if a == nil {
		return ""
	}
	if a.Judged == JudgedAdjusted {
		w := fmt.Sprintf("adjusted on the %s (θ %s, r %s; raw %s)", a.Control, num(a.Theta), num(a.R), view.IntervalWords(a.Raw))
		if a.EntryChanged { // adjusted on the loop, which the entry does not move
			w += "; the null syscall moved " + view.IntervalWords(a.NullChange) + " beyond the loop's change: the system-call entry changed"
		}
		if a.MachineGuard != "" {
			w += "; " + a.MachineGuard
		}
		return w
	}
	if a.MachineGuard != "" {
		return "not adjusted: " + a.Why + "; " + a.MachineGuard
	}
	return "not adjusted: " + a.Why
}

func num(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *p)
}

// ControlTimed checks that every run timed control c where it timed
// controls at all: --control recv on results without the recv control
// (an rtload before it) is a usage error naming the fix, not a raw
// verdict in its place. Every other control is in every run with controls.
func ControlTimed(runs []compare.Run, c Control) error {
	if c != ControlRecv {
		return nil
	}
	for _, r := range runs {
		for _, t := range r.Summary.Trials {
			for _, rd := range t.Readers {
				if rd.Controls != nil && rd.Controls.RecvData == nil {
					return fmt.Errorf("--control recv: %s has no recv control (results of an rtload before it): allowed: null, loop, none", r.Label)
				}
			}
		}
	}
	return nil
}
