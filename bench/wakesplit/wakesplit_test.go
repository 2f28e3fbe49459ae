package wakesplit

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want Event
	}{
		{"idle task, no tgid, irq flags",
			"          <idle>-0       (-------) [001] d.h1. 1903131408087: hrtimer_expire_entry: hrtimer=00000000c0891d31 function=hrtimer_wakeup now=732973273397",
			Event{Comm: "<idle>", TID: 0, TGID: -1, CPU: 1, TS: 1903131408087, Name: "hrtimer_expire_entry", Timer: "00000000c0891d31", Func: "hrtimer_wakeup", Now: 732973273397}},
		{"comm with dashes and a colon",
			" memfd:sealed-91-12941   (  12941) [001] ..... 1864070577981: sys_exit: NR 202 = -110",
			Event{Comm: "memfd:sealed-91", TID: 12941, TGID: 12941, CPU: 1, TS: 1864070577981, Name: "sys_exit", NR: 202}},
		{"hrtimer_start keeps softexpires, not expires",
			"      cyclictest-17061   (  17060) [001] d..1. 4274684257077: hrtimer_start: hrtimer=000000005b2645ac function=hrtimer_wakeup expires=1646475810617 softexpires=1646475760617 mode=ABS was_armed=0",
			Event{Comm: "cyclictest", TID: 17061, TGID: 17060, CPU: 1, TS: 4274684257077, Name: "hrtimer_start", Timer: "000000005b2645ac", Func: "hrtimer_wakeup", Soft: 1646475760617}},
		{"sched_switch with spaces in both comms",
			"     Web Content-900     (  880) [000] d..2. 100: sched_switch: prev_comm=Web Content prev_pid=900 prev_prio=120 prev_state=R+ ==> next_comm=my rt thread next_pid=901 next_prio=19",
			Event{Comm: "Web Content", TID: 900, TGID: 880, CPU: 0, TS: 100, Name: "sched_switch", Prev: 900, State: "R+", Pid: 901, Prio: 19}},
		{"sched_waking",
			"            link-17753   (  17749) [001] d.h2. 4274710153571: sched_waking: comm=cyclictest pid=17061 prio=19 target_cpu=001",
			Event{Comm: "link", TID: 17753, TGID: 17749, CPU: 1, TS: 4274710153571, Name: "sched_waking", Pid: 17061, Prio: 19}},
		{"no tgid or irq-info columns, dotted ns clock",
			"      cyclictest-20629 [001] 652.502819123: sys_enter: NR 230 (1, 1, 7f, 0, 0, 0)",
			Event{Comm: "cyclictest", TID: 20629, TGID: -1, CPU: 1, TS: 652502819123, Name: "sys_enter", NR: 230}},
		{"perf script style event name",
			"      cyclictest-20629   (  20628) [001] ..... 652.502819: raw_syscalls:sys_exit: NR 230 = 0",
			Event{Comm: "cyclictest", TID: 20629, TGID: 20628, CPU: 1, TS: 652502819000, Name: "sys_exit", NR: 230}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ParseLine(tc.line)
			if err != nil || !ok {
				t.Fatalf("ParseLine: ok %v, err %v", ok, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestParseLineSkipsAndErrors(t *testing.T) {
	for _, l := range []string{"", "   ", "# tracer: nop", "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION"} {
		if _, ok, err := ParseLine(l); ok || err != nil {
			t.Errorf("ParseLine(%q) = ok %v, err %v; want skipped", l, ok, err)
		}
	}
	for _, l := range []string{
		"garbage without columns",
		"  task-12 (  12) [001] ..... notanumber: sys_exit: NR 1 = 0",
		"  task-12 (  12) [001] ..... 5: hrtimer_expire_entry: hrtimer=1 function=f now=x",
		"  task-12 (  12) [001] ..... 5: sched_switch: prev_pid=1 next_pid=2",
	} {
		if _, _, err := ParseLine(l); err == nil {
			t.Errorf("ParseLine(%q): no error", l)
		}
	}
}

func readFixture(t *testing.T, name string) *Trace {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.1f, want %.1f (±%g)", what, got, want, rel)
	}
}

// The fixtures are real captures (`wakesplit compare`, CPU 1 of a 2-vCPU
// VM under a heavy build load, x86-tsc clock at 2.596 GHz): five
// consecutive wakeups of cyclictest's measurement thread and of rtload
// timer-only's reader, with every event on the CPU in between. The first
// wakeup of each is worked out by hand from its lines.
func TestSplitFixtures(t *testing.T) {
	for _, tc := range []struct {
		file              string
		tid, tgid         int
		toFire            float64 // ns: now − softexpires
		fire, waking, on  uint64  // trace ticks
		exit              uint64
		class             string
		syscalls          int
		wakeups, siblings int
	}{
		// softexpires 1646475760617, now 1646475773163; expire at 4274710151647,
		// sched_waking 4274710153571, switch in (from link-17753, R) 4274710182067,
		// sys_exit 4274710189451.
		{"cyclictest.trace", 17061, 17060, 12546, 4274710151647, 4274710153571, 4274710182067, 4274710189451, ClassOther, 0, 5, 0},
		// softexpires 1631625164849, now 1631625173714; expire at 4236155941913,
		// sched_waking 4236155942849, switch in (from another test's FIFO 80
		// thread, which ran until it slept) 4236156267979, sys_exit
		// 4236156279419; then getrusage (NR 98) before the next sleep.
		{"rtload.trace", 16149, 16138, 8865, 4236155941913, 4236155942849, 4236156267979, 4236156279419, ClassOther, 1, 5, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tr := readFixture(t, tc.file)
			within(t, "trace ticks per ns", tr.HzPerNs, 2.596, 1e-3)
			if got := tr.MeasuredThread(Options{CPU: 1, TGID: tc.tgid}); got != tc.tid {
				t.Fatalf("MeasuredThread = %d, want %d", got, tc.tid)
			}
			ws, st := tr.Split(Options{CPU: 1, TGID: tc.tgid})
			if st.TID != tc.tid || st.TGID != tc.tgid || len(ws) != tc.wakeups || st.Complete != tc.wakeups {
				t.Fatalf("Split: tid %d tgid %d, %d wakeups (%d complete of %d sleeps); want tid %d tgid %d, %d wakeups",
					st.TID, st.TGID, len(ws), st.Complete, st.Sleeps, tc.tid, tc.tgid, tc.wakeups)
			}
			w := ws[0]
			hz := tr.HzPerNs
			if w.ToFire != tc.toFire {
				t.Errorf("ToFire = %v, want %v", w.ToFire, tc.toFire)
			}
			within(t, "ToWaking", w.ToWaking, float64(tc.waking-tc.fire)/hz, 1e-9)
			within(t, "ToOnCPU", w.ToOnCPU, float64(tc.on-tc.waking)/hz, 1e-9)
			within(t, "ToUser", w.ToUser, float64(tc.exit-tc.on)/hz, 1e-9)
			within(t, "ToUser at 2.596 GHz", w.ToUser, float64(tc.exit-tc.on)/2.596, 1e-3)
			if w.Class != tc.class || w.FromIdle || w.Syscalls != tc.syscalls || w.Faults != 0 || w.SiblingRuns != tc.siblings {
				t.Errorf("first wakeup %+v: want class %q, not from idle, %d syscalls, 0 faults, %d sibling runs", w, tc.class, tc.syscalls, tc.siblings)
			}
			if w.OtherRuns == 0 {
				t.Errorf("first wakeup: no other task ran during the sleep; the fixture shows several")
			}
		})
	}
}

func TestMeasuredThreadPicksTheRealTimeSleeper(t *testing.T) {
	// Two threads of pid 10 sleep on their own timers on CPU 1: 11 at
	// SCHED_OTHER (prio 120), woken twice, 12 at FIFO 80 (prio 19), woken
	// once. Thread 21 of another process (pid 20) is real-time too and is
	// woken three times.
	trace := `
 p-11 (   10) [001] ..... 1: hrtimer_start: hrtimer=a function=hrtimer_wakeup expires=5 softexpires=5 mode=ABS was_armed=0
 p-12 (   10) [001] ..... 2: hrtimer_start: hrtimer=b function=hrtimer_wakeup expires=5 softexpires=5 mode=ABS was_armed=0
 q-21 (   20) [001] ..... 3: hrtimer_start: hrtimer=c function=hrtimer_wakeup expires=5 softexpires=5 mode=ABS was_armed=0
 x-0 (-------) [001] d.h1. 10: hrtimer_expire_entry: hrtimer=a function=hrtimer_wakeup now=10
 x-0 (-------) [001] d.h1. 11: sched_waking: comm=p pid=11 prio=120 target_cpu=001
 x-0 (-------) [001] d.h1. 12: hrtimer_expire_entry: hrtimer=b function=hrtimer_wakeup now=12
 x-0 (-------) [001] d.h1. 13: sched_waking: comm=p pid=12 prio=19 target_cpu=001
 x-0 (-------) [001] d.h1. 14: hrtimer_expire_entry: hrtimer=c function=hrtimer_wakeup now=14
 x-0 (-------) [001] d.h1. 15: sched_waking: comm=q pid=21 prio=19 target_cpu=001
 x-0 (-------) [001] d.h1. 16: hrtimer_expire_entry: hrtimer=c function=hrtimer_wakeup now=16
 x-0 (-------) [001] d.h1. 17: hrtimer_expire_entry: hrtimer=c function=hrtimer_wakeup now=17
 x-0 (-------) [001] d.h1. 18: hrtimer_expire_entry: hrtimer=a function=hrtimer_wakeup now=18
`
	tr, err := Read(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.MeasuredThread(Options{CPU: 1, TGID: 10}); got != 12 {
		t.Errorf("in pid 10: got %d, want 12 (the only real-time sleeper there)", got)
	}
	if got := tr.MeasuredThread(Options{CPU: 1}); got != 21 {
		t.Errorf("any pid: got %d, want 21 (woken 3 times)", got)
	}
	if got := tr.MeasuredThread(Options{CPU: 0}); got != 0 {
		t.Errorf("CPU 0: got %d, want 0 (nothing there)", got)
	}
}

func TestSplitFromIdleAndSelf(t *testing.T) {
	// Ticks are ns here (no TSC clock: fitRate sees now == ts and gives 1).
	// Wakeup 1 from idle: no sched_switch in, so on CPU = local_timer_exit.
	// Wakeup 2: the thread slept past its deadline (it was still running:
	// the timer interrupted the thread itself). A sibling (tid 8, same
	// pid 5) runs during the second sleep, a stranger (tid 9) during both.
	trace := `
 rt-7 (    5) [001] ..... 100: sys_enter: NR 230 (1, 1, 0, 0, 0, 0)
 rt-7 (    5) [001] d..1. 101: hrtimer_start: hrtimer=h1 function=hrtimer_wakeup expires=1000 softexpires=1000 mode=ABS was_armed=0
 rt-7 (    5) [001] d..2. 102: sched_switch: prev_comm=rt prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=x next_pid=9 next_prio=120
 x-9 (    9) [001] d..2. 103: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
 <idle>-0 (-------) [001] d.h1. 1010: hrtimer_expire_entry: hrtimer=h1 function=hrtimer_wakeup now=1010
 <idle>-0 (-------) [001] d.h3. 1011: sched_waking: comm=rt pid=7 prio=19 target_cpu=001
 <idle>-0 (-------) [001] dNh1. 1015: local_timer_exit: vector=236
 rt-7 (    5) [001] ..... 1020: sys_exit: NR 230 = 0
 rt-7 (    5) [001] d.... 1021: page_fault_user: address=0x1 ip=0x2 error_code=0x6
 rt-7 (    5) [001] ..... 1022: sys_enter: NR 98 (1, 0, 0, 0, 0, 0)
 rt-7 (    5) [001] ..... 1023: sys_exit: NR 98 = 0
 rt-7 (    5) [001] ..... 1030: sys_enter: NR 230 (1, 1, 0, 0, 0, 0)
 rt-7 (    5) [001] d..1. 1031: hrtimer_start: hrtimer=h2 function=hrtimer_wakeup expires=1025 softexpires=1025 mode=ABS was_armed=0
 rt-7 (    5) [001] d.h1. 1032: hrtimer_expire_entry: hrtimer=h2 function=hrtimer_wakeup now=1032
 rt-7 (    5) [001] d.h1. 1033: sched_waking: comm=rt pid=7 prio=19 target_cpu=001
 rt-7 (    5) [001] ..... 1040: sys_exit: NR 230 = 0
 rt-7 (    5) [001] ..... 1050: sys_enter: NR 230 (1, 1, 0, 0, 0, 0)
 rt-7 (    5) [001] d..1. 1051: hrtimer_start: hrtimer=h3 function=hrtimer_wakeup expires=2000 softexpires=2000 mode=ABS was_armed=0
 rt-7 (    5) [001] d..2. 1052: sched_switch: prev_comm=rt prev_pid=7 prev_prio=19 prev_state=S ==> next_comm=rt next_pid=8 next_prio=120
 rt-8 (    5) [001] d..2. 1060: sched_switch: prev_comm=rt prev_pid=8 prev_prio=120 prev_state=S ==> next_comm=x next_pid=9 next_prio=120
 x-9 (    9) [001] d.h.. 2004: hrtimer_expire_entry: hrtimer=h3 function=hrtimer_wakeup now=2004
 x-9 (    9) [001] d.h.. 2005: sched_waking: comm=rt pid=7 prio=19 target_cpu=001
 x-9 (    9) [001] dNh.. 2006: local_timer_exit: vector=236
 x-9 (    9) [001] d..2. 2009: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=7 next_prio=19
 rt-7 (    5) [001] ..... 2012: sys_exit: NR 230 = 0
`
	tr, err := Read(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if tr.HzPerNs != 1 {
		t.Fatalf("HzPerNs = %v, want 1 for an ns trace", tr.HzPerNs)
	}
	ws, st := tr.Split(Options{CPU: 1, TID: 7})
	want := []Wakeup{
		{DeadlineNs: 1000, ToFire: 10, ToWaking: 1, ToOnCPU: 4, ToUser: 5, FromIdle: true, Prev: "<idle>", Class: ClassIdle,
			Faults: 1, Syscalls: 1, OtherRuns: 1},
		{DeadlineNs: 1025, ToFire: 7, ToWaking: 1, ToOnCPU: 7, ToUser: 0, Prev: "rt", Class: ClassSelf},
		{DeadlineNs: 2000, ToFire: 4, ToWaking: 1, ToOnCPU: 4, ToUser: 3, Prev: "x", Class: ClassOther, SiblingRuns: 1, OtherRuns: 1},
	}
	if d := cmp.Diff(want, ws); d != "" {
		t.Errorf("wakeups (-want +got)\n%s", d)
	}
	if st.Sleeps != 3 || st.Complete != 3 || st.TGID != 5 {
		t.Errorf("stats %+v: want 3 sleeps, 3 complete, tgid 5", st)
	}
	if got := ws[2].Total(); got != 12 {
		t.Errorf("Total = %v, want 12 (deadline 2000 → sys_exit at 2012)", got)
	}
}

func TestMatchOwn(t *testing.T) {
	ws := []Wakeup{{DeadlineNs: 10}, {DeadlineNs: 20}, {DeadlineNs: 30}}
	if n := MatchOwn(ws, []Own{{DeadlineNs: 30, LatencyNs: 3}, {DeadlineNs: 10, LatencyNs: 1}, {DeadlineNs: 99, LatencyNs: 9}}); n != 2 {
		t.Errorf("by deadline: matched %d, want 2", n)
	}
	if !ws[0].HasOwn || ws[0].Own != 1 || ws[1].HasOwn || !ws[2].HasOwn || ws[2].Own != 3 {
		t.Errorf("by deadline: %+v", ws)
	}
	ws = []Wakeup{{}, {}}
	if n := MatchOwn(ws, []Own{{LatencyNs: 5}, {LatencyNs: 6}}); n != 2 || ws[1].Own != 6 {
		t.Errorf("in order: matched %d, %+v", n, ws)
	}
	ws = []Wakeup{{}, {}}
	if n := MatchOwn(ws, []Own{{LatencyNs: 5}}); n != 1 || !ws[0].HasOwn || ws[1].HasOwn {
		t.Errorf("in order, the program's last sample missing: matched %d, %+v; want the first matched", n, ws)
	}
	if n := MatchOwn(make([]Wakeup, 2), []Own{{LatencyNs: 5}, {LatencyNs: 6}, {LatencyNs: 7}}); n != 0 {
		t.Errorf("in order, more samples than wakeups: matched %d, want 0", n)
	}
	if n := MatchOwn(make([]Wakeup, 100), make([]Own, 93)); n != 0 {
		t.Errorf("in order, 7 of 100 missing (> 1%% + 5): matched %d, want 0", n)
	}
	if n := MatchOwn(make([]Wakeup, 100), make([]Own, 94)); n != 94 {
		t.Errorf("in order, 6 of 100 missing (1%% + 5): matched %d, want 94", n)
	}
}

func TestQuantileAndSummarize(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct{ q, want float64 }{{0.5, 5}, {0.9, 9}, {0.99, 10}, {0.01, 1}} {
		if got := Quantile(s, tc.q); got != tc.want {
			t.Errorf("Quantile(1..10, %v) = %v, want %v (nearest rank)", tc.q, got, tc.want)
		}
	}
	ws := []Wakeup{
		{ToFire: 1000, ToWaking: 100, ToOnCPU: 1000, ToUser: 2000, Own: 5000, HasOwn: true, Faults: 2, Syscalls: 1, FromIdle: true},
		{ToFire: 3000, ToWaking: 300, ToOnCPU: 3000, ToUser: 4000, Syscalls: 1, SiblingRuns: 1},
	}
	sum := Summarize(ws)
	if sum.Wakeups != 2 || sum.Matched != 1 || sum.FromIdle != 0.5 || sum.Faults != 1 || sum.WithFault != 0.5 || sum.WithSibling != 0.5 || sum.Syscalls != 1 {
		t.Errorf("counts %+v", sum)
	}
	// p50 of totals {4100, 10300} is 4100; the own-latency segments cover
	// only the first wakeup: 5000 − 4100 = 900.
	if sum.Seg[4][0] != 4100 || sum.Max[4] != 10300 || sum.Seg[5][0] != 900 || sum.Seg[6][2] != 5000 {
		t.Errorf("segments %v, max %v", sum.Seg, sum.Max)
	}
}
