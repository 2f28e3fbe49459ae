package profile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Variant is one side of an attribution: a variant's profile and what was
// measured in the same profiled trial(s). The samples count CPU time
// (cpu-clock) while Drain is wall time: they agree for a SCHED_FIFO
// reader that is not preempted; for others pass the profile's own
// on-CPU drain time (Profile.PhaseWeight(PhaseDrain) for cpu-clock).
type Variant struct {
	Name    string
	Profile *Profile // only its PhaseDrain stacks are used
	// Calls is the number of receive calls measured while the profile was
	// taken, Drain their total time (the sum of per-call times). Drain /
	// Calls is the variant's measured cost per call.
	Calls uint64
	Drain time.Duration
	// KernelConfig and Cmdline are the run's sysinfo.Facts KernelConfig
	// and Hardening maps, for Hook.State; nil when unknown.
	KernelConfig, Cmdline map[string]string
}

// Interval is a value in ns per call with its 95% interval [Lo, Hi].
type Interval struct{ Value, Lo, Hi float64 }

// Significant says the interval excludes 0.
func (iv Interval) Significant() bool { return iv.Lo > 0 || iv.Hi < 0 }

// FuncDiff is one function's drain cost in both variants. Inclusive
// counts are samples with the function anywhere in the stack (once per
// stack, even when recursive), self counts samples with it innermost.
type FuncDiff struct {
	Func   string
	Kernel bool
	// SamplesA/B and SelfA/B are drain sample counts in variants A and B.
	SamplesA, SamplesB, SelfA, SelfB uint64
	// NsA and NsB are the inclusive ns per call: the function's share of
	// the variant's drain samples times its measured ns per call.
	NsA, NsB float64
	// Diff and SelfDiff are A − B in ns per call, inclusive and self.
	Diff, SelfDiff Interval
}

// Seat is a function where a difference sits.
type Seat struct {
	FuncDiff
	// Path is the commonest call chain to Func, outermost first and
	// ending with Func, in the variant where Func weighs more (kernel
	// frames only for a kernel function).
	Path []string
	// Hooks are the known hooks at Func or below it that carry at least
	// a tenth of Func's samples in that variant.
	Hooks []Hook
}

// HookCost is a known hook's inclusive drain cost in both variants.
type HookCost struct {
	Hook
	SamplesA, SamplesB uint64
	Diff               Interval // A − B, ns per call
	StateA, StateB     OptionState
}

// Attribution explains the difference of per-call drain cost between two
// variants with their drain profiles.
type Attribution struct {
	A, B               string
	SamplesA, SamplesB uint64  // drain samples
	CallNsA, CallNsB   float64 // measured ns per call
	Total              float64 // CallNsA − CallNsB
	Funcs              []FuncDiff
	Seats              []Seat
	Hooks              []HookCost
	// Explained is the sum of the seats' Diff over Total.
	Explained float64
	// Unexplained is "" when the seats explain the difference, else why
	// the profile cannot: too few samples, or a difference spread thin.
	Unexplained string
}

// Options tune Attribute; the zero value gives the defaults.
type Options struct {
	// MinSamples is the fewest drain samples per variant to attribute
	// anything (default 200).
	MinSamples uint64
	// MinShare is the smallest |Diff| of a seat as a share of |Total|
	// (default 0.05).
	MinShare float64
	// Z is the normal quantile of the intervals (default 1.96: 95%).
	Z float64
}

func (o Options) withDefaults() Options {
	if o.MinSamples == 0 {
		o.MinSamples = 200
	}
	if o.MinShare == 0 {
		o.MinShare = 0.05
	}
	if o.Z == 0 {
		o.Z = 1.96
	}
	return o
}

