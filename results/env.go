package results

import (
	"fmt"
	"time"
)

// Env and what it holds: the `rtload env` facts a summary keeps
// (Summary.Env), one definition that sysinfo fills.

// Env describes the machine and this process as a latency run saw them:
// the `rtload env` facts (sysinfo.Gather fills them; sysinfo.Facts adds
// their rendering and checks). Items Gather could not read keep their
// zero value unless the field says otherwise; a summary written without
// them (a foreign run) holds the zero Env.
type Env struct {
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
	Counters []CounterCheck `json:"counters"`

	Privileges Privileges `json:"privileges"`

	// SchedRTRuntimeUs and SchedRTPeriodUs are /proc/sys/kernel/sched_rt_*:
	// RT tasks get runtime per period; runtime -1 turns throttling off.
	// Both 0 when unreadable (a readable period is never 0).
	SchedRTRuntimeUs int64 `json:"sched_rt_runtime_us"`
	SchedRTPeriodUs  int64 `json:"sched_rt_period_us"`

	// Cmdline is /proc/cmdline without its trailing newline.
	Cmdline string `json:"cmdline"`
	// BootID is /proc/sys/kernel/random/boot_id, a random UUID the kernel
	// draws at each boot: two runs with the same one ran in one boot (one
	// session's boot effect, sessions.go). Booted is the boot's time
	// (/proc/stat btime, whole seconds, UTC). Both zero when unreadable.
	BootID string    `json:"boot_id,omitempty"`
	Booted time.Time `json:"booted,omitzero"`
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

// CounterCheck says whether one clock or counter works for this process.
type CounterCheck struct {
	// Name is "perf cycles", "perf task-clock", "tsc" or "clock_monotonic".
	Name  string `json:"name"`
	Works bool   `json:"works"`
	// Note is the errno text when it does not work ("perf_event_open: no
	// such file or directory (ENOENT): not supported by this CPU/VM"),
	// "invariant"/"not invariant" for tsc, the resolution for
	// clock_monotonic.
	Note string `json:"note"`
}

// String is a one-line form for logs: "perf cycles: no (…)".
func (c CounterCheck) String() string {
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

// Container says whether this process runs in a container and what its
// real-time privileges depend on there: the cgroup's RT budget on cgroup
// v1. The zero value is "not in a container, nothing known".
type Container struct {
	// Runtime is "docker", "podman", "kubernetes", "lxc", "containerd",
	// "systemd-nspawn", or "container" when only the kind is unknown; ""
	// when nothing says this is a container.
	Runtime string `json:"runtime,omitempty"`
	// Evidence lists what was found, for a person ("/.dockerenv exists",
	// "/proc/1/cgroup: 4:memory:/docker/3f2a…", "/ is an overlay mount").
	Evidence []string `json:"evidence,omitempty"`
	// CgroupV2 is true on the unified hierarchy alone
	// (/sys/fs/cgroup/cgroup.controllers): it has no RT budget per cgroup.
	CgroupV2 bool `json:"cgroup_v2"`
	// Cgroup is this process's cgroup: the cpu controller's path on
	// cgroup v1, the unified path on v2 ("/" inside a cgroup namespace).
	Cgroup string `json:"cgroup,omitempty"`
	// RTRuntimeUs is the cgroup's cpu.rt_runtime_us (cgroup v1 with
	// CONFIG_RT_GROUP_SCHED): the µs per cpu.rt_period_us its SCHED_FIFO
	// and SCHED_RR threads may run; 0 refuses them with EPERM, -1 is no
	// limit. RTRuntimeKnown is false when there is no such file.
	RTRuntimeUs    int64 `json:"rt_runtime_us,omitempty"`
	RTRuntimeKnown bool  `json:"rt_runtime_known"`
	// RTBudgets is the RT budget of this process's cgroup (first) and of
	// each parent up to the root (last), on cgroup v1; nil on cgroup v2
	// or without the cpu controller's cpu.rt_runtime_us.
	RTBudgets []RTBudget `json:"rt_budgets,omitempty"`
}

// In reports whether anything says this process runs in a container.
func (c Container) In() bool { return c.Runtime != "" }

// RTBudget is one cgroup's RT budget on cgroup v1 with
// CONFIG_RT_GROUP_SCHED: cpu.rt_runtime_us, the µs per cpu.rt_period_us
// its SCHED_FIFO and SCHED_RR threads may run. 0 refuses them with EPERM,
// even to root; -1 is no limit. A cgroup can be given a budget only up to
// what its parent has (its siblings' budgets subtracted), so a parent of 0
// makes every write below it fail with EINVAL.
type RTBudget struct {
	// Cgroup is the cgroup's path in the cpu hierarchy ("/libpod_parent").
	Cgroup string `json:"cgroup"`
	// File is its cpu.rt_runtime_us where this process has the cpu
	// controller mounted ("/sys/fs/cgroup/cpu/libpod_parent/cpu.rt_runtime_us"):
	// in a container, the host's file wherever the host mounts the
	// hierarchy at the same place.
	File string `json:"file"`
	// RuntimeUs is the budget, when Known. Known is false for a cgroup
	// this process cannot see: a container's mount of the hierarchy
	// starts at its own cgroup, so its parents are not in it.
	RuntimeUs int64 `json:"runtime_us"`
	Known     bool  `json:"known"`
}
