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
	// Entry says the function is on an entry path (see Attribute): code
	// one variant runs instead of the other's to reach the same callees.
	// Its Diff is then mostly the shared callees' cost, counted under
	// other names on the other side, and never a seat.
	Entry bool
	// SamplesA/B and SelfA/B are drain sample counts in variants A and B.
	SamplesA, SamplesB, SelfA, SelfB uint64
	// NsA and NsB are the inclusive ns per call: the function's share of
	// the variant's drain samples times its measured ns per call.
	NsA, NsB float64
	// Diff and SelfDiff are A − B in ns per call, inclusive and self.
	Diff, SelfDiff Interval
}

// SeatKind says which part of the difference a seat is in.
type SeatKind uint8

const (
	// SeatOwn is work only one variant does: a function below its entry
	// path that the other variant does not call there (recvmsg's
	// ___sys_recvmsg → copy_msghdr_from_user). Positive Diff: A's work;
	// negative: B's.
	SeatOwn SeatKind = iota
	// SeatShared is work both variants do, through their entry paths or
	// not, at a different cost per call (sock_recvmsg's subtree when the
	// longer path evicts more cache).
	SeatShared
)

// String is "own work" or "shared path".
func (k SeatKind) String() string {
	if k == SeatShared {
		return "shared path"
	}
	return "own work"
}

// Seat is a function where a difference sits.
type Seat struct {
	// FuncDiff holds the function's counts and Diff within the seat's
	// part of the drain (Kind): for SeatOwn only the samples of work one
	// variant does alone, for SeatShared only the samples of shared work.
	FuncDiff
	Kind SeatKind
	// Path is the commonest call chain to Func, outermost first and
	// ending with Func, in the variant where Func weighs more (kernel
	// frames only for a kernel function).
	Path []string
	// Hooks are the known hooks at Func or below it that carry at least
	// a tenth of Func's samples in that variant.
	Hooks []Hook
	// Callees are up to three of Func's direct callees that carry a
	// significant part (at least MinShare of |Total|) of its Diff with
	// the same sign, largest first: where inside Func it sits.
	Callees []FuncDiff
}

// EntryPaths are the two variants' entry paths, paired through the
// callees they share (see Attribute), and the cost of their own code.
type EntryPaths struct {
	// PathsA and PathsB are each variant's commonest entry path below
	// each shared caller, outermost first, the most sampled first: for
	// recvmsg [__x64_sys_recvmsg __sys_recvmsg ___sys_recvmsg
	// ____sys_recvmsg] below do_syscall_64, and its Go wrapper below the
	// drain loop.
	PathsA, PathsB [][]string
	// Via are the shared callees both variants' entry paths reach
	// (sock_recvmsg, fdget, fput, move_addr_to_user, …), most sampled
	// first.
	Via []string
	// SamplesA and SamplesB are the samples in the entry paths' own code
	// (innermost frame on the path), Diff their A − B in ns per call:
	// the work each syscall does inline, outside any callee.
	SamplesA, SamplesB uint64
	Diff               Interval
	// SelfA and SelfB are those samples by function, most first.
	SelfA, SelfB []FuncCount
}

// FuncCount is a function's sample count.
type FuncCount struct {
	Func    string
	Kernel  bool
	Samples uint64
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
	// Funcs are every function's inclusive cost over the whole drain,
	// largest |Diff| first.
	Funcs []FuncDiff
	// Entry are the entry paths and their own code's cost.
	Entry EntryPaths
	// Own and Shared split the rest of Total: Own is the work only one
	// variant does (A's minus B's), Shared the difference of the work
	// both do.
	Own, Shared Interval
	// Interrupted is the cost of the drain samples taken inside an
	// interruption (interruptionFrames: hardware interrupts, softirqs,
	// preemption and signals on the way back to user space), A − B, and
	// InterruptedA/B their counts: the machine's load, not either
	// variant's work. Own + Entry.Diff + Shared + Interrupted = Total
	// exactly.
	Interrupted                Interval
	InterruptedA, InterruptedB uint64
	// Seats are the seats of Own (Kind SeatOwn), then of Shared.
	Seats []Seat
	Hooks []HookCost
	// Explained is the sum of the seats' Diff and of Entry.Diff and
	// Interrupted when each is significant and at least MinShare of
	// |Total|, over Total.
	Explained float64
	// Unexplained is "" when the seats explain the difference, else why
	// the profile cannot: too few samples, or a difference spread thin.
	Unexplained string
	// Notes say what makes the numbers less than they seem: a measured
	// drain time well above the sampled CPU time (offCPUNote).
	Notes    []string
	minShare float64 // the threshold used, for Text
}

