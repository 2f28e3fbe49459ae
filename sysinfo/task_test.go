package sysinfo

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/google/go-cmp/cmp"
)

func TestParseTaskFiles(t *testing.T) {
	// A command with a space and a ')' of its own: fields count from the last ')'.
	stat := "4242 (rtl-rd/a) b) S 1 4242 4242 0 -1 4194560 14892 907003 3 634 5 9 1330 572 -81 0 1 0 474940 5259264 987\n"
	minflt, majflt, err := parseTaskStatFaults(stat)
	if err != nil || minflt != 14892 || majflt != 3 {
		t.Errorf("parseTaskStatFaults = %d, %d, %v; want 14892, 3", minflt, majflt, err)
	}
	for _, bad := range []string{"", "4242 rtl S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 x 8 9 10"} {
		if _, _, err := parseTaskStatFaults(bad); err == nil {
			t.Errorf("parseTaskStatFaults(%q): no error", bad)
		}
	}
	status := "Name:\trtl-rd/a\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t321\nnonvoluntary_ctxt_switches:\t12\n"
	if v, iv, err := parseTaskStatus(status); err != nil || v != 321 || iv != 12 {
		t.Errorf("parseTaskStatus = %d, %d, %v; want 321, 12", v, iv, err)
	}
	for _, bad := range []string{"Name:\tx\n", "voluntary_ctxt_switches:\t1\n", "voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t1\n"} {
		if _, _, err := parseTaskStatus(bad); err == nil {
			t.Errorf("parseTaskStatus(%q): no error", bad)
		}
	}
	if r, w, n, err := parseSchedstat("152909826 2552984678 1552\n"); err != nil || r != 152909826 || w != 2552984678 || n != 1552 {
		t.Errorf("parseSchedstat = %d %d %d %v", r, w, n, err)
	}
	if _, _, _, err := parseSchedstat("1 2\n"); err == nil {
		t.Error("parseSchedstat with 2 fields: no error")
	}
	sched := "bash (13539, #threads: 1)\n----\nse.exec_start        :       5195821.185005\nse.nr_migrations     :                   44\n"
	if n, ok := parseSchedMigrations(sched); !ok || n != 44 {
		t.Errorf("parseSchedMigrations = %d, %v; want 44, true", n, ok)
	}
	if _, ok := parseSchedMigrations("se.exec_start : 1\n"); ok {
		t.Error("parseSchedMigrations without the line: ok")
	}
}

// TestReadTaskStats reads this (locked) thread's stats around a sleep, a
// burst of CPU and first touches of fresh pages, and checks each count
// against what the thread did, with getrusage(RUSAGE_THREAD) as the
// kernel's second opinion on the switches.
func TestReadTaskStats(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	s0, err := ReadTaskStats(tid)
	if err != nil {
		t.Fatal(err)
	}
	unix.Nanosleep(&unix.Timespec{Nsec: 2e6}, nil) // a voluntary switch
	mem, err := unix.Mmap(-1, 0, 64<<12, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1 // 64 minor faults
	}
	for x, n := 0, 0; n < 5e6; n++ { // some ms on the CPU
		x += n
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	s1, err := ReadTaskStats(tid)
	if err != nil {
		t.Fatal(err)
	}
	d := s1.Sub(s0)
	if d.VoluntarySwitches < 1 {
		t.Errorf("voluntary switches %d across a sleep; want ≥ 1", d.VoluntarySwitches)
	}
	// Read after getrusage: equal, or a few more if opening the files blocked.
	if s1.VoluntarySwitches < uint64(ru.Nvcsw) || s1.VoluntarySwitches > uint64(ru.Nvcsw)+3 {
		t.Errorf("voluntary switches %d, getrusage %d", s1.VoluntarySwitches, ru.Nvcsw)
	}
	if d.MinorFaults < 64 {
		t.Errorf("minor faults %d after touching 64 fresh pages; want ≥ 64", d.MinorFaults)
	}
	if d.RunNs == 0 || d.Timeslices == 0 {
		t.Errorf("run %d ns in %d timeslices; want > 0", d.RunNs, d.Timeslices)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d/sched", tid)); err == nil && !s1.HasMigrations {
		t.Error("sched file present but se.nr_migrations not read")
	}
	if _, err := ReadTaskStats(1 << 30); err == nil {
		t.Error("ReadTaskStats of a thread that does not exist: no error")
	}
}

func TestTaskStatsSub(t *testing.T) {
	a := TaskStats{VoluntarySwitches: 10, InvoluntarySwitches: 3, MinorFaults: 7, MajorFaults: 1, RunNs: 900, WaitNs: 50, Timeslices: 12, Migrations: 2, HasMigrations: true}
	b := TaskStats{VoluntarySwitches: 4, InvoluntarySwitches: 1, MinorFaults: 5, RunNs: 100, WaitNs: 20, Timeslices: 2, Migrations: 2, HasMigrations: true}
	want := TaskStats{VoluntarySwitches: 6, InvoluntarySwitches: 2, MinorFaults: 2, MajorFaults: 1, RunNs: 800, WaitNs: 30, Timeslices: 10, HasMigrations: true}
	if diff := cmp.Diff(want, a.Sub(b)); diff != "" {
		t.Errorf("Sub (-want +got):\n%s", diff)
	}
}
