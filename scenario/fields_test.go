package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestValidateHostFields covers the fields that meet the host: fixed CPUs
// against the allowed set, cpu: auto, housekeeping_cpus; and the sender,
// backlog, slice and requires fields. Each row names its host.
func TestValidateHostFields(t *testing.T) {
	two := Host{NumCPU: 2}
	only0 := Host{NumCPU: 2, Allowed: []int{0}} // taskset -c 0
	tests := []struct {
		name string
		host Host
		yaml string
		want string // substring of the error; "" = valid
	}{
		// cpu: auto and the allowed set (issue 18).
		{"auto with one allowed CPU", only0, "readers: [{cpu: auto}]\n", ""},
		{"auto with the set unknown", two, "readers: [{cpu: auto}]\n", ""},
		{"fixed CPU outside the allowed set", only0, "readers: [{cpu: 1}]\n",
			"x.yaml:1:17: readers[0].cpu: CPU 1 is not one this process may use (allowed: 0, the CPUs this process may use (sched_getaffinity: taskset, a container's cpuset); or auto)"},
		{"sender CPU outside the allowed set", only0, baseEP + "traffic: [{endpoint: e, interval: 1ms, cpus: [0, 1]}]\n" + baseRd,
			"traffic[0].cpus[1]: CPU 1 is not one this process may use (allowed: 0,"},
		{"noise CPU outside a cpuset", Host{NumCPU: 8, Allowed: []int{2, 3, 4, 5}}, baseDoc + "noise: [{threads: 1, cpus: [6]}]\n",
			"noise[0].cpus[0]: CPU 6 is not one this process may use (allowed: 2,3,4,5,"},
		{"auto with every allowed CPU taken", only0, "readers: [{cpu: 0}, {cpu: auto}]\n",
			"readers[1].cpu: auto: every allowed CPU (0) already has a reader"},

		// housekeeping_cpus (issue 14).
		{"housekeeping beside the reader", two, "housekeeping_cpus: [0]\nreaders: [{cpu: 1}]\n", ""},
		{"housekeeping on the reader's CPU", two, "housekeeping_cpus: [0, 1]\nreaders: [{name: rt, cpu: 1}]\n",
			"housekeeping_cpus: CPU 1 is reader rt's CPU: rtload's own threads would run there (allowed: CPUs no reader uses (reader rt is on CPU 1))"},
		{"housekeeping CPU twice", two, "housekeeping_cpus: [0, 0]\nreaders: [{cpu: 1}]\n", "housekeeping_cpus[1]: CPU 0 listed twice (allowed: each CPU once)"},
		{"housekeeping CPU not allowed", only0, "housekeeping_cpus: [1]\nreaders: [{cpu: 0}]\n", "housekeeping_cpus[0]: CPU 1 is not one this process may use"},

		// Senders (issue 14).
		{"sender at fifo 50", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, policy: fifo, priority: 50}]\n" + baseRd, ""},
		{"sender priority for other", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, policy: other, priority: 5}]\n" + baseRd,
			"traffic[0].priority: 5 out of range (allowed: 0 for policy other)"},
		{"sender policy unknown", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, policy: idle}]\n" + baseRd,
			"traffic[0].policy: unknown policy \"idle\" (allowed: fifo, rr, other)"},
		{"sender nice with fifo", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, policy: fifo, nice: -5}]\n" + baseRd,
			"traffic[0].nice: nice -5 with policy fifo (allowed: 0 for policy fifo/rr (nice applies to policy other))"},
		{"sender nice out of range", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, policy: other, nice: 30}]\n" + baseRd,
			"traffic[0].nice: 30 out of range (allowed: -20–19)"},
		{"sender cpu and cpus", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, cpu: 0, cpus: [1]}]\n" + baseRd,
			"traffic[0].cpu: cpu 0 and cpus [1] both given (allowed: one of cpu and cpus (cpu: N is cpus: [N]))"},
		{"sender cpu and the same cpus", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, cpu: 1, cpus: [1]}]\n" + baseRd, ""},
		{"rate tolerance zero", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, rate_tolerance: 0}]\n" + baseRd,
			"traffic[0].rate_tolerance: 0% out of range (allowed: > 0% and ≤ 100% of the target rate (default 0.5%))"},
		{"rate tolerance in percent", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, rate_tolerance: 2%}]\n" + baseRd, ""},
		{"max send lag negative", two, baseEP + "traffic: [{endpoint: e, interval: 1ms, max_send_lag: -1ms}]\n" + baseRd,
			"traffic[0].max_send_lag: -1ms out of range (allowed: > 0 (default: the interval))"},

		// Readers' catch-up backlog (issue 14).
		{"max backlog with catchup", two, "readers: [{overrun: catchup, max_backlog: 5}]\n", ""},
		{"max backlog with skip", two, "readers: [{overrun: skip, max_backlog: 5}]\n",
			"readers[0].max_backlog: max_backlog 5 with overrun skip (allowed: overrun: catchup (skip never catches up))"},
		{"max backlog negative", two, "readers: [{overrun: catchup, max_backlog: -1}]\n", "readers[0].max_backlog: -1 out of range (allowed: 0–1000000)"},

		// Soak slices (issue 14).
		{"slice of a soak", two, "duration: 0\nslice: 5m\nreaders: [{}]\nvariants: [{name: a}, {name: b}]\n", ""},
		{"slice too short", two, "duration: 0\nslice: 500ms\nreaders: [{}]\nvariants: [{name: a}, {name: b}]\n",
			"slice: 500ms out of range (allowed: ≥ 1s, ≥ interval (10s) and > warmup (0s))"},
		{"slice below the interval", two, "duration: 0\ninterval: 30s\nslice: 20s\nreaders: [{}]\nvariants: [{name: a}, {name: b}]\n",
			"slice: 20s out of range (allowed: ≥ 1s, ≥ interval (30s)"},

		// requires (issue 17): the spelling; the machine is the engine's.
		{"requires of every kind", two, "requires:\n  config: [CONFIG_HARDENED_USERCOPY=y, 'CONFIG_LSM=\"landlock\"']\n  cmdline: [init_on_alloc=1, nosmt]\n" +
			"  kernel: '>= 5.10, < 7'\n  features: [tun, cycles, counters]\n  cpus: 2\nreaders: [{}]\n", ""},
		{"config option twice", two, "requires: {config: [CONFIG_HZ=250, CONFIG_HZ=1000]}\nreaders: [{}]\n",
			"requires.config[1]: CONFIG_HZ required twice (also requires.config[0]) (allowed: each option once)"},
		{"parameter twice, - and _ alike", two, "requires: {cmdline: [init_on_free=1, init-on-free=0]}\nreaders: [{}]\n",
			"requires.cmdline[1]: init_on_free required twice (also requires.cmdline[0])"},
		{"feature unknown", two, "requires: {features: [tun, gpu]}\nreaders: [{}]\n",
			"x.yaml:1:28: requires.features[1]: unknown feature \"gpu\" (allowed: tun, cycles, counters)"},
		{"feature twice", two, "requires: {features: [tun, tun]}\nreaders: [{}]\n", "requires.features[1]: feature tun listed twice"},
		{"requires cpus negative", two, "requires: {cpus: -1}\nreaders: [{}]\n", "requires.cpus: -1 out of range (allowed: 0–65536)"},
		{"a variant cannot set requires", two, "readers: [{}]\nvariants: [{name: on, set: {requires.cmdline: init_on_alloc=1}}]\n",
			"variants[0]: requires.cmdline: a variant cannot set requires (allowed: requires in the scenario itself: a kernel setting needs another boot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustLoad(t, tt.yaml)
			before := s.Clone()
			err := s.Validate(tt.host)
			if diff := cmp.Diff(before, s, cmp.AllowUnexported(Spec{})); diff != "" {
				t.Errorf("Validate mutated the spec (-before +after):\n%s", diff)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want == "":
			case err == nil:
				t.Fatalf("Validate passed, want %q", tt.want)
			case !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalid):
				t.Errorf("error\n%v\nwant substring\n%s", err, tt.want)
			}
		})
	}
}

