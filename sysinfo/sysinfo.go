package sysinfo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Facts describes the machine and this process as a latency run sees them.
// It is embedded in every results summary as JSON; Text renders it for
// `rtload env`. Items Gather cannot read keep their zero value unless the
// field says otherwise.
type Facts struct {
	Hostname      string `json:"hostname"`       // uname(2) nodename
	Kernel        string `json:"kernel"`         // uname -r
	KernelVersion string `json:"kernel_version"` // uname -v (build string: "#1 SMP PREEMPT_DYNAMIC …")
	Arch          string `json:"arch"`           // uname -m

	// CPUModel is /proc/cpuinfo "model name"; on arm "Hardware", "Model", or
	// the decoded "CPU implementer"/"CPU part" pair.
	CPUModel string `json:"cpu_model"`
	// Microcode is /proc/cpuinfo "microcode" of the first CPU ("0xde"), ""
	// where the kernel does not say (arm, most VMs say 0x1).
	Microcode string `json:"microcode,omitempty"`
	// CPUs is the number of online CPUs (/sys/devices/system/cpu/online).
	CPUs int `json:"cpus"`
	// AllowedCPUs is this process's sched_getaffinity(2) mask, ascending.
	AllowedCPUs []int `json:"allowed_cpus"`

	// Clocksource is the current kernel clocksource ("tsc", "kvm-clock",
	// "hpet", "arch_sys_counter", …); AvailableClocksources the alternatives.
	Clocksource           string   `json:"clocksource"`
	AvailableClocksources []string `json:"available_clocksources"`
	// TSCFlags are the TSC-related cpuinfo flags present, in kernel order:
	// of tsc, rdtscp, constant_tsc, nonstop_tsc, tsc_known_freq,
	// tsc_reliable, tsc_deadline_timer. Invariant TSC is constant_tsc plus
	// nonstop_tsc; Linux prints no "invariant" flag.
	TSCFlags []string `json:"tsc_flags"`
	// TSCKHz is /sys/devices/system/cpu/cpu0/tsc_freq_khz (a patch some
	// vendor kernels carry), 0 when absent: rt calibrates instead.
	TSCKHz uint64 `json:"tsc_khz,omitempty"`
	// Counters says which clocks and counters work for this process.
	Counters []Counter `json:"counters"`

	Privileges Privileges `json:"privileges"`

	// SchedRTRuntimeUs and SchedRTPeriodUs are /proc/sys/kernel/sched_rt_*:
	// RT tasks get runtime per period; runtime -1 turns throttling off.
	// Both 0 when unreadable (a readable period is never 0).
	SchedRTRuntimeUs int64 `json:"sched_rt_runtime_us"`
	SchedRTPeriodUs  int64 `json:"sched_rt_period_us"`

	// Cmdline is /proc/cmdline without its trailing newline.
	Cmdline string `json:"cmdline"`
	// Isolcpus is the isolcpus= value (flags included, "domain,2-3"), else
	// /sys/devices/system/cpu/isolated when non-empty.
	Isolcpus string `json:"isolcpus,omitempty"`
	// NohzFull is the nohz_full= value, else /sys/devices/system/cpu/nohz_full.
	NohzFull string `json:"nohz_full,omitempty"`
	// Hardening holds the hardening and mitigation parameters present on the
	// command line (init_on_alloc, mitigations, pti, spectre_v2, …); a bare
	// flag ("nopti") has value "on". Never nil.
	Hardening map[string]string `json:"hardening"`
	// KernelConfig holds the kernel config options that change allocation,
	// preemption and tick cost (see kernelConfigKeys): "y", "m", "n" (is not
	// set) or a value such as CONFIG_HZ "250". Nil when no config is readable.
	KernelConfig map[string]string `json:"kernel_config,omitempty"`
	// KernelConfigSource is "/proc/config.gz", "/boot/config-<release>" or
	// "not readable: <why>".
	KernelConfigSource string `json:"kernel_config_source"`
	// PerfEventParanoid is /proc/sys/kernel/perf_event_paranoid, -99 when
	// unreadable.
	PerfEventParanoid int `json:"perf_event_paranoid"`
	// Governor is cpu0's cpufreq scaling_governor, "" without cpufreq.
	Governor string `json:"cpufreq_governor,omitempty"`
	// Virtualization is "vm" when cpuinfo has the hypervisor flag, else "".
	Virtualization string `json:"virtualization,omitempty"`
	// Preemption names the kernel's preemption model ("dynamic, none (build
	// default; no preempt= on cmdline)", "full realtime (PREEMPT_RT)"),
	// from uname -v, the kernel config and the command line: how long a
	// SCHED_FIFO thread may wait for a kernel task on its CPU to reach a
	// preemption point.
	Preemption string `json:"preemption,omitempty"`
	// Vulnerabilities is /sys/devices/system/cpu/vulnerabilities/: the
	// kernel's word on each CPU vulnerability and its mitigation in force
	// ("spectre_v2" → "Mitigation: Retpolines; …", "Not affected",
	// "Vulnerable"). Nil when the directory is unreadable.
	Vulnerabilities map[string]string `json:"vulnerabilities,omitempty"`
	// CPUIdleDriver and CPUIdleGovernor are the cpuidle driver and
	// governor in /sys/devices/system/cpu/cpuidle/ (current_driver,
	// current_governor or current_governor_ro): which C-states a CPU may
	// enter while idle. "" without cpuidle ("none" when the kernel says so).
	CPUIdleDriver   string `json:"cpuidle_driver,omitempty"`
	CPUIdleGovernor string `json:"cpuidle_governor,omitempty"`
	// DevNetTun is true when /dev/net/tun exists as a character device.
	DevNetTun bool `json:"dev_net_tun"`
	// Container says whether this process runs in a container, and its
	// cgroup's RT budget (DetectContainer).
	Container Container `json:"container"`
}

