package sysinfo

import (
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// fakeRoot is a / with the files readFiles reads, from testdata.
func fakeRoot(t *testing.T) fstest.MapFS {
	t.Helper()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"proc/cpuinfo":                                                      {Data: readTestdata(t, "cpuinfo-x86.txt")},
		"proc/self/status":                                                  {Data: readTestdata(t, "status.txt")},
		"proc/config.gz":                                                    {Data: readTestdata(t, "kconfig.gz")},
		"proc/cmdline":                                                      file("BOOT_IMAGE=/vmlinuz init_on_alloc=1 init_on_free=0 isolcpus=2-3 nohz_full=2-3 mitigations=off quiet\n"),
		"proc/sys/kernel/sched_rt_runtime_us":                               file("-1\n"),
		"proc/sys/kernel/sched_rt_period_us":                                file("1000000\n"),
		"proc/sys/kernel/perf_event_paranoid":                               file("1\n"),
		"sys/devices/system/cpu/online":                                     file("0-3\n"),
		"sys/devices/system/cpu/isolated":                                   file("1\n"), // cmdline wins
		"sys/devices/system/cpu/cpu0/tsc_freq_khz":                          file("2100000\n"),
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":              file("powersave\n"),
		"sys/devices/system/clocksource/clocksource0/current_clocksource":   file("tsc\n"),
		"sys/devices/system/clocksource/clocksource0/available_clocksource": file("tsc hpet acpi_pm \n"),
		"dev/net/tun":                                                       {Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666},
		"sys/devices/system/cpu/vulnerabilities/meltdown":                   file("Not affected\n"),
		"sys/devices/system/cpu/vulnerabilities/spectre_v2":                 file("Mitigation: Retpolines; STIBP: disabled; RSB filling\n"),
		"sys/devices/system/cpu/cpuidle/current_driver":                     file("intel_idle\n"),
		"sys/devices/system/cpu/cpuidle/current_governor_ro":                file("menu\n"),
	}
}

func TestReadFiles(t *testing.T) {
	var got Facts
	got.Kernel = "6.8.0-test"
	got.readFiles(fakeRoot(t))
	want := Facts{Env: results.Env{
		Kernel:                "6.8.0-test",
		CPUModel:              "Intel(R) Xeon(R) Processor",
		Microcode:             "0x1",
		CPUs:                  4,
		Clocksource:           "tsc",
		AvailableClocksources: []string{"tsc", "hpet", "acpi_pm"},
		TSCFlags:              []string{"tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_deadline_timer"},
		TSCKHz:                2100000,
		Privileges: Privileges{
			Caps:       []string{"CAP_NET_ADMIN", "CAP_IPC_LOCK", "CAP_SYS_NICE", "CAP_PERFMON"},
			CapSysNice: true, CapIPCLock: true, CapNetAdmin: true, CapPerfmon: true,
		},
		SchedRTRuntimeUs:   -1,
		SchedRTPeriodUs:    1000000,
		Cmdline:            "BOOT_IMAGE=/vmlinuz init_on_alloc=1 init_on_free=0 isolcpus=2-3 nohz_full=2-3 mitigations=off quiet",
		Isolcpus:           "2-3",
		NohzFull:           "2-3",
		Hardening:          map[string]string{"init_on_alloc": "1", "init_on_free": "0", "mitigations": "off"},
		KernelConfigSource: "/proc/config.gz",
		PerfEventParanoid:  1,
		Governor:           "powersave",
		Virtualization:     "vm",
		DevNetTun:          true,
		Vulnerabilities: map[string]string{
			"meltdown":   "Not affected",
			"spectre_v2": "Mitigation: Retpolines; STIBP: disabled; RSB filling",
		},
		CPUIdleDriver:   "intel_idle",
		CPUIdleGovernor: "menu",
	}}
	want.KernelConfig, _ = parseKernelConfig(strings.NewReader(string(readTestdata(t, "kconfig.txt"))), kernelConfigKeys)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readFiles (-want +got):\n%s", diff)
	}
}