// offCPURatio is how much a variant's measured drain time may exceed its
// sampled on-CPU drain time before Attribute notes it.
const offCPURatio = 1.25

// offCPUNote says when v's measured drain time exceeds the CPU time its
// cpu-clock samples saw in the drain by more than offCPURatio: ns per
// call are shares of the measured time, so time off the CPU (preemption,
// a hypervisor's steal) inflates every function of v in proportion.
func offCPUNote(v Variant) string {
	if v.Profile.Event != "cpu-clock" {
		return ""
	}
	cpu := v.Profile.PhaseWeight(PhaseDrain)
	if cpu == 0 || float64(v.Drain.Nanoseconds()) <= offCPURatio*float64(cpu) {
		return ""
	}
	return fmt.Sprintf("%s's measured drain time is %.1f× the CPU time its samples saw in the drain: time off the CPU (preemption, steal) that no function shows, spread over all of them in proportion",
		v.Name, float64(v.Drain.Nanoseconds())/float64(cpu))
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
// per call and finds where the difference A − B sits.
//
// # Cost per call
//
// With N drain samples of which S contain function f, and a measured
// cost of C ns per call, f costs S/N·C ns per call. The interval of a
// difference treats the counts as binomial (normal approximation, with
// S+1 of N+2 so a function absent from one side still has a variance)
// and C as exact; samples taken close together are not independent, so
// read the intervals as a lower bound on the uncertainty.
//
// # Entry paths, own work, shared work
//
// Two receive methods reach the same socket code through different
// syscall functions: recvmsg through __sys_recvmsg → ___sys_recvmsg →
// ____sys_recvmsg, recvfrom through __x64_sys_recvfrom →
// __sys_recvfrom, both then calling sock_recvmsg, fdget, fput,
// move_addr_to_user. Each entry function appears in one variant only,
// and its inclusive cost is mostly the shared work below it, which the
// other variant counts under its own entry functions; and the shared
// work itself costs somewhat more or less per call in each variant. So
// neither "one-sided" nor "same cost" finds the seats. Attribute
// instead pairs the entry paths through the callees they share:
//
//  1. A function is one-sided when its ns per call in one variant is at
//     most 5% of the other's (usually 0 samples); else it is common.
//     A run is a maximal stretch of one-sided frames in a stack; its
//     caller X is the common frame above it (or the stack's root) and
//     its callee Y the common frame below it (or none: the sample is in
//     the run's own code).
//  2. X and Y are paired when both variants reach Y below X with only
//     one-sided frames, or common frames already paired with X, between
//     them, each in at least 0.2% of its drain samples (and 2). This is
//     a fixpoint (a Go wrapper common to both may sit between): it is
//     structural, never a comparison of costs, so shared work that
//     costs more in one variant still pairs.
//  3. A one-sided function is an entry function when, in some variant,
//     runs through it reach a paired callee in at least 5% of all the
//     samples that reach one, or in a quarter of its own run samples.
//     copy_msghdr_from_user reaches one only through the rare
//     import_iovec → import_ubuf and is not one.
//  4. Each drain sample then falls in exactly one part: interrupted
//     when its stack holds an interrupt, softirq or return-to-user work
//     (preemption, signals), which is the machine's load and not the
//     method's; else, reading its stack from the outside in: entry code
//     when it ends inside runs
//     of entry functions; own work when a run holds a function that is
//     not an entry function (the seat root is that function) or an
//     entry run calls an unpaired callee (the root is that callee:
//     recvmsg's ___sys_recvmsg → kfree, which recvfrom calls only deep
//     in udp_recvmsg); shared work otherwise. Shared work is counted
//     with the entry frames taken out, so both variants' callees line
//     up under the same callers.
//
// Own, Entry.Diff, Shared and Interrupted add up to Total. Entry
// functions are never seats; the entry paths' own code and the
// interruptions are reported as wholes.
//
// # Seats
//
// Within own work and within shared work, seats are the functions whose
// difference is significant and at least MinShare of |Total|, except:
//   - in shared work, a function in 95% or more of both variants' shared
//     samples (the syscall entry, the drain loop) spans it all, and its
//     difference is Shared: it says nothing of where;
//   - a function passes the difference on, and is not a seat, when one
//     callee carries at least 80% of its Diff with the same sign;
//   - a function forks, and is not a seat, when its own code (self)
//     does not differ significantly in the same direction: in shared
//     work always (do_syscall_64 over sock_recvmsg and fdget; when no
//     callee holds enough, the shared difference is spread over its
//     functions and the text says so), in own work only when callees
//     that are seat candidates (significant, same sign, at least
//     MinShare of |Total|) carry half of its Diff or more, since the
//     root of work one variant alone does is a unit worth naming;
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
	sa, sb := drainSide(a), drainSide(b)
	at := Attribution{A: a.Name, B: b.Name, SamplesA: sa.n, SamplesB: sb.n, CallNsA: sa.callNs, CallNsB: sb.callNs,
		Total: sa.callNs - sb.callNs, minShare: opt.MinShare}
	at.Hooks = hookCosts(a, b, sa, sb, opt.Z)
	for _, v := range []Variant{a, b} {
		if n := offCPUNote(v); n != "" {
			at.Notes = append(at.Notes, n)
		}
	}
	if sa.n < opt.MinSamples || sb.n < opt.MinSamples {
		at.Funcs = funcDiffs(sa, sb, opt.Z)
		at.Unexplained = fmt.Sprintf("too few drain samples: %s has %d, %s has %d (need %d each: profile longer or sample faster)",
			a.Name, sa.n, b.Name, sb.n, opt.MinSamples)
		return at, nil
	}
	sp := splitDrain(sa, sb)
	at.Funcs = funcDiffs(sa, sb, opt.Z)
	for i := range at.Funcs {
		at.Funcs[i].Entry = sp.entryFunc[fkey{at.Funcs[i].Func, at.Funcs[i].Kernel}]
	}
	at.Entry = sp.entryPaths(opt.Z)
	at.Own = diff(sa, sb, sp.own[0].m, sp.own[1].m, opt.Z)
	at.Shared = diff(sa, sb, sp.shared[0].m, sp.shared[1].m, opt.Z)
	at.InterruptedA, at.InterruptedB = interrupted(sa), interrupted(sb)
	at.Interrupted = diff(sa, sb, at.InterruptedA, at.InterruptedB, opt.Z)
	minNs := opt.MinShare * math.Abs(at.Total)
	at.Seats = seats(SeatOwn, sp.own[0], sp.own[1], minNs, opt)
	at.Seats = append(at.Seats, seats(SeatShared, sp.shared[0], sp.shared[1], minNs, opt)...)
	sum := 0.0
	for _, s := range at.Seats {
		sum += s.Diff.Value
	}
	entryCounts := at.Entry.Diff.Significant() && math.Abs(at.Entry.Diff.Value) >= minNs
	if entryCounts {
		sum += at.Entry.Diff.Value
	}
	if at.Interrupted.Significant() && math.Abs(at.Interrupted.Value) >= minNs {
		sum += at.Interrupted.Value // explained, as load
	}
	if at.Total != 0 {
		at.Explained = sum / at.Total
	}
	switch {
	case len(at.Seats) == 0 && !entryCounts:
		at.Unexplained = fmt.Sprintf("spread thin: no function's share of the drain differs beyond its sampling error by %.0f ns/call or more", minNs)
	case at.Explained < 0.5:
		n := len(at.Seats)
		if entryCounts {
			n++
		}
		at.Unexplained = fmt.Sprintf("spread thin: the %d seat(s) found explain %.0f%% of the difference", n, 100*at.Explained)
	}
	return at, nil
}

