package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const applyDoc = "endpoints: [{name: ep0, count: 1}, {name: ep1, count: 2}]\n" +
	"traffic: [{endpoint: ep0, interval: 1ms}]\n" +
	"readers: [{endpoints: [ep0]}]\n" +
	"noise: [{threads: 2, cpus: [0]}]\n"

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		set   string
		check func(*Spec) bool
	}{
		{"duration", "duration=2s", func(s *Spec) bool { return s.Duration == Duration(2*time.Second) }},
		{"method", "readers[0].method=recvmsg", func(s *Spec) bool { return s.Readers[0].Method == MethodRecvMsg }},
		{"count", "endpoints[0].count=100", func(s *Spec) bool { return s.Endpoints[0].Count == 100 }},
		{"threads zero", "noise[0].threads=0", func(s *Spec) bool { return s.Noise[0].Threads == 0 }},
		{"pin sender", "traffic[0].cpu=1", func(s *Spec) bool { return s.Traffic[0].CPU != nil && *s.Traffic[0].CPU == 1 }},
		{"unpin sender", "traffic[0].cpu=", func(s *Spec) bool { return s.Traffic[0].CPU == nil }},
		{"list", "readers[0].endpoints=ep0, ep1", func(s *Spec) bool {
			return len(s.Readers[0].Endpoints) == 2 && s.Readers[0].Endpoints[1] == "ep1"
		}},
		{"counters", "readers[0].counters=instructions,branch-misses", func(s *Spec) bool {
			return len(s.Readers[0].Counters) == 2 && s.Readers[0].Counters[1] == "branch-misses"
		}},
		{"empty list", "readers[0].endpoints=", func(s *Spec) bool { return len(s.Readers[0].Endpoints) == 0 }},
		{"int list", "noise[0].cpus=1,0", func(s *Spec) bool { return len(s.Noise[0].CPUs) == 2 && s.Noise[0].CPUs[0] == 1 }},
		{"list element", "noise[0].cpus[0]=1", func(s *Spec) bool { return s.Noise[0].CPUs[0] == 1 }},
		{"size", "endpoints[1].rcvbuf=1MiB", func(s *Spec) bool { return s.Endpoints[1].RcvBuf == 1<<20 }},
		{"report", "report.overflow=9000", func(s *Spec) bool { return s.Report.Overflow == 9000 }},
		{"value with equals sign", "description=a=b", func(s *Spec) bool { return s.Description == "a=b" }},
		{"policy re-derives a defaulted priority", "readers[0].policy=other", func(s *Spec) bool {
			return s.Readers[0].Policy == PolicyOther && s.Readers[0].Priority == 0
		}},
		{"enum value trimmed", "readers[0].overrun= catchup ", func(s *Spec) bool { return s.Readers[0].Overrun == OverrunCatchUp }},
		{"soak defaults after Load", "duration=0", func(s *Spec) bool {
			return s.Interval == Duration(10*time.Second) && s.LogChunk == 16<<20
		}},
		{"noise kind re-derives its parameters", "noise[0].kind=udp", func(s *Spec) bool {
			return s.Noise[0].Size == 64 && s.Noise[0].Rate == 10000
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(applyDoc))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply([]string{tt.set}); err != nil {
				t.Fatalf("Apply(%q): %v", tt.set, err)
			}
			if !tt.check(s) {
				t.Errorf("Apply(%q) gave %+v", tt.set, s)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name string
		set  string
		want string
	}{
		{"unknown top-level", "durration=1s", "x.yaml: --set durration: unknown field \"durration\" (allowed: name, description, duration, interval, log_chunk, log_limit, warmup, clock, rounds, repeat, processes, cpu_dma_latency, allow_rt_noise, housekeeping_cpus, slice, interleave, requires, network, endpoints, traffic, readers, noise, probes, variants, report, profile)"},
		{"unknown nested", "readers[0].prority=1", "--set readers[0].prority: unknown field \"prority\" (allowed: name, endpoints, cpu, policy, priority, period, method, batch, overrun, max_backlog, threshold, breaktrace, counters, controls, seccomp)"},
		{"index out of range", "readers[1].method=recvmsg", "--set readers[1]: index 1 out of range (allowed: 0–0)"},
		{"index into empty list", "variants[0].name=a", "--set variants[0]: index 0 out of range (allowed: none: the list is empty)"},
		{"index a scalar", "duration[0]=1s", "--set duration: not a list, cannot index"},
		{"field of a scalar", "duration.x=1s", "--set duration: has no field \"x\""},
		{"wrong type", "endpoints[0].count=abc", "--set endpoints[0].count: expected an integer, got \"abc\""},
		{"wrong list item", "noise[0].cpus=0,x", "--set noise[0].cpus: item 1: expected an integer, got \"x\""},
		{"bad duration", "duration=10", "--set duration: invalid duration \"10\""},
		{"negative size", "endpoints[0].rcvbuf=-1", "--set endpoints[0].rcvbuf: negative size"},
		{"section", "report=1", "--set report: is a section, set one of its fields (allowed: bucket_width, bucket_origin, overflow)"},
		{"list of sections", "readers=1", "--set readers: is a list of sections, set a field of one entry (allowed: e.g. [0].name)"},
		{"map", "variants=1", "is a list of sections"},
		{"unknown enum value", "readers[0].method=read", "x.yaml: --set readers[0].method: unknown method \"read\" (allowed: recvfrom, recvmsg, recvmmsg)"},
		{"unknown noise kind", "noise[0].kind=disk", "--set noise[0].kind: unknown kind \"disk\" (allowed: spin, memory, syscall, messaging, file_write, udp)"},
		{"missing equals", "duration", "--set duration: missing '='"},
		{"malformed path", "readers[x].cpu=1", "--set readers[x].cpu: malformed path"},
		{"empty path", "=1", "malformed path"},
		{"trailing dot", "duration.=1", "malformed path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(applyDoc))
			if err != nil {
				t.Fatal(err)
			}
			before := s.Clone()
			err = s.Apply([]string{tt.set})
			if err == nil {
				t.Fatalf("Apply(%q) succeeded", tt.set)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant substring\n%s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("not ErrInvalid")
			}
			var e *Error
			if errors.As(err, &e) && e.Line != 0 {
				t.Errorf("--set error has Line %d, want 0", e.Line)
			}
			if before.Duration != s.Duration || before.Endpoints[0].Count != s.Endpoints[0].Count || len(before.Noise[0].CPUs) != len(s.Noise[0].CPUs) {
				t.Errorf("failed Apply changed the spec")
			}
		})
	}
}

