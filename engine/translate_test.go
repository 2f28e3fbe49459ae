package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/profile/sampler"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/rt/seccomp"
	"github.com/rtload/rtload/scenario"
)

// The spec → config translations are pure: these tables need no kernel,
// no privilege and no clock.

func intp(v int) *int { return &v }

func trialOf(sp scenario.Spec) scenario.Trial { return scenario.Trial{Spec: sp} }

// TestGOMAXPROCSBudget: one P per locked thread of the largest trial, on
// top of NumCPU + 4.
func TestGOMAXPROCSBudget(t *testing.T) {
	readers := []scenario.Reader{{Name: "a"}, {Name: "b"}}
	traffic := []scenario.Traffic{{Endpoint: "s"}}
	for _, tt := range []struct {
		name   string
		trials []scenario.Trial
		ncpu   int
		want   int
	}{
		{"no trials: the spare only", nil, 2, 6},
		{"empty trial", []scenario.Trial{trialOf(scenario.Spec{})}, 2, 6},
		{"2 readers + 1 sender", []scenario.Trial{trialOf(scenario.Spec{Readers: readers, Traffic: traffic})}, 2, 9},
		{"spin noise: threads + 1", []scenario.Trial{trialOf(scenario.Spec{Noise: []scenario.Noise{{Kind: scenario.NoiseSpin, Threads: 5}}})}, 4, 4 + 4 + 6},
		// messaging noise: 2 × groups × fds workers + its round runner.
		{"messaging noise 2×3", []scenario.Trial{trialOf(scenario.Spec{Noise: []scenario.Noise{{Kind: scenario.NoiseMessaging, Groups: 2, FDs: 3}}})}, 2, 6 + 12 + 1},
		// a messaging probe: its thread + 2 × groups × fds hackbench workers.
		{"messaging probe 10×20", []scenario.Trial{trialOf(scenario.Spec{Probes: []scenario.Probe{{Kind: scenario.ProbeMessaging, Groups: 10, FDs: 20}}})}, 2, 6 + 1 + 400},
		{"tap_send probe: its thread", []scenario.Trial{trialOf(scenario.Spec{Probes: []scenario.Probe{{Kind: scenario.ProbeTapSend}}})}, 2, 7},
		// the largest trial decides, not the sum.
		{"largest trial wins", []scenario.Trial{
			trialOf(scenario.Spec{Readers: readers}),
			trialOf(scenario.Spec{Readers: readers, Traffic: traffic, Noise: []scenario.Noise{{Kind: scenario.NoiseSpin, Threads: 1}}}),
			trialOf(scenario.Spec{Traffic: traffic}),
		}, 2, 6 + 2 + 1 + 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := gomaxprocsBudget(tt.trials, tt.ncpu); got != tt.want {
				t.Errorf("gomaxprocsBudget = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSendInterval: the interval wins; a rate alone gives 1/rate.
func TestSendInterval(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   scenario.Traffic
		want time.Duration
	}{
		{"interval", scenario.Traffic{Interval: scenario.Duration(20 * time.Millisecond)}, 20 * time.Millisecond},
		{"rate 50/s", scenario.Traffic{Rate: 50}, 20 * time.Millisecond},
		{"interval over rate", scenario.Traffic{Interval: scenario.Duration(time.Second), Rate: 50}, time.Second},
		{"neither", scenario.Traffic{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sendInterval(tt.in); got != tt.want {
				t.Errorf("sendInterval = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSenderPacer: the spread picks the pacer; its offsets follow the
// interval and socket count.
func TestSenderPacer(t *testing.T) {
	iv := scenario.Duration(20 * time.Millisecond)
	for _, tt := range []struct {
		name string
		in   scenario.Traffic
		want pace.Pacer
	}{
		{"even (default)", scenario.Traffic{Interval: iv}, pace.Even{Count: 4, Interval: 20 * time.Millisecond}},
		{"even", scenario.Traffic{Interval: iv, Spread: scenario.SpreadEven}, pace.Even{Count: 4, Interval: 20 * time.Millisecond}},
		{"burst", scenario.Traffic{Interval: iv, Spread: scenario.SpreadBurst}, pace.Burst{Count: 4, Interval: 20 * time.Millisecond}},
		{"poisson, seeded", scenario.Traffic{Interval: iv, Spread: scenario.SpreadPoisson}, pace.NewPoisson(4, 20*time.Millisecond, 7)},
		{"rate", scenario.Traffic{Rate: 100}, pace.Even{Count: 4, Interval: 10 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := senderPacer(tt.in, 4, 7)
			for n := uint64(0); n < 9; n++ {
				if g, w := got.Next(n), tt.want.Next(n); g != w {
					t.Fatalf("Next(%d) = %v, want %v (%T vs %T)", n, g, w, got, tt.want)
				}
			}
		})
	}
}

// TestSchedTranslations: reader, sender and probe thread scheduling, each
// thread named for its role and exempt from the trial's housekeeping.
func TestSchedTranslations(t *testing.T) {
	hk := new(rt.Housekeeping) // compared by identity
	for _, tt := range []struct {
		name string
		got  rt.Sched
		want rt.Sched
	}{
		{"reader fifo 80 on CPU 1",
			readerSched(scenario.Reader{Name: "rt", CPU: 1, Policy: scenario.PolicyFIFO, Priority: 80}, hk, false),
			rt.Sched{Name: "rtl-rd/rt", Exempt: hk, CPUs: []int{1}, Policy: rt.FIFO, Priority: 80, Mlock: true}},
		{"reader other, degraded allowed, no housekeeping",
			readerSched(scenario.Reader{Name: "r0", CPU: 0, Policy: scenario.PolicyOther}, nil, true),
			rt.Sched{Name: "rtl-rd/r0", CPUs: []int{0}, Policy: rt.Other, Mlock: true, AllowDegraded: true}},
		{"sender unpinned, other at nice 5",
			senderSched(scenario.Traffic{Endpoint: "socks", Policy: scenario.PolicyOther, Nice: 5}, hk, false),
			rt.Sched{Name: "rtl-tx/socks", Exempt: hk, Policy: rt.Other, Nice: 5, TimerSlackNs: 1}},
		// cpus (filled from cpu by the scenario) is what counts, never cpu.
		{"sender pinned, fifo 70 (the default under CPU-bound noise), degraded allowed",
			senderSched(scenario.Traffic{Endpoint: "socks", CPU: intp(3), CPUs: []int{3, 2}, Policy: scenario.PolicyFIFO, Priority: 70, Nice: 5}, hk, true),
			rt.Sched{Name: "rtl-tx/socks", Exempt: hk, CPUs: []int{3, 2}, Policy: rt.FIFO, Priority: 70, TimerSlackNs: 1, AllowDegraded: true}},
		{"probe fifo: memory locked",
			probeSched(scenario.Probe{Name: "tx", Policy: scenario.PolicyFIFO, Priority: 70, CPU: intp(1)}, hk, false),
			rt.Sched{Name: "rtl-pr/tx", Exempt: hk, CPUs: []int{1}, Policy: rt.FIFO, Priority: 70, Mlock: true}},
		{"probe other: not locked",
			probeSched(scenario.Probe{Name: "fs", Policy: scenario.PolicyOther}, nil, true),
			rt.Sched{Name: "rtl-pr/fs", Policy: rt.Other, AllowDegraded: true}},
		{"the writer: named, confined with the machinery",
			writerSched, rt.Sched{Name: "rtl-writer", AllowDegraded: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			same := cmp.Comparer(func(a, b *rt.Housekeeping) bool { return a == b })
			if d := cmp.Diff(tt.want, tt.got, same); d != "" {
				t.Errorf("sched (-want +got):\n%s", d)
			}
		})
	}
}

// fakeEndpoint is an endpoint whose sockets are the given fd numbers
// (never opened, never closed).
func fakeEndpoint(fds ...int) *endpoint { return &endpoint{group: udp.Merge(nil, fds, nil)} }

// TestDrainConfig: a reader drains its endpoints' sockets in the order it
// lists the endpoints.
func TestDrainConfig(t *testing.T) {
	eps := map[string]*endpoint{"a": fakeEndpoint(10, 11, 12), "b": fakeEndpoint(20), "c": fakeEndpoint()}
	set := record.NewSet(record.Layout{Width: 128, Overflow: 1024})
	for _, tt := range []struct {
		name      string
		endpoints []string
		want      []int
	}{
		{"one endpoint", []string{"a"}, []int{10, 11, 12}},
		{"listed order", []string{"b", "a"}, []int{20, 10, 11, 12}},
		{"empty endpoint", []string{"c", "b"}, []int{20}},
		{"timer only", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := scenario.Reader{Endpoints: tt.endpoints}
			cfg := drainConfig(rs, eps, nil, nil, set)
			if d := cmp.Diff(tt.want, cfg.FDs); d != "" || cfg.Set != set {
				t.Errorf("fds (-want +got):\n%s (set kept: %v)", d, cfg.Set == set)
			}
			if gs := readerGroups(rs, eps); len(gs) != len(tt.endpoints) {
				t.Errorf("%d groups for %d endpoints", len(gs), len(tt.endpoints))
			}
		})
	}
}

// TestWakeupLogConfig: named per trial and reader; chunked, capped and
// compressed as the scenario says.
func TestWakeupLogConfig(t *testing.T) {
	dir := &store.Dir{Dir: &safeio.Dir{}}
	rs := scenario.Reader{Name: "rt"}
	for _, tt := range []struct {
		name string
		sp   scenario.Spec
		want wakelog.Config
	}{
		{"one plain file", scenario.Spec{},
			wakelog.Config{Dir: dir.Dir, Base: results.WakeupLogBase(2, "recvmsg", 1, "rt")}},
		{"soak: chunked, capped, gzipped", scenario.Spec{LogChunk: 16 << 20, LogLimit: 1 << 30},
			wakelog.Config{Dir: dir.Dir, Base: results.WakeupLogBase(2, "recvmsg", 1, "rt"), ChunkBytes: 16 << 20, LimitBytes: 1 << 30, Compress: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := wakeupLogConfig(dir, scenario.Trial{Index: 2, Variant: "recvmsg", Round: 1, Spec: tt.sp}, rs, "")
			if got != tt.want {
				t.Errorf("wakeupLogConfig = %+v, want %+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("config does not validate: %v", err)
			}
		})
	}
}

// TestNoiseConfig: every scenario field reaches noise.Config; threads at
// least 1 (messaging counts its own).
func TestNoiseConfig(t *testing.T) {
	for _, tt := range []struct {
		name          string
		in            scenario.Noise
		allowRT, degr bool
		want          noise.Config
	}{
		{"spin, unset threads → 1", scenario.Noise{Kind: scenario.NoiseSpin, Policy: scenario.PolicyOther},
			false, false, noise.Config{Kind: noise.KindSpin, Threads: 1, Policy: rt.Other}},
		{"bursty fifo memory", scenario.Noise{Kind: scenario.NoiseMemory, Threads: 2, CPUs: []int{0, 1}, Policy: scenario.PolicyFIFO, Priority: 10,
			Duty: scenario.Duty{On: scenario.Duration(time.Second), Off: scenario.Duration(3 * time.Second)}, Size: 32 << 20},
			true, true, noise.Config{Kind: noise.KindMemory, Threads: 2, CPUs: []int{0, 1}, Policy: rt.FIFO, Priority: 10, On: time.Second, Off: 3 * time.Second,
				AllowRT: true, AllowDegraded: true, Size: 32 << 20}},
		{"messaging shape", scenario.Noise{Kind: scenario.NoiseMessaging, Threads: 1, Policy: scenario.PolicyOther, Nice: 5, Groups: 2, FDs: 3, Loops: 50, Size: 100},
			false, false, noise.Config{Kind: noise.KindMessaging, Threads: 1, Policy: rt.Other, Nice: 5, Groups: 2, FDs: 3, Loops: 50, Size: 100}},
		{"syscall and udp fields", scenario.Noise{Kind: scenario.NoiseSyscall, Threads: 1, Policy: scenario.PolicyOther, Syscall: scenario.SyscallSchedYield, Rate: 5000, Dir: "/x", Blocks: 9},
			false, false, noise.Config{Kind: noise.KindSyscall, Threads: 1, Policy: rt.Other, Syscall: noise.SyscallSchedYield, Rate: 5000, Dir: "/x", Blocks: 9}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, noiseConfig(tt.in, tt.allowRT, tt.degr)); d != "" {
				t.Errorf("noiseConfig (-want +got):\n%s", d)
			}
		})
	}
}

// TestTrialWindow: threads start 200 ms after now, measure after the
// warm-up for the duration; a soak never ends by itself.
func TestTrialWindow(t *testing.T) {
	const now = int64(1e12)
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	for _, tt := range []struct {
		name string
		sp   scenario.Spec
		want window
	}{
		{"4 s after 500 ms warm-up", scenario.Spec{Duration: scenario.Duration(4 * time.Second), Warmup: scenario.Duration(500 * time.Millisecond)},
			window{t0: now + ms(200), from: now + ms(700), until: now + ms(4700), hardStop: now + ms(9700)}},
		{"no warm-up", scenario.Spec{Duration: scenario.Duration(time.Second)},
			window{t0: now + ms(200), from: now + ms(200), until: now + ms(1200), hardStop: now + ms(6200)}},
		{"soak", scenario.Spec{Warmup: scenario.Duration(time.Second)},
			window{t0: now + ms(200), from: now + ms(1200), until: math.MaxInt64 / 4, hardStop: math.MaxInt64/4 + ms(5000), forever: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := trialWindow(&tt.sp, now); got != tt.want {
				t.Errorf("trialWindow = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestSmallTranslations: tail pause, receive buffer, soak headroom,
// bucket layout, variant overrides, spike logging.
func TestSmallTranslations(t *testing.T) {
	p := func(d time.Duration) scenario.Reader { return scenario.Reader{Period: scenario.Duration(d)} }
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"tail pause: 3 × first reader's period", tailPause(&scenario.Spec{Readers: []scenario.Reader{p(time.Millisecond), p(time.Second)}}), 3 * time.Millisecond},
		{"tail pause without readers: 30 ms", tailPause(&scenario.Spec{}), 30 * time.Millisecond},
		{"recv buffer: at least 2048", recvBufSize([]scenario.Traffic{{Size: 64}}), 2048},
		{"recv buffer: largest payload", recvBufSize([]scenario.Traffic{{Size: 64}, {Size: 9000}, {Size: 4000}}), 9000},
		{"soak headroom default", soakHeadroom(0), SoakHeapHeadroom},
		{"soak headroom set", soakHeadroom(1 << 20), uint64(1 << 20)},
		{"bucket layout", bucketLayout(scenario.Report{BucketWidth: 128, BucketOrigin: 64, Overflow: 8256}), record.Layout{Width: 128, Origin: 64, Overflow: 8256}},
		{"variant overrides", variantSet(&scenario.Spec{Variants: []scenario.Variant{{Name: "a"}, {Name: "b", Set: map[string]string{"x": "1"}}}}, "b"), map[string]string{"x": "1"}},
		{"no such variant", variantSet(&scenario.Spec{}, "base"), map[string]string(nil)},
		{"threshold: spikes logged", hasThreshold(&scenario.Spec{Readers: []scenario.Reader{{}, {Threshold: scenario.Duration(time.Millisecond)}}}), true},
		{"no threshold", hasThreshold(&scenario.Spec{Readers: []scenario.Reader{{}}}), false},
		{"round goes on", roundEnds(scenario.Trial{Round: 0}, listed(scenario.Trial{Round: 0}, scenario.Trial{Round: 0}, scenario.Trial{Round: 1}), 0), false},
		{"round ends before the next", roundEnds(scenario.Trial{Round: 0}, listed(scenario.Trial{Round: 0}, scenario.Trial{Round: 0}, scenario.Trial{Round: 1}), 1), true},
		{"last trial ends its round", roundEnds(scenario.Trial{Round: 1}, listed(scenario.Trial{Round: 0}, scenario.Trial{Round: 1}), 1), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestPerCallClassNeedsAll: a set without the context classes has no
// per-class block (collect's pure part).
func TestPerCallClassNeedsAll(t *testing.T) {
	l := record.Layout{Width: 128, Overflow: 1024}
	if perCallClass(record.NewSet(l), "ticks") == nil {
		t.Error("full set: no per-class block")
	}
	if perCallClass(record.NewSetOf(l, []record.Class{record.CallAll, record.CallWarm}), "ticks") != nil {
		t.Error("set without cold/first/rest: per-class block")
	}
	if got := perCallClass(record.NewSet(l), "ticks"); got.FirstCalls != probe.FirstCalls {
		t.Errorf("first calls %d, want %d", got.FirstCalls, probe.FirstCalls)
	}
}

// listed is trialSource's walk of a run that is not a sliced soak.
func listed(trials ...scenario.Trial) func(int) (scenario.Trial, bool) {
	next, _ := trialSource(&scenario.Spec{Duration: scenario.Duration(time.Second)}, trials)
	return next
}

// TestTrialSource: a run walks its trials in order; a soak with several
// variants and a slice walks the first round's trials again and again,
// each slice measuring slice − warm-up, indexed and numbered by round;
// a soak of one variant, or with slice 0, runs its trials as listed.
func TestTrialSource(t *testing.T) {
	spec := func(d, slice, warmup time.Duration, variants int) *scenario.Spec {
		s := &scenario.Spec{Duration: scenario.Duration(d), Slice: scenario.Duration(slice), Warmup: scenario.Duration(warmup)}
		for i := range variants {
			s.Variants = append(s.Variants, scenario.Variant{Name: string(rune('a' + i))})
		}
		return s
	}
	trialsOf := func(sp *scenario.Spec, rounds int) []scenario.Trial {
		var out []scenario.Trial
		for r := range rounds {
			for _, v := range sp.Variants {
				out = append(out, scenario.Trial{Index: len(out), Round: r, Variant: v.Name, Spec: *sp})
			}
		}
		return out
	}
	type step struct {
		Variant      string
		Index, Round int
		Duration     scenario.Duration
	}
	walk := func(next func(int) (scenario.Trial, bool), n int) []step {
		var out []step
		for i := range n {
			tr, ok := next(i)
			if !ok {
				break
			}
			out = append(out, step{tr.Variant, tr.Index, tr.Round, tr.Spec.Duration})
		}
		return out
	}
	sec := scenario.Duration(time.Second)
	for _, tt := range []struct {
		name       string
		sp         *scenario.Spec
		rounds     int
		wantSliced bool
		want       []step
	}{
		{"a timed run: as listed, then no more", spec(time.Second, 0, 0, 2), 1, false,
			[]step{{"a", 0, 0, sec}, {"b", 1, 0, sec}}},
		{"a soak of two variants in 3 s slices after 1 s warm-up: A B A B A …", spec(0, 3*time.Second, time.Second, 2), 2, true,
			[]step{{"a", 0, 0, 2 * sec}, {"b", 1, 0, 2 * sec}, {"a", 2, 1, 2 * sec}, {"b", 3, 1, 2 * sec}, {"a", 4, 2, 2 * sec}}},
		{"slice 0: the soak runs its first trial until stopped", spec(0, 0, 0, 2), 1, false,
			[]step{{"a", 0, 0, 0}, {"b", 1, 0, 0}}},
		{"one variant: not sliced", spec(0, 3*time.Second, 0, 1), 1, false, []step{{"a", 0, 0, 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next, sliced := trialSource(tt.sp, trialsOf(tt.sp, tt.rounds))
			if sliced != tt.wantSliced {
				t.Errorf("sliced %v, want %v", sliced, tt.wantSliced)
			}
			if d := cmp.Diff(tt.want, walk(next, 5)); d != "" {
				t.Errorf("walk (-want +got):\n%s", d)
			}
		})
	}
}

// TestSchedPolicy: the one scenario → rt policy conversion.
func TestSchedPolicy(t *testing.T) {
	for _, tt := range []struct {
		in   scenario.Policy
		want rt.Policy
	}{
		{scenario.PolicyFIFO, rt.FIFO},
		{scenario.PolicyRR, rt.RR},
		{scenario.PolicyOther, rt.Other},
		{0, rt.Other}, // unset: never after Load, the kernel's default
	} {
		if got := schedPolicy(tt.in); got != tt.want {
			t.Errorf("schedPolicy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestEnumTranslations: every value of every scenario enum a leaf takes
// becomes the leaf's own value of the same name (the leaf's String is the
// scenario's text), and the unset value none of them.
func TestEnumTranslations(t *testing.T) {
	type row struct {
		scenario, leaf fmt.Stringer
	}
	var rows []row
	for _, m := range []scenario.Method{scenario.MethodRecvFrom, scenario.MethodRecvMsg, scenario.MethodRecvMMsg} {
		rows = append(rows, row{m, receiverMethod(m)})
	}
	for _, c := range []scenario.Clock{scenario.ClockAuto, scenario.ClockTSC, scenario.ClockMonotonic, scenario.ClockCycles} {
		rows = append(rows, row{c, clockKind(c)})
	}
	for _, k := range []scenario.NoiseKind{scenario.NoiseSpin, scenario.NoiseMemory, scenario.NoiseSyscall, scenario.NoiseMessaging, scenario.NoiseFileWrite, scenario.NoiseUDP} {
		rows = append(rows, row{k, noiseKind(k)})
	}
	for _, c := range []scenario.Syscall{scenario.SyscallGetppid, scenario.SyscallClockGettime, scenario.SyscallSchedYield} {
		rows = append(rows, row{c, noiseSyscall(c)})
	}
	for _, tr := range []scenario.Transport{scenario.TransportSocket, scenario.TransportPipe} {
		rows = append(rows, row{tr, messagingTransport(tr)})
	}
	for _, e := range []scenario.ProfileEvent{scenario.ProfileEventCycles, scenario.ProfileEventCPUClock} {
		if ev, auto := profileEvent(e); string(ev) != e.String() || auto {
			t.Errorf("profile event %s: %s, auto %v", e, ev, auto)
		}
	}
	for _, r := range rows {
		if r.scenario.String() != r.leaf.String() {
			t.Errorf("scenario %T %q became %T %q", r.scenario, r.scenario, r.leaf, r.leaf)
		}
	}
	if ev, auto := profileEvent(scenario.ProfileEventAuto); !auto || ev != sampler.EventCycles {
		t.Errorf("profile event auto: %v, %v; want cycles first, auto", ev, auto)
	}
	if receiverMethod(0) != 0 || clockKind(0) != 0 || noiseKind(0) != 0 || noiseSyscall(0) != 0 {
		t.Error("an unset scenario enum became a leaf value")
	}
}

// TestNoiseDefaults: noise has no defaults of its own; every noise kind
// a scenario leaves at its defaults (scenario/defaults.go, the one home)
// translates to a config noise accepts, and noise refuses the same
// entry with its kind parameters left zero.
func TestNoiseDefaults(t *testing.T) {
	for _, kind := range []string{"spin", "memory", "syscall", "messaging", "file_write", "udp"} {
		t.Run(kind, func(t *testing.T) {
			sp, err := scenario.Load("defaults.yaml", []byte("readers: [{endpoints: []}]\nnoise: [{kind: "+kind+", threads: 1}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := noiseConfig(sp.Noise[0], false, false)
			if err := cfg.Validate(); err != nil {
				t.Errorf("the scenario's defaults: %v", err)
			}
			bare := noise.Config{Kind: cfg.Kind, Threads: 1}
			switch err := bare.Validate(); {
			case cfg.Kind == noise.KindSpin && err != nil:
				t.Errorf("spin has no parameters: %v", err)
			case cfg.Kind != noise.KindSpin && err == nil:
				t.Errorf("noise accepted %s with its parameters zero: a default of its own", kind)
			}
		})
	}
}

func TestSeccompConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   scenario.Seccomp
		want seccomp.Config
	}{
		{"left out", scenario.Seccomp{}, seccomp.Config{Profile: seccomp.None}},
		{"none", scenario.Seccomp{Profile: scenario.SeccompNone}, seccomp.Config{Profile: seccomp.None}},
		{"runtime-default", scenario.Seccomp{Profile: scenario.SeccompRuntimeDefault}, seccomp.Config{Profile: seccomp.RuntimeDefault}},
		{"allow-all 256", scenario.Seccomp{Profile: scenario.SeccompAllowAll, Instructions: 256}, seccomp.Config{Profile: seccomp.AllowAll, Instructions: 256}},
	} {
		if got := seccompConfig(tt.in); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestClockRateInvalid: a trial whose TSC rate strays from the
// calibration beyond the tolerance is marked, with both rates; one within
// it is not.
func TestClockRateInvalid(t *testing.T) {
	if why := clockRateInvalid(results.ClockRate{Hz: 2.5965e9, Seconds: 4, Deviation: 0.0002}, 2.596e9); why != "" {
		t.Errorf("+0.02%% marked: %s", why)
	}
	why := clockRateInvalid(results.ClockRate{Hz: 2.6012e9, Seconds: 4.2, Deviation: 0.002}, 2.596e9)
	if want := "the TSC ran at 2601.200 MHz against CLOCK_MONOTONIC over the trial's 4.2 s, +0.200% from its calibration 2596.000 MHz (tolerance ±0.1%)"; !strings.HasPrefix(why, want) {
		t.Errorf("mark %q, want it to start %q", why, want)
	}
}