// Attribute converts each function's share of the drain samples into ns
// per call and finds where the difference A − B sits. With N drain
// samples of which S contain function f, and a measured cost of C ns per
// call, f costs S/N·C ns per call. The interval of a difference treats
// the counts as binomial (normal approximation, with S+1 of N+2 so a
// function absent from one side still has a variance) and C as exact;
// samples taken close together are not independent, so read the
// intervals as a lower bound on the uncertainty.
//
// Seats are found among functions whose inclusive difference is
// significant and at least MinShare of |Total|:
//   - a function in 95% or more of both variants' drain samples (the
//     syscall entry, the drain loop) spans the whole drain, and its
//     difference is the total: it says nothing of where;
//   - a function whose |Diff| exceeds |Total| by more than its interval
//     is a code path one variant takes and the other does not (its
//     shared work is counted under other names on the other side), not
//     a seat;
//   - a function that, in half of its samples or more, calls a
//     function whose cost does not differ is a different road to shared
//     work (___sys_recvmsg and __sys_recvfrom both reach sock_recvmsg),
//     not a seat;
//   - a function passes the difference on, and is not a seat, when one
//     callee carries at least 80% of its Diff with the same sign;
//   - a function nested in an already chosen seat (in half of its
//     samples or more) is not chosen again.
//
// Errors: a variant without calls or drain time, or without a profile.
func Attribute(a, b Variant, opt Options) (Attribution, error) {
	opt = opt.withDefaults()
	for _, v := range []Variant{a, b} {
		if v.Calls == 0 || v.Drain <= 0 || v.Profile == nil {
			return Attribution{}, fmt.Errorf("attribute %s: needs a profile, calls and drain time (have %d calls, %v)", v.Name, v.Calls, v.Drain)
		}
	}
	sa, sb := newSide(a), newSide(b)
	at := Attribution{A: a.Name, B: b.Name, SamplesA: sa.n, SamplesB: sb.n, CallNsA: sa.callNs, CallNsB: sb.callNs,
		Total: sa.callNs - sb.callNs}
	at.Funcs = funcDiffs(sa, sb, opt.Z)
	at.Hooks = hookCosts(a, b, sa, sb, opt.Z)
	if sa.n < opt.MinSamples || sb.n < opt.MinSamples {
		at.Unexplained = fmt.Sprintf("too few drain samples: %s has %d, %s has %d (need %d each: profile longer or sample faster)",
			a.Name, sa.n, b.Name, sb.n, opt.MinSamples)
		return at, nil
	}
	at.Seats = seats(at.Funcs, at.Total, sa, sb, opt)
	for _, s := range at.Seats {
		at.Explained += s.Diff.Value
	}
	if at.Total != 0 {
		at.Explained /= at.Total
	}
	switch {
	case len(at.Seats) == 0:
		at.Unexplained = fmt.Sprintf("spread thin: no function's share of the drain differs beyond its sampling error by %.0f ns/call or more",
			opt.MinShare*math.Abs(at.Total))
	case at.Explained < 0.5:
		at.Unexplained = fmt.Sprintf("spread thin: the %d function(s) found explain %.0f%% of the difference", len(at.Seats), 100*at.Explained)
	}
	return at, nil
}

// fkey identifies a function across variants.
type fkey struct {
	name   string
	kernel bool
}

// side is one variant's drain stacks and per-function counts.
type side struct {
	stacks     []Stack
	n          uint64
	callNs     float64
	incl, self map[fkey]uint64
	edges      map[[2]fkey]uint64 // caller → callee, samples with that adjacency
}

func newSide(v Variant) *side {
	s := &side{callNs: float64(v.Drain.Nanoseconds()) / float64(v.Calls),
		incl: map[fkey]uint64{}, self: map[fkey]uint64{}, edges: map[[2]fkey]uint64{}}
	for _, st := range v.Profile.Stacks {
		if st.Phase != PhaseDrain || len(st.Frames) == 0 {
			continue
		}
		s.stacks = append(s.stacks, st)
		s.n += st.Count
		s.self[fkey{st.Frames[0].Func, st.Frames[0].Kernel}] += st.Count
		seen := map[fkey]bool{}
		for i, f := range st.Frames {
			k := fkey{f.Func, f.Kernel}
			if !seen[k] {
				seen[k] = true
				s.incl[k] += st.Count
			}
			if i+1 < len(st.Frames) {
				c := st.Frames[i+1]
				s.edges[[2]fkey{{c.Func, c.Kernel}, k}] += st.Count
			}
		}
	}
	return s
}

// ns converts a count into ns per call with its interval.
func (s *side) ns(count uint64) (v, variance float64) {
	if s.n == 0 {
		return 0, 0
	}
	p := float64(count) / float64(s.n)
	q := (float64(count) + 1) / (float64(s.n) + 2)
	return p * s.callNs, s.callNs * s.callNs * q * (1 - q) / float64(s.n)
}

func diff(sa, sb *side, ca, cb uint64, z float64) Interval {
	va, wa := sa.ns(ca)
	vb, wb := sb.ns(cb)
	d, hw := va-vb, z*math.Sqrt(wa+wb)
	return Interval{d, d - hw, d + hw}
}

func funcDiffs(sa, sb *side, z float64) []FuncDiff {
	keys := map[fkey]bool{}
	for k := range sa.incl {
		keys[k] = true
	}
	for k := range sb.incl {
		keys[k] = true
	}
	out := make([]FuncDiff, 0, len(keys))
	for k := range keys {
		d := FuncDiff{Func: k.name, Kernel: k.kernel, SamplesA: sa.incl[k], SamplesB: sb.incl[k], SelfA: sa.self[k], SelfB: sb.self[k]}
		d.NsA, _ = sa.ns(d.SamplesA)
		d.NsB, _ = sb.ns(d.SamplesB)
		d.Diff = diff(sa, sb, d.SamplesA, d.SamplesB, z)
		d.SelfDiff = diff(sa, sb, d.SelfA, d.SelfB, z)
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y FuncDiff) int {
		if c := cmpFloat(math.Abs(y.Diff.Value), math.Abs(x.Diff.Value)); c != 0 {
			return c
		}
		return strings.Compare(x.Func, y.Func)
	})
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