// interruptionFrames name the kernel functions (by prefix of BaseName)
// that only run when something interrupts the drain: interrupt entry
// (asm_sysvec_apic_timer_interrupt, common_interrupt), softirqs run on
// its exit, and the work on the way back to user space
// (exit_to_user_mode_loop, irqentry_exit_to_user_mode: preemption,
// signals such as the Go runtime's SIGURG).
var interruptionFrames = []string{
	"asm_sysvec_", "sysvec_", "__sysvec_", "asm_common_interrupt", "common_interrupt",
	"handle_softirqs", "__do_softirq", "do_softirq", "irq_exit_rcu", "__irq_exit_rcu",
	"exit_to_user_mode_loop", "irqentry_exit_to_user_mode", "preempt_schedule", "arch_do_signal_or_restart",
}

// isInterruption says frames hold a frame of interruptionFrames.
func isInterruption(frames []Frame) bool {
	for _, f := range frames {
		if f.Kernel && hasPrefix(interruptionFrames, BaseName(f.Func)) {
			return true
		}
	}
	return false
}

// interrupted counts the samples of s inside an interruption.
func interrupted(s *side) uint64 {
	var n uint64
	for _, st := range s.stacks {
		if isInterruption(st.full) {
			n += st.count
		}
	}
	return n
}

