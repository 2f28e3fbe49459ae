package scenario

import (
	"fmt"
	"strings"
)

// The enumerated fields of a scenario are typed: the YAML text ("fifo") is
// decoded once, by Load or Apply, into a constant (PolicyFIFO) that the
// engine switches on. The zero value of each type means "not set" and never
// survives Load, which fills the default (defaults.go). Each type marshals
// back to its YAML text (MarshalText), so summary.json stays readable and a
// Spec round-trips through encoding/json.

// enumTable names the values of one enumerated type: names[v] is the text
// of value v, names[0] = "" the unset zero value. noun is the word used in
// errors ("unknown policy \"x\"").
type enumTable struct {
	noun  string
	names []string
}

// enumKind supplies the table of one enumerated type; each type has its
// own empty struct implementing it.
type enumKind interface{ table() *enumTable }

// enum is an enumerated scenario value; see the exported aliases below.
type enum[K enumKind] uint8

func (e enum[K]) tab() *enumTable { var k K; return k.table() }

// String returns the YAML text of e ("fifo"), "" when unset, or
// "noun(N)" for a value outside the table.
func (e enum[K]) String() string {
	t := e.tab()
	if int(e) < len(t.names) {
		return t.names[e]
	}
	return fmt.Sprintf("%s(%d)", t.noun, uint8(e))
}

// Valid reports whether e is one of the type's constants (not unset, not
// out of range).
func (e enum[K]) Valid() bool { return e > 0 && int(e) < len(e.tab().names) }

// MarshalText encodes e as its YAML text.
func (e enum[K]) MarshalText() ([]byte, error) {
	if int(e) >= len(e.tab().names) {
		return nil, fmt.Errorf("%s %d out of range", e.tab().noun, uint8(e))
	}
	return []byte(e.String()), nil
}

// UnmarshalText decodes the YAML text of one value; "" is the unset value.
func (e *enum[K]) UnmarshalText(text []byte) error {
	if p := e.parseText(string(text)); p != nil {
		return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
	}
	return nil
}

// parseText is UnmarshalText for the decoder: the problem keeps the
// message and the allowed values apart. e is left unchanged on failure.
func (e *enum[K]) parseText(s string) *problem {
	t := e.tab()
	for i, n := range t.names {
		if n == s {
			*e = enum[K](i)
			return nil
		}
	}
	return &problem{msg: fmt.Sprintf("unknown %s %q", t.noun, s), allowed: e.allowed(), soft: true}
}

// allowed lists the accepted texts, comma-separated, in declaration order.
func (e enum[K]) allowed() string { return strings.Join(e.tab().names[1:], ", ") }

// textEnum is what the decoder needs of any enum[K], without knowing K.
type textEnum interface {
	parseText(string) *problem
	allowed() string
}

var _ textEnum = (*Policy)(nil)

// The enumerated types. Each constant's value indexes its table below.
type (
	// Policy is a thread's scheduling policy: fifo (SCHED_FIFO), rr
	// (SCHED_RR) or other (SCHED_OTHER). The engine converts it to
	// rt.Policy in one place.
	Policy = enum[policyKind]
	// Method is a reader's recv call: recvfrom, recvmsg or recvmmsg.
	Method = enum[methodKind]
	// Overrun is what a reader does after missed ticks: skip (to the
	// next future deadline) or catchup (every missed tick back to back).
	Overrun = enum[overrunKind]
	// EndpointKind is an endpoint group's type: udp or tap.
	EndpointKind = enum[endpointKind]
	// NoiseKind is a noise entry's load: spin, memory, syscall,
	// messaging, file_write or udp.
	NoiseKind = enum[noiseKind]
	// ProbeKind is a probe's measured workload: tap_send, file_write or
	// messaging.
	ProbeKind = enum[probeKind]
	// Spread places a sender's sockets within one interval: even, burst
	// or poisson.
	Spread = enum[spreadKind]
	// Clock is the per-call timer: auto, tsc, monotonic or cycles.
	Clock = enum[clockKind]
	// Namespace is where endpoints live: host or private.
	Namespace = enum[namespaceKind]
	// Syscall is the call a syscall noise loops on: getppid,
	// clock_gettime or sched_yield.
	Syscall = enum[syscallKind]
	// Transport is a messaging probe's channel: socket (an AF_UNIX
	// socketpair) or pipe.
	Transport = enum[transportKind]
	// ProfileEvent is what profiled trials sample: auto, cpu-clock or
	// cycles.
	ProfileEvent = enum[profileEventKind]
	// SeccompProfile is a reader's seccomp filter: none,
	// runtime-default or allow-all.
	SeccompProfile = enum[seccompKind]
)