// Counter says whether one clock or counter works for this process.
type Counter struct {
	// Name is "perf cycles", "perf task-clock", "tsc" or "clock_monotonic".
	Name  string `json:"name"`
	Works bool   `json:"works"`
	// Note is the errno text when it does not work ("perf_event_open: no
	// such file or directory (ENOENT): not supported by this CPU/VM"),
	// "invariant"/"not invariant" for tsc, the resolution for
	// clock_monotonic.
	Note string `json:"note"`
}

// Privileges are this process's ids, effective capabilities and the
// rlimits that gate SCHED_FIFO and mlockall without capabilities.
type Privileges struct {
	UID  int `json:"uid"`
	EUID int `json:"euid"`
	// Caps are the effective capability names (CapEff of /proc/self/status)
	// in bit order, e.g. CAP_SYS_NICE.
	Caps        []string `json:"effective_caps"`
	CapSysNice  bool     `json:"cap_sys_nice"`  // SCHED_FIFO/RR at any priority, affinity of others
	CapIPCLock  bool     `json:"cap_ipc_lock"`  // mlockall beyond RLIMIT_MEMLOCK
	CapNetAdmin bool     `json:"cap_net_admin"` // tap devices, namespaces' links, SO_RCVBUFFORCE
	CapPerfmon  bool     `json:"cap_perfmon"`   // perf_event_open regardless of perf_event_paranoid
	CapSysAdmin bool     `json:"cap_sys_admin"` // netns creation; implies CAP_PERFMON on old kernels
	// RLimitRTPrio and RLimitMemlock are soft limits (getrlimit(2));
	// RLIM_INFINITY is ^uint64(0). RLIMIT_MEMLOCK is in bytes.
	RLimitRTPrio  uint64 `json:"rlimit_rtprio"`
	RLimitMemlock uint64 `json:"rlimit_memlock"`
}

// kernelConfigKeys are the options KernelConfig reports; '*' is a prefix.
var kernelConfigKeys = []string{
	"CONFIG_HARDENED_USERCOPY", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", "CONFIG_INIT_ON_FREE_DEFAULT_ON",
	"CONFIG_PREEMPT*", "CONFIG_HZ", "CONFIG_NO_HZ_FULL", "CONFIG_SLAB_FREELIST_HARDENED",
	// The debug and hardening hooks profile.Hook.State names (profile.HookConfigKeys).
	"CONFIG_HARDENED_USERCOPY_DEFAULT_ON", "CONFIG_KASAN", "CONFIG_KCSAN",
	"CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_LOCK_STAT",
	// The defaults of the boolean parameters KernelParam knows, and the
	// cgroup RT budget a container's SCHED_FIFO depends on.
	"CONFIG_RANDOMIZE_KSTACK_OFFSET*", "CONFIG_PAGE_POISONING", "CONFIG_RT_GROUP_SCHED",
}

// tscFlagNames are the cpuinfo flags TSCFlags keeps.
var tscFlagNames = []string{
	"tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable", "tsc_deadline_timer",
}

// Gather collects the Facts of this machine and process. It never fails:
// see Facts for what an unreadable item looks like. It opens and closes a
// perf_event fd per perf counter probed, makes a few hundred getppid(2)
// calls to see it move, and closes it.
func Gather() Facts {
	var f Facts
	f.Hostname, f.Kernel, f.KernelVersion, f.Arch = uname()
	f.readFiles(os.DirFS("/"))
	f.Preemption = f.preemptModel()
	f.AllowedCPUs = allowedCPUs()
	if f.CPUs == 0 {
		f.CPUs = len(f.AllowedCPUs) // no /sys and no /proc: better than 0
	}
	f.Privileges.UID, f.Privileges.EUID = uids()
	f.Privileges.RLimitRTPrio, f.Privileges.RLimitMemlock = rlimits()
	f.Counters = probeCounters(f.TSCFlags, f.PerfEventParanoid)
	return f
}

