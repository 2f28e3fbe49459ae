package sysinfo

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// kmsgFixtures reads testdata/kmsg-records.txt: one /dev/kmsg record per
// line, continuation lines (" KEY=value") attached to the record above.
// The first two are this project's machine's own records of a
// tsc → kvm-clock → tsc switch (Linux 6.18); the others are the kernel's
// messages as quoted in kernel bug reports and mailing-list threads (the
// watchdog and TSC lines of 5.x, the 2.6-era forms), with their real
// prefixes; facility 1 (prio 14) is a user-space write.
func kmsgFixtures(t *testing.T) [][]byte {
	t.Helper()
	var recs [][]byte
	for _, l := range strings.Split(strings.TrimSuffix(string(readTestdata(t, "kmsg-records.txt")), "\n"), "\n") {
		if strings.HasPrefix(l, " ") && len(recs) > 0 {
			recs[len(recs)-1] = append(recs[len(recs)-1], l+"\n"...)
			continue
		}
		recs = append(recs, []byte(l+"\n"))
	}
	return recs
}

func TestParseKmsg(t *testing.T) {
	recs := kmsgFixtures(t)
	if len(recs) != 14 {
		t.Fatalf("%d fixture records, want 14", len(recs))
	}
	for _, tc := range []struct {
		i    int
		want kmsgRecord
	}{
		{0, kmsgRecord{Facility: 0, Level: 6, Seq: 345, Usec: 1097276231, Msg: "clocksource: Switched to clocksource kvm-clock"}},
		{10, kmsgRecord{Facility: 0, Level: 4, Seq: 88, Usec: 180234358, Msg: "sched: RT throttling activated"}},
		{11, kmsgRecord{Facility: 1, Level: 6, Seq: 400, Usec: 5000, Msg: "clocksource: Switched to clocksource hpet"}},
		// Extra prefix fields (caller=) and continuation lines are dropped.
		{12, kmsgRecord{Level: 6, Seq: 339, Usec: 5140900, Msg: "NET: Registered protocol family 10"}},
		// \xNN escapes are undone (an ESC, a backslash).
		{13, kmsgRecord{Level: 6, Seq: 20, Usec: 100, Msg: "usb 1-1: Product: \x1b[31mRed\\"}},
	} {
		got, err := parseKmsg(recs[tc.i])
		if err != nil {
			t.Errorf("record %d %q: %v", tc.i, recs[tc.i], err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("record %d (-want +got):\n%s", tc.i, diff)
		}
	}
	for _, bad := range []string{"", "no semicolon\n", "6,1;short prefix\n", "x,1,2,-;not a number\n", "6,1,-5,-;negative time\n"} {
		if r, err := parseKmsg([]byte(bad)); err == nil {
			t.Errorf("parseKmsg(%q) = %+v, want an error", bad, r)
		}
	}
}

func TestClassifyKmsg(t *testing.T) {
	recs := kmsgFixtures(t)
	type ev struct {
		Kind                KernelEventKind
		To, Clocksource, OK string
	}
	want := []ev{
		{ClocksourceSwitch, "kvm-clock", "", "y"},
		{ClocksourceSwitch, "tsc", "", "y"},
		{ClocksourceUnstable, "", "tsc", "y"},
		{"", "", "", ""}, // the watchdog's detail line
		{TSCUnstable, "", "tsc", "y"},
		{TSCUnstable, "", "tsc", "y"},
		{"", "", "", ""}, // sched_clock: Marking unstable: not the clocksource
		{ClocksourceSwitch, "hpet", "", "y"},
		{ClocksourceUnstable, "", "tsc", "y"}, // 2.6-era watchdog
		{ClocksourceSwitch, "hpet", "", "y"},  // 2.6-era switch
		{RTThrottled, "", "", "y"},
		{"", "", "", ""}, // user space writing the same words
		{"", "", "", ""},
		{"", "", "", ""},
	}
	for i, b := range recs {
		r, err := parseKmsg(b)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := classifyKmsg(r)
		got := ev{e.Kind, e.To, e.Clocksource, map[bool]string{true: "y"}[ok]}
		if !ok {
			got = ev{}
		}
		if got != want[i] {
			t.Errorf("record %d %q: %+v, want %+v", i, r.Msg, got, want[i])
		}
		if ok && (e.Source != "kmsg" || e.Msg != r.Msg) {
			t.Errorf("record %d: source %q msg %q", i, e.Source, e.Msg)
		}
	}
}

func TestKernelTracker(t *testing.T) {
	const s = int64(time.Second)
	rec := func(usec int64, msg string) kmsgRecord { return kmsgRecord{Level: 6, Usec: usec, Msg: msg} }
	tr := kernelTracker{start: 100 * s, floor: 100 * s, cur: "tsc"}
	// A logged switch, confirmed by the next poll: one event, kmsg time.
	tr.kmsg(rec(112_300_000, "clocksource: Switched to clocksource hpet"), 112_350*1e6)
	tr.sysfs("hpet", 112_400*1e6)
	// A switch seen by the poll first, its log record read later: one
	// event, moved to the record's time.
	tr.sysfs("tsc", 120_000*1e6)
	tr.kmsg(rec(119_960_000, "clocksource: Switched to clocksource tsc"), 120_100*1e6)
	// A switch with no log record (a lost record, or /dev/kmsg unreadable).
	tr.sysfs("kvm-clock", 130*s)
	// Timestamps outside [floor, seen] are clamped into it: local_clock
	// lags CLOCK_MONOTONIC a little (0.4 ms measured here), and drifts
	// from it over a long uptime.
	tr.kmsg(rec(99_999_600, "sched: RT throttling activated"), 100*s+1e6)
	tr.kmsg(rec(200_000_000, "tsc: Marking TSC unstable due to clocksource watchdog"), 140*s)
	tr.floor = 150 * s // a poll found the log empty at 150 s
	tr.kmsg(rec(10_000_000, "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'kvm-clock' as unstable because the skew is too large:"), 150*s+2e8)
	tr.kmsg(rec(140_000_000, "NET: Registered protocol family 10"), 150*s+2e8)

	want := []KernelEvent{
		{Kind: ClocksourceSwitch, At: 12300 * time.Millisecond, From: "tsc", To: "hpet", Source: "kmsg", Msg: "clocksource: Switched to clocksource hpet"},
		{Kind: ClocksourceSwitch, At: 19960 * time.Millisecond, From: "hpet", To: "tsc", Source: "kmsg", Msg: "clocksource: Switched to clocksource tsc"},
		{Kind: ClocksourceSwitch, At: 30 * time.Second, From: "tsc", To: "kvm-clock", Source: "sysfs", Msg: "current_clocksource is kvm-clock"},
		{Kind: RTThrottled, At: 0, Source: "kmsg", Msg: "sched: RT throttling activated"},
		{Kind: TSCUnstable, At: 40 * time.Second, Clocksource: "tsc", Source: "kmsg", Msg: "tsc: Marking TSC unstable due to clocksource watchdog"},
		{Kind: ClocksourceUnstable, At: 50 * time.Second, Clocksource: "kvm-clock", Source: "kmsg",
			Msg: "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'kvm-clock' as unstable because the skew is too large:"},
	}
	if diff := cmp.Diff(want, tr.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if tr.records != 6 || tr.cur != "kvm-clock" {
		t.Errorf("records %d, cur %q; want 6, kvm-clock", tr.records, tr.cur)
	}
	wantReason := "clocksource changed (tsc → hpet at 12.3 s, hpet → tsc at 20.0 s, tsc → kvm-clock at 30.0 s); " +
		"RT throttling activated at 0.0 s; TSC marked unstable at 40.0 s; clocksource kvm-clock marked unstable at 50.0 s"
	if got := (KernelReport{Events: tr.events}).Invalid(); got != wantReason {
		t.Errorf("Invalid = %q\nwant     %q", got, wantReason)
	}
}