// TestApplyThenValidate checks that a bad --set value is reported without
// a line, not at the line of the value it replaced.
func TestApplyThenValidate(t *testing.T) {
	s, err := Load("x.yaml", []byte(applyDoc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]string{"readers[0].priority=120", "duration=1s"}); err != nil {
		t.Fatal(err)
	}
	err = s.Validate(Host{NumCPU: 2})
	const want = "scenario x.yaml: 1 problem\nx.yaml: --set readers[0].priority: 120 out of range (allowed: 1–99)"
	if err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
	if p := s.Pos("readers[0].priority"); p != (Pos{}) {
		t.Errorf("Pos of a --set value = %v, want zero", p)
	}
}

func TestApplyCollectsAll(t *testing.T) {
	s, err := Load("x.yaml", []byte(applyDoc))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Apply([]string{"a=1", "duration=3s", "b=2"})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("Apply = %v, want 2 problems", err)
	}
	if s.Duration != Duration(3*time.Second) {
		t.Errorf("good entry not applied: %v", s.Duration)
	}
}

// TestSetBlamesCommandLine: a bad value given with --set is reported as
// "--set path", not as if the file held it.
func TestSetBlamesCommandLine(t *testing.T) {
	s, err := Load("x.yaml", []byte("readers:\n  - cpu: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]string{"readers[0].cpu=9", "rounds=0"}); err != nil {
		t.Fatal(err)
	}
	err = s.Validate(Host{NumCPU: 2})
	for _, want := range []string{"x.yaml: --set readers[0].cpu: CPU 9 out of range", "x.yaml: --set rounds: 0 out of range (allowed: 1–1000, or auto)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestSets: Sets lists Apply's entries that took, normalised, in order;
// not ApplyFlag's (the plan shows flags in its own lines), not refused
// ones.
func TestSets(t *testing.T) {
	s, err := Load("x.yaml", []byte(baseDoc+"noise: [{threads: 1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.ApplyFlag("--duration", "duration", "1s")
	_ = s.Apply([]string{" readers[0].cpu=0", "noise[0].colour=red", "noise[0].threads=2"})
	if got, want := strings.Join(s.Sets(), " "), "readers[0].cpu=0 noise[0].threads=2"; got != want {
		t.Errorf("Sets: %q, want %q", got, want)
	}
	if c := s.Clone(); strings.Join(c.Sets(), " ") != strings.Join(s.Sets(), " ") {
		t.Errorf("Clone's Sets: %v", c.Sets())
	}
}
