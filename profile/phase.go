package profile

import (
	"slices"
	"strings"
)

// Phase is the part of the reader's loop a sample fell in.
type Phase uint8

const (
	// PhaseOther is everything else: Go runtime work, recording, page
	// faults outside the drain, the loop's own bookkeeping.
	PhaseOther Phase = iota
	// PhaseDrain is the drain: inside a receive syscall, or in the user
	// code of the drain step (timing and classifying each call).
	PhaseDrain
	// PhaseSleep is the sleep and wakeup path: clock_nanosleep from entry
	// to return, including the scheduler switching the thread out and in.
	PhaseSleep
)

// Phases lists every phase in order.
var Phases = [...]Phase{PhaseDrain, PhaseSleep, PhaseOther}

// String is "drain", "sleep" or "other", the pprof label value and the
// folded stacks' root frame.
func (p Phase) String() string {
	switch p {
	case PhaseDrain:
		return "drain"
	case PhaseSleep:
		return "sleep"
	}
	return "other"
}

// ParsePhase is the inverse of String; ok is false for other text.
func ParsePhase(s string) (p Phase, ok bool) {
	for _, p := range Phases {
		if p.String() == s {
			return p, true
		}
	}
	return PhaseOther, false
}

// PhaseRule decides a sample's phase from its call chain:
//
//  1. If a kernel frame names a drain syscall or function, the phase is
//     drain; if one names a sleep syscall or function, sleep. A kernel
//     frame's name matches when the name itself, or the syscall it
//     implements (the name without the wrapper prefixes __x64_sys_,
//     __ia32_sys_, __arm64_sys_, __se_sys_, __do_sys_, ___sys_, __sys_,
//     do_, sys_ and without compiler suffixes such as .isra.0), is in
//     the list. So __x64_sys_recvmsg, __sys_recvmsg and ___sys_recvmsg
//     all match "recvmsg", do_nanosleep matches "nanosleep".
//  2. Otherwise the innermost user frame that starts with a DrainUser or
//     SleepUser prefix decides. This catches what the syscall's own
//     frames miss but the call's cost includes: the syscall entry and
//     exit path (entry_SYSCALL_64, do_syscall_64, syscall tracing) before
//     the dispatch names the syscall, interrupts taken during the drain,
//     and the drain's own user code (timing and classifying each call).
//  3. Otherwise the phase is other.
//
// The drain syscalls and the sleep syscalls never nest, so the order of
// rule 1's two tests does not matter. The user prefixes must name code
// that only makes the phase's syscalls.
type PhaseRule struct {
	DrainKernel []string // e.g. "recvmsg", "recvfrom", "recvmmsg"
	SleepKernel []string // e.g. "clock_nanosleep", "hrtimer_nanosleep"
	DrainUser   []string // Go function-name prefixes, e.g. "github.com/rtload/rtload/probe.(*Drain)."
	SleepUser   []string // e.g. "github.com/rtload/rtload/rt.(*Ticker).Wait"
}

// DefaultPhaseRule is the rule for a UDP reader: recvfrom, recvmsg and
// recvmmsg drains (probe.(*Drain) and net/udp's Recv methods in user
// code) woken by clock_nanosleep (rt.(*Ticker).Wait, rt.SleepUntil). Callers with another probe (tap writes, file
// writes) pass their own syscalls.
func DefaultPhaseRule() PhaseRule {
	return PhaseRule{
		DrainKernel: []string{"recvfrom", "recvmsg", "recvmmsg"},
		SleepKernel: []string{"clock_nanosleep", "nanosleep", "hrtimer_nanosleep"},
		DrainUser:   []string{"github.com/rtload/rtload/probe.(*Drain).", "github.com/rtload/rtload/net/udp.(*Recv"},
		SleepUser:   []string{"github.com/rtload/rtload/rt.(*Ticker).Wait", "github.com/rtload/rtload/rt.SleepUntil"},
	}
}

// Classify returns the phase of a call chain, innermost frame first (see
// PhaseRule for the rule).
func (r PhaseRule) Classify(frames []Frame) Phase {
	for _, f := range frames {
		if !f.Kernel {
			continue
		}
		switch name := f.Func; {
		case matchKernel(r.DrainKernel, name):
			return PhaseDrain
		case matchKernel(r.SleepKernel, name):
			return PhaseSleep
		}
	}
	for _, f := range frames {
		if f.Kernel {
			continue // rule 2 holds even under kernel frames of the entry path
		}
		switch {
		case hasPrefix(r.DrainUser, f.Func):
			return PhaseDrain
		case hasPrefix(r.SleepUser, f.Func):
			return PhaseSleep
		}
	}
	return PhaseOther
}

func hasPrefix(prefixes []string, s string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func matchKernel(list []string, name string) bool {
	if len(list) == 0 {
		return false
	}
	base := BaseName(name)
	return slices.Contains(list, name) || slices.Contains(list, base) || slices.Contains(list, SyscallName(base))
}

// BaseName strips what the compiler appends to a kernel function's name
// (".isra.0", ".constprop.0", ".part.0", ".cold") and a module suffix
// (" [udp_tunnel]").
func BaseName(name string) string {
	if i := strings.IndexByte(name, ' '); i >= 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}

// syscallPrefixes are stripped by SyscallName, longest first.
var syscallPrefixes = []string{
	"__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__x32_compat_sys_", "__se_sys_", "__do_sys_",
	"___sys_", "__sys_", "do_", "sys_",
}

// SyscallName returns the syscall a kernel function implements by its
// naming convention: "__x64_sys_recvmsg", "___sys_recvmsg" and
// "do_recvmmsg" give "recvmsg", "recvmsg" and "recvmmsg". Names without
// such a prefix come back unchanged.
func SyscallName(name string) string {
	for _, p := range syscallPrefixes {
		if s, ok := strings.CutPrefix(name, p); ok {
			return s
		}
	}
	return name
}
