package rt

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// livePage is a synthetic user page of a counter rdpmc can read: what the
// kernel shows a thread while its hardware counter idx-1 is on the PMU.
func livePage(idx uint32, width uint16, offset int64) *unix.PerfEventMmapPage {
	return &unix.PerfEventMmapPage{Lock: 2, Index: idx, Offset: offset, Pmc_width: width,
		Capabilities: capUserRdpmc | 1<<1}
}

// TestPMCReadSynthetic drives the seqlock reader on synthetic user pages
// with a fake rdpmc: offset arithmetic, pmc_width sign extension, the
// index → ECX mapping, the not-live paths, seqlock retries and the bound.
func TestPMCReadSynthetic(t *testing.T) {
	const left = 1<<47 - 1 // x86 programs a counting event at -max_period
	for _, c := range []struct {
		name string
		pg   *unix.PerfEventMmapPage
		// raw returns the hardware counter for call n (0-based); it may
		// move the page's lock to play the kernel.
		raw                func(pg *unix.PerfEventMmapPage, n int) uint64
		want               uint64
		wantCalls          int
		wantECX            uint32
		wantNotLive, wantT uint64
	}{
		// offset + pmc, counter 2 (index 3): the plain case.
		{"offset plus pmc", livePage(3, 48, 1000), func(*unix.PerfEventMmapPage, int) uint64 { return 234 }, 1234, 1, 2, 0, 0},
		// A 48-bit counter with its top bit set is negative: 2^48-16 is -16.
		{"48-bit sign extension", livePage(1, 48, 1000), func(*unix.PerfEventMmapPage, int) uint64 { return 1<<48 - 16 }, 984, 1, 0, 0, 0},
		// The kernel's own arithmetic: count 500 so far, counter started at
		// -left (raw 2^48-left) and moved 100; offset = count - prev_count.
		{"kernel offset arithmetic", livePage(1, 48, 500+left),
			func(*unix.PerfEventMmapPage, int) uint64 { return (1<<48 - left + 100) & (1<<48 - 1) }, 600, 1, 0, 0, 0},
		// Bits above pmc_width are not the counter's: sign extension drops them.
		{"garbage above width", livePage(1, 40, 0), func(*unix.PerfEventMmapPage, int) uint64 { return 0xAB<<40 | 77 }, 77, 1, 0, 0, 0},
		{"width 64", livePage(1, 64, 10), func(*unix.PerfEventMmapPage, int) uint64 { return math.MaxUint64 }, 9, 1, 0, 0, 0},
		// Intel fixed counters have bit 30 set in index-1 (the RDPMC ECX).
		{"fixed counter", livePage((1<<30|1)+1, 48, 0), func(*unix.PerfEventMmapPage, int) uint64 { return 5 }, 5, 1, 1<<30 | 1, 0, 0},
		// Off the PMU: the kernel saved the whole count in offset.
		{"index 0 returns offset", &unix.PerfEventMmapPage{Lock: 2, Offset: 777, Capabilities: capUserRdpmc, Pmc_width: 48}, nil, 777, 0, 0, 1, 0},
		{"cap_user_rdpmc 0 returns offset", &unix.PerfEventMmapPage{Lock: 2, Index: 3, Offset: 42, Pmc_width: 48}, nil, 42, 0, 0, 1, 0},
		// The kernel rewrote the page during the first try (lock 2 → 4):
		// the second try's values count.
		{"lock moved: retry", livePage(1, 48, 1000), func(pg *unix.PerfEventMmapPage, n int) uint64 {
			if n == 0 {
				pg.Lock, pg.Offset = 4, 2000
				return 1
			}
			return 2
		}, 2002, 2, 0, 0, 0},
		// A writer on another CPU is mid-update (odd lock) at the first
		// try, done (lock 4) at the second.
		{"odd lock: retry", &unix.PerfEventMmapPage{Lock: 3, Index: 1, Offset: 10, Pmc_width: 48, Capabilities: capUserRdpmc},
			func(pg *unix.PerfEventMmapPage, n int) uint64 {
				pg.Lock = 4
				return uint64(n + 1)
			}, 12, 2, 0, 0, 0},
		// The lock never settles: bounded, counted as torn.
		{"lock never settles", livePage(1, 48, 0), func(pg *unix.PerfEventMmapPage, n int) uint64 {
			pg.Lock += 2
			return 7
		}, 7, maxSeqRetries, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls, ecx := 0, uint32(math.MaxUint32)
			r := &pmcReader{pg: c.pg, fake: func(e uint32) uint64 {
				if c.raw == nil {
					t.Fatal("rdpmc called on a page that is not live")
				}
				ecx = e
				v := c.raw(c.pg, calls)
				calls++
				return v
			}}
			if got := r.read(); got != c.want {
				t.Errorf("read = %d (%#x), want %d", got, got, c.want)
			}
			if calls != c.wantCalls || (calls > 0 && ecx != c.wantECX) {
				t.Errorf("rdpmc called %d times with ECX %#x, want %d with %#x", calls, ecx, c.wantCalls, c.wantECX)
			}
			if r.notLive != c.wantNotLive || r.torn != c.wantT {
				t.Errorf("notLive %d torn %d, want %d and %d", r.notLive, r.torn, c.wantNotLive, c.wantT)
			}
		})
	}
}

