package sysinfo

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/google/go-cmp/cmp"
)

const procInterrupts = `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 26:          0         17  IO-APIC   4-edge      ttyS0
NMI:          0          3   Non-maskable interrupts
LOC:      81234      90210   Local timer interrupts
MIS:          0
`

const procSoftirqs = `                    CPU0       CPU1       
          HI:          0          0
       TIMER:      63983      82139
      NET_RX:    9735083    8301602
`

func TestParseIRQCounts(t *testing.T) {
	m := IRQCounts{}
	ParseIRQCounts(procInterrupts, 1, "irq:", m)
	ParseIRQCounts(procSoftirqs, 1, "softirq:", m)
	want := IRQCounts{"irq:24 ACPI:Ged": 0, "irq:26 ttyS0": 17, "irq:NMI": 3, "irq:LOC": 90210,
		"softirq:HI": 0, "softirq:TIMER": 82139, "softirq:NET_RX": 8301602}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("CPU1 (-want +got):\n%s", diff)
	}
	// CPU0 has the short MIS row too; a CPU that is not there reads nothing.
	m0 := IRQCounts{}
	ParseIRQCounts(procInterrupts, 0, "irq:", m0)
	if m0["irq:MIS"] != 0 || m0["irq:LOC"] != 81234 || len(m0) != 5 {
		t.Errorf("CPU0 = %v", m0)
	}
	none := IRQCounts{}
	ParseIRQCounts(procInterrupts, 7, "irq:", none)
	if len(none) != 0 {
		t.Errorf("CPU7 = %v; want nothing", none)
	}
	prev := IRQCounts{"irq:LOC": 90000, "softirq:TIMER": 82000, "softirq:NET_RX": 8301602, "irq:26 ttyS0": 17}
	d, irqs, soft := m.Delta(prev)
	if wantD := []SourceCount{{Name: "irq:LOC", Count: 210}, {Name: "softirq:TIMER", Count: 139}, {Name: "irq:NMI", Count: 3}}; !cmp.Equal(d, wantD) || irqs != 213 || soft != 139 {
		t.Errorf("delta = %v, %d irqs, %d softirqs; want %v, 213, 139", d, irqs, soft, wantD)
	}
}

func TestReadIRQCounts(t *testing.T) {
	m, err := ReadIRQCounts(0)
	if err != nil {
		t.Skip(err)
	}
	if m["irq:LOC"] == 0 && m["softirq:TIMER"] == 0 {
		t.Errorf("CPU0 has neither local timer interrupts nor timer softirqs: %v", m)
	}
}

// TestIRQDeltaOrder checks the order of equal counts (by name) and that a
// count that went backwards counts nothing.
func TestIRQDeltaOrder(t *testing.T) {
	now := IRQCounts{"irq:b": 5, "irq:a": 5, "softirq:RCU": 1, "irq:LOC": 10}
	prev := IRQCounts{"irq:LOC": 20}
	d, irqs, soft := now.Delta(prev)
	want := []SourceCount{{"irq:a", 5}, {"irq:b", 5}, {"softirq:RCU", 1}}
	if diff := cmp.Diff(want, d); diff != "" || irqs != 10 || soft != 1 {
		t.Errorf("Delta: %d irqs, %d softirqs (want 10, 1); sources (-want +got):\n%s", irqs, soft, diff)
	}
}