func TestReadFilesEmptyRoot(t *testing.T) {
	// Nothing readable: zero values, the documented sentinels, and reasons.
	var got Facts
	got.Kernel = "6.8.0-test"
	got.readFiles(fstest.MapFS{})
	want := Facts{Env: results.Env{
		Kernel:                "6.8.0-test",
		AvailableClocksources: []string{},
		TSCFlags:              []string{},
		Hardening:             map[string]string{},
		PerfEventParanoid:     -99,
		KernelConfigSource:    "not readable: /proc/config.gz: file does not exist; /boot/config-6.8.0-test: file does not exist",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readFiles (-want +got):\n%s", diff)
	}
}

func TestReadKernelConfigFallback(t *testing.T) {
	root := fstest.MapFS{"boot/config-6.8.0-test": {Data: readTestdata(t, "kconfig.txt")}}
	m, src := readKernelConfig(root, "6.8.0-test", kernelConfigKeys)
	if src != "/boot/config-6.8.0-test" || m["CONFIG_HZ"] != "250" {
		t.Errorf("readKernelConfig = %v, %q", m, src)
	}
	root = fstest.MapFS{"proc/config.gz": {Data: []byte{0x1f, 0x8b, 0}}}
	_, src = readKernelConfig(root, "", kernelConfigKeys)
	if !strings.HasPrefix(src, "not readable: /proc/config.gz: gzip: ") || !strings.HasSuffix(src, "kernel release unknown") {
		t.Errorf("corrupt config.gz, no release: %q", src)
	}
}

func TestTSCCounter(t *testing.T) {
	tests := []struct {
		name   string
		flags  []string
		goarch string
		want   Counter
	}{
		{"invariant", []string{"tsc", "rdtscp", "constant_tsc", "nonstop_tsc"}, "amd64", Counter{Name: "tsc", Works: true, Note: "invariant"}},
		{"stops in deep C-states", []string{"tsc", "rdtscp", "constant_tsc"}, "amd64", Counter{Name: "tsc", Works: true, Note: "not invariant"}},
		{"no rdtscp", []string{"tsc", "constant_tsc", "nonstop_tsc"}, "amd64", Counter{Name: "tsc", Works: false, Note: "no rdtscp flag"}},
		{"arm64", []string{"fp", "asimd"}, "arm64", Counter{Name: "tsc", Works: false, Note: "no TSC on arm64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tscCounter(tt.flags, tt.goarch)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPerfErrNote(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no PMU", unix.ENOENT, "perf_event_open: no such file or directory (ENOENT): not supported by this CPU/VM"},
		{"paranoid", unix.EACCES, "perf_event_open: permission denied (EACCES): perf_event_paranoid=2; counting the kernel too needs paranoid ≤ 1 or CAP_PERFMON (or seccomp blocks perf_event_open)"},
		{"wrapped errno", os.NewSyscallError("perf_event_open", unix.ENOSYS), "perf_event_open: function not implemented (ENOSYS): no perf events (CONFIG_PERF_EVENTS off, or seccomp)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := perfErrNote(tt.err, 2); got != tt.want {
				t.Errorf("perfErrNote =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestRTRuntimeText(t *testing.T) {
	tests := []struct {
		runtime, period int64
		want            string
	}{
		{950000, 1000000, "950000 (RT throttling on: RT threads get 950ms per 1s)"},
		{-1, 1000000, "-1 (RT throttling OFF: a runaway SCHED_FIFO thread can hang a CPU)"},
		{0, 0, "unreadable"},
	}
	for _, tt := range tests {
		if got := rtRuntimeText(tt.runtime, tt.period); got != tt.want {
			t.Errorf("rtRuntimeText(%d, %d) = %q, want %q", tt.runtime, tt.period, got, tt.want)
		}
	}
}

// TestText renders fixed Facts (fake root + fixed syscall results) against
// testdata/text.golden; regenerate with go test ./sysinfo -update.
func TestText(t *testing.T) {
	f := Facts{Env: results.Env{Hostname: "bench1", Kernel: "6.8.0-test", KernelVersion: "#1 SMP PREEMPT_DYNAMIC Mon Jan  1 00:00:00 UTC 2024", Arch: "x86_64"}}
	f.readFiles(fakeRoot(t))
	f.AllowedCPUs = []int{0, 2, 3}
	f.Privileges.UID, f.Privileges.EUID = 1000, 1000
	f.Privileges.RLimitRTPrio, f.Privileges.RLimitMemlock = 0, 8<<20
	f.Counters = []Counter{
		{Name: "perf cycles", Works: false, Note: perfErrNote(unix.ENOENT, 1)},
		{Name: "perf task-clock", Works: true, Note: "ok"},
		tscCounter(f.TSCFlags, "amd64"),
		{Name: "clock_monotonic", Works: true, Note: "resolution 1ns"},
	}
	got := f.Text()
	testutil.Golden(t, "text", []byte(got))
	for _, s := range []string{"TSC ticks are not core cycles", "RT throttling OFF", "dynamic, voluntary"} {
		if !strings.Contains(got, s) {
			t.Errorf("Text lacks %q", s)
		}
	}
}

func TestGather(t *testing.T) {
	f := Gather()
	if f.CPUs < 1 {
		t.Errorf("CPUs = %d, want ≥ 1", f.CPUs)
	}
	if f.Kernel == "" {
		t.Error("Kernel is empty")
	}
	if len(f.AllowedCPUs) == 0 {
		t.Error("AllowedCPUs is empty")
	}
	var names []string
	for _, c := range f.Counters {
		names = append(names, c.Name)
		if c.Name == "clock_monotonic" && !c.Works {
			t.Errorf("clock_monotonic does not work: %s", c.Note)
		}
	}
	if diff := cmp.Diff([]string{"perf cycles", "perf task-clock", "tsc", "clock_monotonic"}, names); diff != "" {
		t.Errorf("counter names (-want +got):\n%s", diff)
	}
	if got := HasCap("CAP_SYS_NICE"); got != f.Privileges.CapSysNice {
		t.Errorf("HasCap(CAP_SYS_NICE) = %v, Facts says %v", got, f.Privileges.CapSysNice)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"kernel":`, `"hardening":{`, `"privileges":{`, `"counters":[`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s", k)
		}
	}
	t.Logf("\n%s", f.Text())
}

func TestGatherRoot(t *testing.T) {
	testutil.Requires(t, testutil.Root) // checks CapSysNice as root
	f := Gather()
	if !f.Privileges.CapSysNice {
		// A root in a user namespace or a container with dropped caps lacks it; say which.
		t.Errorf("root without CAP_SYS_NICE; effective caps: %v", f.Privileges.Caps)
	}
}