// readFiles fills every fact read from /proc, /sys, /dev and /boot, with
// fsys rooted at "/". f.Kernel must be set already (for /boot/config-<rel>).
func (f *Facts) readFiles(fsys fs.FS) {
	read := func(name string) string {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}

	cpuinfo, _ := fs.ReadFile(fsys, "proc/cpuinfo")
	var flags []string
	f.CPUModel, f.Microcode, flags = parseCPUInfo(bytes.NewReader(cpuinfo))
	f.TSCFlags = []string{}
	for _, fl := range flags {
		if slices.Contains(tscFlagNames, fl) && !slices.Contains(f.TSCFlags, fl) {
			f.TSCFlags = append(f.TSCFlags, fl)
		}
	}
	if slices.Contains(flags, "hypervisor") {
		f.Virtualization = "vm"
	}
	if online, err := parseCPUList(read("sys/devices/system/cpu/online")); err == nil && len(online) > 0 {
		f.CPUs = len(online)
	} else {
		f.CPUs = countProcessors(cpuinfo)
	}
	f.TSCKHz, _ = strconv.ParseUint(read("sys/devices/system/cpu/cpu0/tsc_freq_khz"), 10, 64)
	f.Governor = read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")

	const cs = "sys/devices/system/clocksource/clocksource0/"
	f.Clocksource = read(cs + "current_clocksource")
	f.AvailableClocksources = strings.Fields(read(cs + "available_clocksource"))

	if m, err := parseCapEff(read("proc/self/status")); err == nil {
		p := &f.Privileges
		p.Caps = CapNames(m)
		has := func(bit int) bool { return m&(1<<bit) != 0 }
		p.CapNetAdmin, p.CapIPCLock, p.CapSysAdmin, p.CapSysNice, p.CapPerfmon =
			has(12), has(14), has(21), has(23), has(38)
	}

	f.SchedRTRuntimeUs, _ = strconv.ParseInt(read("proc/sys/kernel/sched_rt_runtime_us"), 10, 64)
	f.SchedRTPeriodUs, _ = strconv.ParseInt(read("proc/sys/kernel/sched_rt_period_us"), 10, 64)
	f.PerfEventParanoid = -99
	if v, err := strconv.Atoi(read("proc/sys/kernel/perf_event_paranoid")); err == nil {
		f.PerfEventParanoid = v
	}

	f.Cmdline = read("proc/cmdline")
	f.Hardening, f.Isolcpus, f.NohzFull = parseCmdline(f.Cmdline)
	if f.Isolcpus == "" {
		f.Isolcpus = read("sys/devices/system/cpu/isolated")
	}
	if f.NohzFull == "" {
		if v := read("sys/devices/system/cpu/nohz_full"); v != "(null)" { // printed when the mask is empty
			f.NohzFull = v
		}
	}

	f.KernelConfig, f.KernelConfigSource = readKernelConfig(fsys, f.Kernel, kernelConfigKeys)
	f.Vulnerabilities = readVulnerabilities(fsys)
	const idle = "sys/devices/system/cpu/cpuidle/"
	f.CPUIdleDriver = read(idle + "current_driver")
	f.CPUIdleGovernor = cmp.Or(read(idle+"current_governor"), read(idle+"current_governor_ro"))

	if fi, err := fs.Stat(fsys, "dev/net/tun"); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
		f.DevNetTun = true
	}
	f.Container = DetectContainer(fsys)
}

// readVulnerabilities reads every file of
// /sys/devices/system/cpu/vulnerabilities (at most 64, each its first
// 256 bytes), or nil when the directory is unreadable.
func readVulnerabilities(fsys fs.FS) map[string]string {
	const dir = "sys/devices/system/cpu/vulnerabilities"
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, e := range ents {
		if len(m) == 64 {
			break
		}
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			continue
		}
		m[e.Name()] = strings.TrimSpace(string(b[:min(len(b), 256)]))
	}
	return m
}

// readKernelConfig tries /proc/config.gz (CONFIG_IKCONFIG_PROC) and then
// /boot/config-<release>, returning the options of keys (as
// parseKernelConfig matches them) and the path read, or nil and "not
// readable: <why for each path>".
func readKernelConfig(fsys fs.FS, release string, keys []string) (map[string]string, string) {
	paths := []string{"/proc/config.gz"}
	if release != "" {
		paths = append(paths, "/boot/config-"+release)
	}
	var why []string
	for _, p := range paths {
		file, err := fsys.Open(strings.TrimPrefix(p, "/"))
		if err != nil {
			why = append(why, p+": "+pathErrText(err))
			continue
		}
		m, err := parseKernelConfig(file, keys)
		file.Close()
		if err != nil {
			why = append(why, p+": "+pathErrText(err))
			continue
		}
		return m, p
	}
	if release == "" {
		why = append(why, "/boot/config-<release>: kernel release unknown")
	}
	return nil, "not readable: " + strings.Join(why, "; ")
}

// pathErrText drops the fs.PathError wrapper, whose path is relative to
// the fs.FS root, leaving "no such file or directory".
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// String is a one-line form for logs: "perf cycles: no (…)".
func (c Counter) String() string {
	s := fmt.Sprintf("%s: %s", c.Name, yesNo(c.Works))
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