// fkey identifies a function across variants.
type fkey struct {
	name   string
	kernel bool
}

func keyOf(f Frame) fkey { return fkey{f.Func, f.Kernel} }

// cstack is one drain stack of a side: all its frames, for paths and
// hooks, and the frames this side counts.
type cstack struct {
	full   []Frame // innermost first
	frames []Frame // the counted frames, innermost first; frames[0] is the sample's innermost counted frame
	count  uint64
}

// side is one part of one variant's drain (all of it, its own work, its
// shared work, …) with per-function counts. n and callNs are the whole
// variant's, so every part's ns per call is in the same unit and the
// parts add up.
type side struct {
	stacks     []cstack
	n          uint64 // the variant's drain samples
	m          uint64 // the samples in stacks
	callNs     float64
	incl, self map[fkey]uint64
	edges      map[[2]fkey]uint64 // caller → callee, samples with that adjacency
}

// drainSide is the whole drain of v.
func drainSide(v Variant) *side {
	var stacks []cstack
	var n uint64
	for _, st := range v.Profile.Stacks {
		if st.Phase != PhaseDrain || len(st.Frames) == 0 {
			continue
		}
		stacks = append(stacks, cstack{full: st.Frames, frames: st.Frames, count: st.Count})
		n += st.Count
	}
	return newSide(n, float64(v.Drain.Nanoseconds())/float64(v.Calls), stacks)
}

func newSide(n uint64, callNs float64, stacks []cstack) *side {
	s := &side{stacks: stacks, n: n, callNs: callNs,
		incl: map[fkey]uint64{}, self: map[fkey]uint64{}, edges: map[[2]fkey]uint64{}}
	for _, st := range stacks {
		s.m += st.count
		if len(st.frames) == 0 {
			continue
		}
		s.self[keyOf(st.frames[0])] += st.count
		seen := map[fkey]bool{}
		for i, f := range st.frames {
			k := keyOf(f)
			if !seen[k] {
				seen[k] = true
				s.incl[k] += st.count
			}
			if i+1 < len(st.frames) {
				s.edges[[2]fkey{keyOf(st.frames[i+1]), k}] += st.count
			}
		}
	}
	return s
}

// ns converts a count into ns per call with its variance.
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