// TestPMCReadWraparound: differences of two reads are exact when the
// hardware counter wraps (48-bit, -10 → 5) and when the 64-bit sum wraps.
func TestPMCReadWraparound(t *testing.T) {
	for _, c := range []struct {
		name       string
		offset     int64
		raw1, raw2 uint64
		want       uint64
	}{
		{"48-bit counter crosses 0", 1000, 1<<48 - 10, 5, 15},
		{"64-bit sum wraps", -6, 3, 13, 10},
		{"no wrap", 1 << 40, 100, 1100, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			pg := livePage(1, 48, c.offset)
			raw := c.raw1
			r := &pmcReader{pg: pg, fake: func(uint32) uint64 { return raw }}
			a := r.read()
			raw = c.raw2
			if d := r.read() - a; d != c.want {
				t.Errorf("difference %d, want %d", d, c.want)
			}
		})
	}
}

// TestRdpmcRefusal pins every reason a mapped counter cannot be read with
// rdpmc, with what to change.
func TestRdpmcRefusal(t *testing.T) {
	sysfs := func() string { return RdpmcSysfs + " is 0" }
	taskClock := PerfSoftware[3]
	for _, c := range []struct {
		name  string
		ev    PerfEvent
		caps  uint64
		index uint32
		width uint16
		want  string // "" = usable
	}{
		{"usable", PerfCycles, capUserRdpmc | 2, 1, 48, ""},
		{"software event", taskClock, 2, 0, 0, "task-clock: not supported: not usable with rdpmc: its user page has cap_user_rdpmc 0, index 0 (a software event has no hardware counter to read)"},
		{"rdpmc off in sysfs", PerfCycles, 2, 1, 48, "cycles: not supported: not usable with rdpmc: its user page has cap_user_rdpmc 0 (user-space rdpmc is off: /sys/bus/event_source/devices/cpu/rdpmc is 0; write 1 to it (rdpmc while a perf event is mapped) or 2"},
		{"not on the PMU", PerfCycles, capUserRdpmc, 0, 48, "cycles: not supported: not usable with rdpmc: its user page has index 0 while the thread runs (the counter is not on the PMU: its counters are taken by other perf events or the NMI watchdog (sysctl kernel.nmi_watchdog=0 frees one)"},
		{"width 0", PerfCycles, capUserRdpmc, 1, 0, "cycles: not supported: not usable with rdpmc: its user page has pmc_width 0 (want 1–64)"},
		{"width 65", PerfCycles, capUserRdpmc, 1, 65, "pmc_width 65 (want 1–64)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := rdpmcRefusal(c.ev, c.caps, c.index, c.width, sysfs)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a usable page: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrNotSupported) {
				t.Fatalf("refusal %v\nwant ErrNotSupported containing %q", err, c.want)
			}
		})
	}
}