func TestParseStatmRSS(t *testing.T) {
	for _, tc := range []struct {
		name, statm string
		want        int64
		wantErr     string
	}{
		{"resident is the second field", "4821 1203 512 263 0 1101 0\n", 1203 * 4096, ""},
		{"too short", "4821\n", 0, "want at least 2 fields"},
		{"not a number", "4821 x 1\n", 0, "statm resident"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatmRSS(tc.statm, 4096)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("= %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestProcessMetrics reads this process's RSS and fd count: a Go test
// binary is resident in megabytes and holds stdin, stdout, stderr, and
// the fd opened here shows up one more time.
func TestProcessMetrics(t *testing.T) {
	rss, err := RSS()
	if err != nil {
		t.Skip(err)
	}
	if rss < 1<<20 {
		t.Errorf("RSS %d bytes; want ≥ 1 MiB for a running Go test", rss)
	}
	n0, err := OpenFDs()
	if err != nil || n0 < 4 {
		t.Fatalf("OpenFDs = %d, %v; want ≥ 4 (stdio and the directory read)", n0, err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n1, _ := OpenFDs(); n1 != n0+1 {
		t.Errorf("OpenFDs %d after opening one file, %d before", n1, n0)
	}
}

func TestParsePIDStatus(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		gone         bool
		why          string
	}{
		{"running process", "Name:\tsshd\nState:\tS (sleeping)\nTgid:\t17\nPid:\t17\n", false, "pid 17 (sshd) is running (state S (sleeping))"},
		{"zombie", "Name:\trtload\nState:\tZ (zombie)\nTgid:\t17\n", true, "pid 17 (rtload) has exited (state Z (zombie))"},
		{"dead", "Name:\trtload\nState:\tX (dead)\nTgid:\t17\n", true, "has exited (state X (dead))"},
		{"now a thread of another process", "Name:\tworker\nState:\tR (running)\nTgid:\t12\n", true, "pid 17 (worker) is now a thread of process 12"},
		{"unreadable fields count as running", "garbage\n", false, "is running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone, why := parsePIDStatus(17, tc.status)
			if gone != tc.gone || !strings.Contains(why, tc.why) {
				t.Errorf("= %v, %q; want %v, %q", gone, why, tc.gone, tc.why)
			}
		})
	}
}

func TestPIDGone(t *testing.T) {
	// A thread id of this process is a pid that is not a process.
	tid := make(chan int, 1)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		<-release
		runtime.UnlockOSThread()
	}()
	other := <-tid
	defer close(release)

	for _, tc := range []struct {
		name string
		pid  int
		gone bool
		why  string
	}{
		{"this process", os.Getpid(), false, "is running"},
		{"parent (go test or a shell)", os.Getppid(), false, "is running"},
		{"init", 1, false, "is running"},
		{"pid beyond pid_max", 1<<31 - 1, true, "is gone (no /proc/2147483647)"},
		{"pid 0", 0, false, "not a process id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if gone, why := PIDGone(tc.pid); gone != tc.gone || !strings.Contains(why, tc.why) {
				t.Errorf("PIDGone(%d) = %v, %q; want %v, %q", tc.pid, gone, why, tc.gone, tc.why)
			}
		})
	}
	if gone, why := PIDGone(other); other != os.Getpid() && (!gone || !strings.Contains(why, "is now a thread of process")) {
		t.Errorf("PIDGone(%d) = %v, %q for a thread of this process", other, gone, why)
	}
}

func TestOwnEntry(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/file"
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, dir+"/link"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(dir+"/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		dirOK      bool
		whyNot     string
	}{
		{"own regular file", file, false, ""},
		{"own directory, allowed", dir, true, ""},
		{"own directory, not allowed", dir, false, "a directory"},
		{"link to an own file: not followed", dir + "/link", true, "a symbolic link"},
		{"FIFO", dir + "/fifo", true, "a named pipe (FIFO)"},
		{"missing", dir + "/missing", true, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, why := OwnEntry(tc.path, tc.dirOK); tc.whyNot == "" && why != "" || !strings.Contains(why, tc.whyNot) {
				t.Errorf("OwnEntry(%s, %v) = %q; want %q", tc.path, tc.dirOK, why, tc.whyNot)
			}
		})
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(file, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, why := OwnEntry(file, false); why != "owned by uid 65534, not by this user (uid 0)" {
			t.Errorf("OwnEntry(nobody's file) = %q", why)
		}
	}
}