// TestRequiresDecode checks the requires entries' spelling rules, which
// Load applies (a bad entry is a decode error at its place) and the
// canonical forms stored.
func TestRequiresDecode(t *testing.T) {
	s := mustLoad(t, "requires:\n  config: [' CONFIG_HZ = 1000 ', 'CONFIG_LSM=\"a,b\"']\n  cmdline: [init-on-alloc=1, nosmt]\n  kernel: '>=5.10 ,<6.2'\nreaders: [{}]\n")
	r := s.Requires
	got := []any{r.Config, r.Config[0].Name(), r.Config[1].Value(), r.Cmdline, r.Cmdline[0].Name(), r.Cmdline[1].HasValue(), r.Kernel}
	want := []any{[]ConfigOption{"CONFIG_HZ=1000", "CONFIG_LSM=a,b"}, "CONFIG_HZ", "a,b",
		[]CmdlineParam{"init_on_alloc=1", "nosmt"}, "init_on_alloc", false, VersionRange(">= 5.10, < 6.2")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"requires: {config: [HARDENED_USERCOPY=y]}\n", `x.yaml:1:21: requires.config[0]: "HARDENED_USERCOPY" is not a kernel config option name (allowed: CONFIG_NAME=value`},
		{"requires: {config: [CONFIG_HZ]}\n", `requires.config[0]: config requirement "CONFIG_HZ" has no value`},
		{"requires: {cmdline: [\"a b=1\"]}\n", `requires.cmdline[0]: "a b" is not a kernel parameter name`},
		{"requires: {cmdline: [init_on_alloc=]}\n", `requires.cmdline[0]: parameter init_on_alloc: value "" is empty or holds spaces or quotes`},
		{"requires: {kernel: '5.10'}\n", `requires.kernel: kernel "5.10": "5.10" has no comparison operator (allowed: comparisons joined by commas`},
		{"requires: {kernel: '>= 5.x'}\n", `requires.kernel: kernel ">= 5.x": "5.x" is not a version`},
		{"requires: {kernel: '>= 5.10,'}\n", `kernel ">= 5.10,": "" has no comparison operator`},
	} {
		_, err := Load("x.yaml", []byte(tt.yaml+"readers: [{}]\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

// TestVersionRange checks Allows on uname -r releases.
func TestVersionRange(t *testing.T) {
	tests := []struct {
		rng, rel string
		allowed  bool
	}{
		{">= 5.10", "6.1.0-18-amd64", true},
		{">= 5.10", "5.10.0", true},
		{">= 5.10", "5.4.0-150-generic", false},
		{">= 5.10", "5.9", false},
		{"> 5.10", "5.10.0-rc1", false},
		{"> 5.10", "5.10.1", true},
		{">= 5.4, < 6.2", "6.1.55", true},
		{">= 5.4, < 6.2", "6.2.0", false},
		{"== 6.18", "6.18.0-fc", true},
		{"== 6.18", "6.18.44-fc-v857", false}, // 6.18 is 6.18.0
		{"!= 6.1", "6.1.0", false},
		{"<= 4", "4.0.0", true},
		{"", "anything", true},
	}
	for _, tt := range tests {
		var r VersionRange
		if tt.rng != "" {
			if p := r.parseText(tt.rng); p != nil {
				t.Fatalf("%q: %s", tt.rng, p.msg)
			}
		}
		got, ok := r.Allows(tt.rel)
		if !ok || got != tt.allowed {
			t.Errorf("%q allows %q = %v (ok %v), want %v", tt.rng, tt.rel, got, ok, tt.allowed)
		}
	}
	if _, ok := VersionRange(">= 5").Allows("weird"); ok {
		t.Errorf("release without a version: ok")
	}
	for s, want := range map[string]Version{"6.1.0-18-amd64": {6, 1, 0}, "5.10": {5, 10, 0}, "4": {4, 0, 0}, "6.1.2.3": {6, 1, 2}, "5.": {5, 0, 0}} {
		if v, _, ok := ParseVersion(s); !ok || v != want {
			t.Errorf("ParseVersion(%q) = %v %v, want %v", s, v, ok, want)
		}
	}
}

// TestSenderDefaults pins the sender's default scheduling rule (issue 14)
// and the defaults that follow other fields.
func TestSenderDefaults(t *testing.T) {
	const ep = "endpoints: [{count: 1}]\n"
	type sched struct {
		Policy   Policy
		Priority int
	}
	tests := []struct {
		name string
		yaml string
		want sched
	}{
		{"no noise: other", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{}]\n", sched{PolicyOther, 0}},
		// The default scenario's case: 5 unpinned spinners.
		{"spin noise: fifo 10 below the reader", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{}]\nnoise: [{threads: 5}]\n", sched{PolicyFIFO, 70}},
		{"below the lowest rt reader", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{priority: 90}, {policy: rr, priority: 40}, {policy: other}]\nnoise: [{threads: 1}]\n", sched{PolicyFIFO, 30}},
		{"at least 1", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{priority: 5}]\nnoise: [{threads: 1}]\n", sched{PolicyFIFO, 1}},
		{"no rt readers: 1", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{policy: other}]\nnoise: [{threads: 1}]\n", sched{PolicyFIFO, 1}},
		{"noise on other CPUs: other", ep + "traffic: [{endpoint: ep0, interval: 20ms, cpus: [0]}]\nreaders: [{}]\nnoise: [{threads: 2, cpus: [1]}]\n", sched{PolicyOther, 0}},
		{"noise on the sender's CPU", ep + "traffic: [{endpoint: ep0, interval: 20ms, cpu: 1}]\nreaders: [{}]\nnoise: [{threads: 2, cpus: [1]}]\n", sched{PolicyFIFO, 70}},
		{"a paced udp flood is not CPU-bound", ep + "traffic: [{endpoint: ep0, interval: 20ms}]\nreaders: [{}]\nnoise: [{kind: udp, threads: 1}]\n", sched{PolicyOther, 0}},
		{"a given policy keeps its priority rule", ep + "traffic: [{endpoint: ep0, interval: 20ms, policy: rr}]\nreaders: [{}]\n", sched{PolicyRR, 70}},
		{"a given policy other", ep + "traffic: [{endpoint: ep0, interval: 20ms, policy: other}]\nreaders: [{}]\nnoise: [{threads: 1}]\n", sched{PolicyOther, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustLoad(t, tt.yaml)
			if got := (sched{s.Traffic[0].Policy, s.Traffic[0].Priority}); got != tt.want {
				t.Errorf("sender %+v, want %+v", got, tt.want)
			}
			if err := s.Validate(Host{NumCPU: 2}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}

	// Defaults that follow: a variant turning the reader to other moves the
	// sender to priority 1; cpus follow cpu; the lag bound follows the
	// rate; max_backlog follows overrun; slice follows a soak of variants.
	s := mustLoad(t, ep+"traffic: [{endpoint: ep0, rate: 200, cpu: 1}]\nreaders: [{}]\nnoise: [{threads: 1}]\n"+
		"variants: [{name: a}, {name: b, set: {readers[0].policy: other, readers[0].overrun: catchup, traffic[0].cpu: 0}}]\n")
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	a, b := trials[0].Spec, trials[1].Spec
	got := []any{a.Traffic[0].Priority, b.Traffic[0].Priority, a.Traffic[0].CPUs, b.Traffic[0].CPUs, a.Traffic[0].MaxSendLag,
		a.Readers[0].MaxBacklog, b.Readers[0].MaxBacklog, a.Slice}
	want := []any{70, 1, []int{1}, []int{0}, Duration(5 * time.Millisecond), 0, 100, Duration(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := s.Apply([]string{"duration=0"}); err != nil || s.Slice != Duration(time.Minute) {
		t.Errorf("soak of two variants: slice %s (%v), want 1m0s", s.Slice, err)
	}
}