// TestStatusReason pins the reason a trial is marked with.
func TestStatusReason(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		s    PerfStatus
		err  error
		want string
	}{
		{"counted throughout", PerfStatus{Event: "cycles", Enabled: 100 * ms, Running: 100 * ms}, nil, ""},
		{"multiplexed", PerfStatus{Event: "cycles", Enabled: 100 * ms, Running: 25 * ms}, nil,
			"cycles: ran 25ms of the 100ms it was enabled (25.0%): multiplexed with other perf events or off the PMU; per-call counts miss the rest"},
		{"not live", PerfStatus{Event: "instructions", Enabled: ms, Running: ms, NotLive: 3}, nil,
			"instructions: 3 reads found it off the PMU (user page index 0) and counted nothing"},
		{"torn", PerfStatus{Event: "cycles", Torn: 1}, nil, "cycles: 1 reads gave up after the user page's seqlock moved 64 times"},
		{"unbound", PerfStatus{Event: "cycles", Unbound: 9}, nil, "cycles: 9 reads on a thread that never called Bind returned 0"},
		{"error state", PerfStatus{Event: "cycles"}, errPerfEOF, "cycles: read perf event: end of file (pinned event in error state: it could not be put on the PMU)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := statusReason(c.s, c.err); got != c.want {
				t.Errorf("statusReason =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// TestHotReadsAllocateNothing: the page reader, a bound cycles Clock's
// Now and Counters.ReadInto allocate nothing.
func TestHotReadsAllocateNothing(t *testing.T) {
	var raw uint64
	fake := func(uint32) uint64 { raw += 100; return raw }
	r := &pmcReader{pg: livePage(1, 48, 0), fake: fake}
	clk := &Clock{info: ClockInfo{Kind: "cycles"}, pmc: r}
	cs := &Counters{}
	for range 3 {
		cs.readers = append(cs.readers, &pmcReader{pg: livePage(2, 48, 0), fake: fake})
	}
	buf := make([]uint64, 3)
	for name, f := range map[string]func(){
		"pmcReader.read":   func() { r.read() },
		"Clock.Now cycles": func() { clk.Now() },
		"Counters.ReadInto": func() {
			cs.ReadInto(buf)
		},
	} {
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s allocates %v per call", name, a)
		}
	}
	before := buf[0]
	cs.ReadInto(buf)
	if buf[0] <= before || buf[1] <= buf[0] || buf[2] <= buf[1] {
		t.Errorf("ReadInto wrote %v after %d: want each counter read in order", buf, before)
	}
}

// TestSoftwareCounterUserPage maps the user page of a software counter
// (task-clock) opened on this thread: the kernel's page says rdpmc cannot
// read it (cap_user_rdpmc 0, index 0), the reader returns the saved count
// without executing rdpmc, and openPerfCounter refuses it with that reason.
func TestSoftwareCounterUserPage(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ev := PerfSoftware[3] // task-clock
	fd, err := perfEventOpen(ev, 0, -1, false)
	if err != nil {
		t.Skipf("no software perf events here: %v", err)
	}
	defer unix.Close(fd)
	mem, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatalf("mmap user page: %v", err)
	}
	defer unix.Munmap(mem)
	pg := (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
	if pg.Capabilities&capUserRdpmc != 0 || pg.Index != 0 {
		t.Fatalf("software counter's page: capabilities %#x index %d; want cap_user_rdpmc 0, index 0", pg.Capabilities, pg.Index)
	}
	r := &pmcReader{pg: pg, fake: func(uint32) uint64 { t.Fatal("rdpmc on a software counter"); return 0 }}
	got := r.read()
	v, _, _, err := readPerfTimes(fd)
	if err != nil {
		t.Fatal(err)
	}
	if r.notLive != 1 || got > v {
		t.Errorf("page read %d (notLive %d), read(2) %d: want the saved count (≤ read(2)) and the read counted not live", got, r.notLive, v)
	}
	err = r.usable(ev)
	want := "task-clock: not supported: not usable with rdpmc: its user page has cap_user_rdpmc 0, index 0 (a software event has no hardware counter to read)"
	if err == nil || err.Error() != want {
		t.Errorf("usable = %v\nwant %s", err, want)
	}
	p, err := openPerfCounter(ev, -1, false)
	if p != nil || err == nil || err.Error() != want || !errors.Is(err, ErrNotSupported) {
		t.Errorf("openPerfCounter(task-clock) = %v, %v; want nil and %q", p, err, want)
	}
}

// TestUnboundCyclesClock: a cycles Clock not bound to its thread reads 0,
// counts the reads and says so; Bind refuses the run-wide Clock and, on
// the real kernel, gives the counter's refusal.
func TestUnboundCyclesClock(t *testing.T) {
	run := &Clock{info: ClockInfo{Kind: "cycles"}}
	run.idle.pg = new(unix.PerfEventMmapPage)
	run.pmc = &run.idle
	if err := run.Bind(); err == nil || !strings.Contains(err.Error(), "ForThread") {
		t.Errorf("Bind on the run-wide Clock = %v; want a refusal naming ForThread", err)
	}
	c := run.ForThread()
	if c == run || c.Info().Kind != "cycles" {
		t.Fatalf("ForThread = %p (run-wide %p), kind %q: want a new cycles Clock", c, run, c.Info().Kind)
	}
	for range 5 {
		if v := c.Now(); v != 0 {
			t.Fatalf("unbound Now = %d, want 0", v)
		}
	}
	s, ok := c.Status()
	if !ok || s.Unbound != 5 || !strings.Contains(s.Reason, "5 reads on a thread that never called Bind") {
		t.Errorf("Status = %+v, %v; want 5 unbound reads and the reason", s, ok)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := c.Bind()
	if err == nil {
		defer c.Close()
		t.Skip("this machine's PMU gives cycles: see TestCyclesHardware")
	}
	if !strings.HasPrefix(err.Error(), "clock cycles: ") || (!errors.Is(err, ErrNotSupported) && !errors.Is(err, ErrNoPrivilege)) {
		t.Errorf("Bind here = %v; want the counter's refusal", err)
	}
	if c.Close() != nil || c.Now() != 0 {
		t.Error("Close or Now after a failed Bind misbehaved")
	}
}

// TestCountersHere opens per-call counters on this thread: on a machine
// without a PMU every event is refused with its reason (or, with
// AllowDegraded, left out and listed), and nothing stays open.
func TestCountersHere(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	names := []string{"instructions", "cache-misses", "branch-misses"}
	c, err := NewCounters(CountersConfig{Events: names})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Open(); err == nil {
		c.Close()
		t.Skip("this machine's PMU gives the counters: see TestCountersHardware")
	} else {
		for _, n := range names {
			if !strings.Contains(err.Error(), "counter "+n+": ") {
				t.Errorf("refusal does not name %s: %v", n, err)
			}
		}
		if !strings.Contains(err.Error(), "--allow-degraded to leave them out") {
			t.Errorf("refusal does not say what --allow-degraded does: %v", err)
		}
		if c.Len() != 0 || c.Open() == nil {
			t.Errorf("after a refused Open: Len %d, second Open allowed", c.Len())
		}
	}
	d, err := NewCounters(CountersConfig{Events: names, AllowDegraded: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(); err != nil {
		t.Fatalf("degraded Open: %v", err)
	}
	defer d.Close()
	if d.Len()+len(d.Skipped()) != len(names) || len(d.Names()) != d.Len() {
		t.Errorf("degraded: open %v, skipped %v; want every event in one list", d.Names(), d.Skipped())
	}
	for _, s := range d.Skipped() {
		if !strings.Contains(s, ": ") || !(strings.Contains(s, "perf_event_open returned") || strings.Contains(s, "rdpmc")) {
			t.Errorf("skipped %q without its reason", s)
		}
	}
	buf := make([]uint64, d.Len())
	d.ReadInto(buf)
	t.Logf("degraded: open %v, skipped %v", d.Names(), d.Skipped())
}

// TestNewCountersNames: unknown and repeated names are refused with the
// allowed list.
func TestNewCountersNames(t *testing.T) {
	_, err := NewCounters(CountersConfig{Events: []string{"instructions", "cycles", "instructions", "l1-misses"}})
	for _, want := range []string{
		`counter "cycles": not supported (allowed: instructions, cache-references, cache-misses, branches, branch-misses)`,
		`counter "instructions": listed twice`,
		`counter "l1-misses": not supported (allowed: `,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewCounters error %v lacks %q", err, want)
		}
	}
	c, err := NewCounters(CountersConfig{})
	if err != nil || c.Open() != nil || c.Len() != 0 {
		t.Errorf("no events: %v; want a no-op", err)
	}
}

// BenchmarkPMCReadSynthetic is the user-page protocol's cost without the
// RDPMC instruction itself (a fake returning a constant, called
// indirectly): what the seqlock round adds to each read on top of RDPMC.
func BenchmarkPMCReadSynthetic(b *testing.B) {
	r := &pmcReader{pg: livePage(1, 48, 1000), fake: func(uint32) uint64 { return 7 }}
	b.ReportAllocs()
	for b.Loop() {
		r.read()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/read")
}

// TestFakes checks the test hooks other packages record with on machines
// without a PMU: FakeCounters and FakeCyclesClock read through the real
// user-page protocol (live page, 64-bit width) and return what their rdpmc
// gives, without allocating; Open on fake counters succeeds and leaves
// them as they are.
func TestFakes(t *testing.T) {
	vals := []uint64{7, 1 << 40}
	c := FakeCounters([]string{"instructions", "cache-misses"}, func(e int) uint64 { return vals[e] })
	if err := c.Open(); err != nil {
		t.Fatalf("Open on fake counters: %v", err)
	}
	buf := make([]uint64, c.Len())
	c.ReadInto(buf)
	if c.Len() != 2 || buf[0] != 7 || buf[1] != 1<<40 || len(c.Names()) != 2 {
		t.Errorf("fake counters: Len %d, read %v, names %v", c.Len(), buf, c.Names())
	}
	if a := testing.AllocsPerRun(100, func() { c.ReadInto(buf) }); a != 0 {
		t.Errorf("ReadInto allocs %v", a)
	}
	for _, r := range c.readers {
		if r.notLive != 0 || r.torn != 0 {
			t.Errorf("fake page read as not live (%d) or torn (%d)", r.notLive, r.torn)
		}
	}
	c.Close()
	if c.Len() != 0 {
		t.Errorf("Len %d after Close", c.Len())
	}
	var n uint64
	clk := FakeCyclesClock(func() uint64 { n += 3; return n })
	if clk.Source() != SourceCycles || clk.Info().Kind != "cycles" {
		t.Fatalf("fake cycles clock: source %d, kind %q", clk.Source(), clk.Info().Kind)
	}
	if a, b := clk.Cycles(), clk.Now(); a != 3 || b != 6 {
		t.Errorf("Cycles, Now = %d, %d; want 3, 6", a, b)
	}
	if clk.Bind() == nil {
		t.Error("Bind on a fake (run-wide) cycles clock succeeded")
	}
}

// TestClockSource checks Source for each kind that opens here, and that
// the direct reads agree with Now.
func TestClockSource(t *testing.T) {
	mono, _ := NewClock(ClockMonotonic)
	if mono.Source() != SourceMonotonic {
		t.Errorf("monotonic: source %d", mono.Source())
	}
	tsc, err := NewClock(ClockTSC)
	if err != nil {
		t.Skipf("no tsc clock: %v", err)
	}
	if tsc.Source() != SourceTSC {
		t.Errorf("tsc: source %d", tsc.Source())
	}
	a := TSC()
	b := tsc.Now()
	if c := TSC(); !(a < b && b < c) {
		t.Errorf("TSC, Now, TSC = %d, %d, %d; want increasing", a, b, c)
	}
}
