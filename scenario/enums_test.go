package scenario

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEnumText pins every constant to its YAML text (the tables in
// enums.go are indexed by the constants' values) and checks that the text
// decodes back to the constant.
func TestEnumText(t *testing.T) {
	tests := []struct {
		v    textValue
		text string
		back func(string) (textValue, error)
	}{
		{PolicyFIFO, "fifo", unmarshal[Policy]}, {PolicyRR, "rr", unmarshal[Policy]}, {PolicyOther, "other", unmarshal[Policy]},
		{MethodRecvFrom, "recvfrom", unmarshal[Method]}, {MethodRecvMsg, "recvmsg", unmarshal[Method]}, {MethodRecvMMsg, "recvmmsg", unmarshal[Method]},
		{OverrunSkip, "skip", unmarshal[Overrun]}, {OverrunCatchUp, "catchup", unmarshal[Overrun]},
		{EndpointUDP, "udp", unmarshal[EndpointKind]}, {EndpointTap, "tap", unmarshal[EndpointKind]},
		{NoiseSpin, "spin", unmarshal[NoiseKind]}, {NoiseMemory, "memory", unmarshal[NoiseKind]}, {NoiseSyscall, "syscall", unmarshal[NoiseKind]},
		{NoiseMessaging, "messaging", unmarshal[NoiseKind]}, {NoiseFileWrite, "file_write", unmarshal[NoiseKind]}, {NoiseUDP, "udp", unmarshal[NoiseKind]},
		{ProbeTapSend, "tap_send", unmarshal[ProbeKind]}, {ProbeFileWrite, "file_write", unmarshal[ProbeKind]}, {ProbeMessaging, "messaging", unmarshal[ProbeKind]},
		{SpreadEven, "even", unmarshal[Spread]}, {SpreadBurst, "burst", unmarshal[Spread]}, {SpreadPoisson, "poisson", unmarshal[Spread]},
		{ClockAuto, "auto", unmarshal[Clock]}, {ClockTSC, "tsc", unmarshal[Clock]}, {ClockMonotonic, "monotonic", unmarshal[Clock]}, {ClockCycles, "cycles", unmarshal[Clock]},
		{NamespaceHost, "host", unmarshal[Namespace]}, {NamespacePrivate, "private", unmarshal[Namespace]},
		{SyscallGetppid, "getppid", unmarshal[Syscall]}, {SyscallClockGettime, "clock_gettime", unmarshal[Syscall]}, {SyscallSchedYield, "sched_yield", unmarshal[Syscall]},
		{TransportSocket, "socket", unmarshal[Transport]}, {TransportPipe, "pipe", unmarshal[Transport]},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := tt.v.String(); got != tt.text {
				t.Errorf("String() = %q, want %q", got, tt.text)
			}
			if b, err := tt.v.MarshalText(); err != nil || string(b) != tt.text {
				t.Errorf("MarshalText() = %q, %v", b, err)
			}
			if back, err := tt.back(tt.text); err != nil || back != tt.v {
				t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tt.text, back, err, tt.v)
			}
		})
	}
}

// textValue is what TestEnumText needs of every enum type.
type textValue interface {
	String() string
	MarshalText() ([]byte, error)
}

// unmarshal decodes s into a new T.
func unmarshal[T textValue, PT interface {
	*T
	UnmarshalText([]byte) error
}](s string) (textValue, error) {
	var v T
	err := PT(&v).UnmarshalText([]byte(s))
	return v, err
}

// TestEnumEdges: the zero value is unset (empty text, not Valid), a value
// outside the table neither marshals nor validates, and an unknown text is
// an error listing the allowed values, leaving the value unchanged.
func TestEnumEdges(t *testing.T) {
	var p Policy
	if p.Valid() || p.String() != "" {
		t.Errorf("zero Policy: Valid %v, String %q", p.Valid(), p.String())
	}
	if b, err := p.MarshalText(); err != nil || len(b) != 0 {
		t.Errorf("zero Policy marshals to %q, %v; want empty", b, err)
	}
	bad := Policy(9)
	if bad.Valid() || bad.String() != "policy(9)" {
		t.Errorf("Policy(9): Valid %v, String %q", bad.Valid(), bad.String())
	}
	if _, err := bad.MarshalText(); err == nil {
		t.Error("Policy(9) marshals")
	}
	p = PolicyRR
	err := p.UnmarshalText([]byte("deadline"))
	if err == nil || err.Error() != `unknown policy "deadline" (allowed: fifo, rr, other)` || p != PolicyRR {
		t.Errorf("UnmarshalText(deadline) = %v, value %v", err, p)
	}
	if err := p.UnmarshalText(nil); err != nil || p != 0 {
		t.Errorf("UnmarshalText(\"\") = %v, value %v; want unset", err, p)
	}
}

// TestEnumJSON: summary.json holds the spec as JSON; enums stay text.
func TestEnumJSON(t *testing.T) {
	s := mustLoad(t, "endpoints: [{count: 1}]\ntraffic: [{endpoint: ep0, rate: 1, spread: poisson}]\nreaders: [{endpoints: [ep0], method: recvmmsg}]\nnoise: [{kind: syscall, threads: 1}]\n")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"clock":"auto"`, `"namespace":"host"`, `"kind":"udp"`, `"spread":"poisson"`, `"policy":"fifo"`,
		`"method":"recvmmsg"`, `"overrun":"skip"`, `"kind":"syscall"`, `"syscall":"getppid"`, `"policy":"other"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// TestEnumSoftError: a value spelled wrong in the file does not stop Load;
// Validate lists it at its place with every other problem, once, and a
// --set of the field clears it.
func TestEnumSoftError(t *testing.T) {
	s := mustLoad(t, "readers:\n  - policy: fiffo\n    priority: 120\n")
	want := "scenario x.yaml: 2 problems\n" +
		"x.yaml:2:13: readers[0].policy: unknown policy \"fiffo\" (allowed: fifo, rr, other)\n" +
		"x.yaml:3:15: readers[0].priority: 120 out of range (allowed: 1–99)"
	if err := s.Validate(Host{NumCPU: 2}); err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
	if err := s.Apply([]string{"readers[0].policy=rr"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(Host{NumCPU: 2}); err == nil || strings.Contains(err.Error(), "fiffo") {
		t.Errorf("after --set policy: %v", err)
	}
}