// The constants of each enumerated type, in the order of its table.
const (
	PolicyFIFO, PolicyRR, PolicyOther Policy = 1, 2, 3

	MethodRecvFrom, MethodRecvMsg, MethodRecvMMsg Method = 1, 2, 3

	OverrunSkip, OverrunCatchUp Overrun = 1, 2

	EndpointUDP, EndpointTap EndpointKind = 1, 2

	NoiseSpin, NoiseMemory, NoiseSyscall     NoiseKind = 1, 2, 3
	NoiseMessaging, NoiseFileWrite, NoiseUDP NoiseKind = 4, 5, 6

	ProbeTapSend, ProbeFileWrite, ProbeMessaging ProbeKind = 1, 2, 3

	SpreadEven, SpreadBurst, SpreadPoisson Spread = 1, 2, 3

	ClockAuto, ClockTSC, ClockMonotonic, ClockCycles Clock = 1, 2, 3, 4

	NamespaceHost, NamespacePrivate Namespace = 1, 2

	SyscallGetppid, SyscallClockGettime, SyscallSchedYield Syscall = 1, 2, 3

	TransportSocket, TransportPipe Transport = 1, 2

	ProfileEventAuto, ProfileEventCPUClock, ProfileEventCycles ProfileEvent = 1, 2, 3

	SeccompNone, SeccompRuntimeDefault, SeccompAllowAll SeccompProfile = 1, 2, 3
)

// One kind type and one table per enum.
type (
	policyKind       struct{}
	methodKind       struct{}
	overrunKind      struct{}
	endpointKind     struct{}
	noiseKind        struct{}
	probeKind        struct{}
	spreadKind       struct{}
	clockKind        struct{}
	namespaceKind    struct{}
	syscallKind      struct{}
	transportKind    struct{}
	profileEventKind struct{}
	seccompKind      struct{}
)

var (
	policyTable       = enumTable{"policy", []string{"", "fifo", "rr", "other"}}
	methodTable       = enumTable{"method", []string{"", "recvfrom", "recvmsg", "recvmmsg"}}
	overrunTable      = enumTable{"overrun", []string{"", "skip", "catchup"}}
	endpointTable     = enumTable{"kind", []string{"", "udp", "tap"}}
	noiseTable        = enumTable{"kind", []string{"", "spin", "memory", "syscall", "messaging", "file_write", "udp"}}
	probeTable        = enumTable{"kind", []string{"", "tap_send", "file_write", "messaging"}}
	spreadTable       = enumTable{"spread", []string{"", "even", "burst", "poisson"}}
	clockTable        = enumTable{"clock", []string{"", "auto", "tsc", "monotonic", "cycles"}}
	namespaceTable    = enumTable{"namespace", []string{"", "host", "private"}}
	syscallTable      = enumTable{"syscall", []string{"", "getppid", "clock_gettime", "sched_yield"}}
	transportTable    = enumTable{"transport", []string{"", "socket", "pipe"}}
	profileEventTable = enumTable{"event", []string{"", "auto", "cpu-clock", "cycles"}}
	seccompTable      = enumTable{"profile", []string{"", "none", "runtime-default", "allow-all"}}
)

func (policyKind) table() *enumTable       { return &policyTable }
func (methodKind) table() *enumTable       { return &methodTable }
func (overrunKind) table() *enumTable      { return &overrunTable }
func (endpointKind) table() *enumTable     { return &endpointTable }
func (noiseKind) table() *enumTable        { return &noiseTable }
func (probeKind) table() *enumTable        { return &probeTable }
func (spreadKind) table() *enumTable       { return &spreadTable }
func (clockKind) table() *enumTable        { return &clockTable }
func (namespaceKind) table() *enumTable    { return &namespaceTable }
func (syscallKind) table() *enumTable      { return &syscallTable }
func (transportKind) table() *enumTable    { return &transportTable }
func (profileEventKind) table() *enumTable { return &profileEventTable }
func (seccompKind) table() *enumTable      { return &seccompTable }
