package sysinfo

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// section is one titled group of Text rows.
type section struct {
	title string
	rows  [][2]string // key, value
}

func (s *section) add(key, format string, args ...any) {
	s.rows = append(s.rows, [2]string{key, fmt.Sprintf(format, args...)})
}

// Text renders f for `rtload env`: sections Kernel, CPU, Clocks & counters,
// Privileges, Real-time and Hardening, each a list of "key: value" rows with
// values aligned within each section and one-line hints in parentheses.
// It reads nothing; every line derives from f.
func (f Facts) Text() string {
	return render([]section{
		f.kernelSection(), f.cpuSection(), f.clockSection(),
		f.privilegeSection(), f.realTimeSection(), f.hardeningSection(),
	})
}

// kernelSection is Text's "Kernel": uname, the cmdline, where the kernel
// config came from, and any hypervisor.
func (f Facts) kernelSection() section {
	kern := section{title: "Kernel"}
	kern.add("hostname", "%s", f.Hostname)
	kern.add("kernel", "%s", f.Kernel)
	kern.add("kernel version", "%s", f.KernelVersion)
	kern.add("arch", "%s", f.Arch)
	kern.add("cmdline", "%s", f.Cmdline)
	kern.add("kernel config", "%s", f.KernelConfigSource)
	if f.Virtualization != "" {
		kern.add("virtualization", "%s (timings include VM exits and steal time)", f.Virtualization)
	} else {
		kern.add("virtualization", "none detected")
	}
	return kern
}

// cpuSection is Text's "CPU": the model, the CPUs online and allowed,
// cpufreq and cpuidle.
func (f Facts) cpuSection() section {
	cpu := section{title: "CPU"}
	cpu.add("model", "%s", orNone(f.CPUModel, "unknown"))
	if f.Microcode != "" {
		cpu.add("microcode", "%s", f.Microcode)
	}
	cpu.add("online cpus", "%d", f.CPUs)
	allowed := formatCPUList(f.AllowedCPUs)
	if len(f.AllowedCPUs) < f.CPUs {
		allowed += fmt.Sprintf(" (%d of %d: restricted by affinity or cpuset)", len(f.AllowedCPUs), f.CPUs)
	}
	cpu.add("allowed cpus", "%s", orNone(allowed, "unknown"))
	switch f.Governor {
	case "":
		cpu.add("cpufreq governor", "none (no cpufreq: firmware or hypervisor sets the frequency)")
	case "performance":
		cpu.add("cpufreq governor", "performance")
	default:
		cpu.add("cpufreq governor", "%s (frequency follows load: 'performance' gives steadier latency)", f.Governor)
	}

	if f.CPUIdleDriver != "" || f.CPUIdleGovernor != "" {
		cpu.add("cpuidle", "driver %s, governor %s (C-states; cpu_dma_latency holds CPUs out of deep ones during a run)",
			orNone(f.CPUIdleDriver, "none"), orNone(f.CPUIdleGovernor, "none"))
	}
	return cpu
}

// clockSection is Text's "Clocks & counters": the clocksource, the TSC,
// and one row per perf counter probed.
func (f Facts) clockSection() section {
	clk := section{title: "Clocks & counters"}
	cs := orNone(f.Clocksource, "unknown")
	switch f.Clocksource {
	case "hpet", "acpi_pm", "jiffies", "pit":
		cs += " (slow: clock_gettime leaves the vDSO and reads hardware)"
	}
	if len(f.AvailableClocksources) > 0 {
		cs += "; available: " + strings.Join(f.AvailableClocksources, " ")
	}
	clk.add("clocksource", "%s", cs)
	clk.add("tsc flags", "%s", orNone(strings.Join(f.TSCFlags, " "), "none"))
	if f.TSCKHz != 0 {
		clk.add("tsc_khz", "%d (TSC ticks are not core cycles)", f.TSCKHz)
	} else {
		clk.add("tsc_khz", "unknown (no tsc_freq_khz in sysfs; rt calibrates)")
	}
	for _, c := range f.Counters {
		v := yesNo(c.Works)
		if c.Note != "" {
			v += ": " + c.Note
		}
		if c.Name == "tsc" && c.Works {
			v += "; TSC ticks are not core cycles"
			if c.Note != "invariant" {
				v += "; rate changes with P/C-states, do not convert ticks to time"
			}
		}
		clk.add(c.Name, "%s", v)
	}
	return clk
}

// privilegeSection is Text's "Privileges": ids, capabilities and what each
// one allows, rlimits, perf_event_paranoid, /dev/net/tun, and any
// container with its cgroup RT budget.
func (f Facts) privilegeSection() section {
	p := f.Privileges
	priv := section{title: "Privileges"}
	priv.add("uid / euid", "%d / %d", p.UID, p.EUID)
	priv.add("effective caps", "%s", capSummary(p.Caps))
	priv.add("CAP_SYS_NICE", "%s (SCHED_FIFO/RR at any priority)", yesNo(p.CapSysNice))
	priv.add("CAP_IPC_LOCK", "%s (mlockall beyond RLIMIT_MEMLOCK)", yesNo(p.CapIPCLock))
	priv.add("CAP_NET_ADMIN", "%s (tap devices, links in rtload's netns)", yesNo(p.CapNetAdmin))
	priv.add("CAP_PERFMON", "%s (perf counters whatever perf_event_paranoid says)", yesNo(p.CapPerfmon))
	priv.add("CAP_SYS_ADMIN", "%s (network namespaces)", yesNo(p.CapSysAdmin))
	priv.add("rlimit_rtprio", "%s", rtprioText(p.RLimitRTPrio))
	priv.add("rlimit_memlock", "%s", memlockText(p.RLimitMemlock))
	priv.add("perf_event_paranoid", "%s", paranoidText(f.PerfEventParanoid))
	priv.add("/dev/net/tun", "%s", map[bool]string{true: "present", false: "missing (tap scenarios cannot run)"}[f.DevNetTun])
	if c := f.Container; c.In() {
		priv.add("container", "%s (%s)", c.Runtime, strings.Join(c.Evidence, "; "))
	}
	if c := f.Container; c.RTRuntimeKnown {
		priv.add("cgroup cpu.rt_runtime_us", "%d in %s (cgroup v1 RT budget; 0 refuses SCHED_FIFO)%s", c.RTRuntimeUs, c.Cgroup, parentBudgets(c.RTBudgets))
	}
	return priv
}

// realTimeSection is Text's "Real-time": RT throttling, the preemption
// model, isolated and tickless CPUs, the timer-tick options of the kernel
// config and the CONFIG_PREEMPT* options set.
func (f Facts) realTimeSection() section {
	rt := section{title: "Real-time"}
	rt.add("sched_rt_runtime_us", "%s", rtRuntimeText(f.SchedRTRuntimeUs, f.SchedRTPeriodUs))
	if f.SchedRTPeriodUs != 0 {
		rt.add("sched_rt_period_us", "%d", f.SchedRTPeriodUs)
	}
	rt.add("preemption", "%s", f.preemptModel())
	rt.add("isolcpus", "%s", orNone(f.Isolcpus, "none"))
	rt.add("nohz_full", "%s", orNone(f.NohzFull, "none"))
	var preemptY []string
	for _, k := range slices.Sorted(maps.Keys(f.KernelConfig)) {
		v := f.KernelConfig[k]
		switch {
		case strings.HasPrefix(k, "CONFIG_PREEMPT"):
			if v == "y" {
				preemptY = append(preemptY, k)
			}
		case isTickOption(k):
			rt.add(k, "%s", configValueText(v))
		}
	}
	if len(preemptY) > 0 {
		rt.add("CONFIG_PREEMPT*=y", "%s", strings.Join(preemptY, " "))
	}
	return rt
}

// hardeningSection is Text's "Hardening": the kernel config options
// Real-time does not show, the hardening and mitigation parameters of the
// cmdline, and the vulnerabilities the CPU is not immune to.
func (f Facts) hardeningSection() section {
	hard := section{title: "Hardening"}
	for _, k := range slices.Sorted(maps.Keys(f.KernelConfig)) {
		// All of CONFIG_PREEMPT* is in the JSON; the text lists the set
		// ones, under Real-time with the timer-tick options.
		if !strings.HasPrefix(k, "CONFIG_PREEMPT") && !isTickOption(k) {
			hard.add(k, "%s", configValueText(f.KernelConfig[k]))
		}
	}
	if len(f.Hardening) == 0 {
		hard.add("cmdline", "no hardening or mitigation parameters (kernel defaults)")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Hardening)) {
		v := f.Hardening[k]
		switch {
		case k == "mitigations" && v == "off":
			v += " (CPU mitigations off: not comparable with a default kernel)"
		case (k == "init_on_alloc" || k == "init_on_free") && (v == "1" || v == "on"):
			v += " (every page and slab object zeroed: allocation costs more)"
		}
		hard.add(k, "%s", v)
	}

	// The mitigations in force: the vulnerabilities the CPU is not immune to.
	for _, k := range slices.Sorted(maps.Keys(f.Vulnerabilities)) {
		if v := f.Vulnerabilities[k]; v != "Not affected" {
			hard.add("vulnerability "+k, "%s", v)
		}
	}
	return hard
}

// isTickOption reports whether kernel config option k sets the timer tick
// (CONFIG_HZ*, CONFIG_NO_HZ*), which Text shows under Real-time.
func isTickOption(k string) bool {
	return strings.HasPrefix(k, "CONFIG_HZ") || strings.HasPrefix(k, "CONFIG_NO_HZ")
}

// configValueText is a kernel config value as Text shows it: "n (not set)" for n.
func configValueText(v string) string {
	if v == "n" {
		return "n (not set)"
	}
	return v
}

// render aligns the values of each section one column after its longest key.
func render(secs []section) string {
	var b strings.Builder
	for i, s := range secs {
		width := 0
		for _, r := range s.rows {
			width = max(width, len(r[0])+1)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.title + "\n")
		for _, r := range s.rows {
			fmt.Fprintf(&b, "  %-*s %s\n", width, r[0]+":", r[1])
		}
	}
	return b.String()
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// capSummary lists effective caps, or "all 41 but …" when most are held.
func capSummary(caps []string) string {
	if len(caps) == 0 {
		return "none"
	}
	if len(caps) <= len(capTable)/2 {
		return strings.Join(caps, " ")
	}
	var missing, extra []string
	for _, c := range capTable {
		if !slices.Contains(caps, c) {
			missing = append(missing, c)
		}
	}
	for _, c := range caps {
		if !slices.Contains(capTable[:], c) {
			extra = append(extra, c)
		}
	}
	s := fmt.Sprintf("all %d", len(capTable))
	if len(missing) > 0 {
		s += " but " + strings.Join(missing, " ")
	}
	if len(extra) > 0 {
		s += " plus " + strings.Join(extra, " ")
	}
	return s
}

const rlimInfinity = ^uint64(0)

func rtprioText(v uint64) string {
	switch {
	case v == rlimInfinity:
		return "unlimited"
	case v == 0:
		return "0 (without CAP_SYS_NICE: no SCHED_FIFO/RR)"
	default:
		return fmt.Sprintf("%d (without CAP_SYS_NICE: SCHED_FIFO/RR up to priority %d)", v, v)
	}
}

func memlockText(v uint64) string {
	if v == rlimInfinity {
		return "unlimited"
	}
	return fmt.Sprintf("%s (without CAP_IPC_LOCK: mlockall fails beyond this)", bytesText(v))
}

// bytesText is "8 MiB" for exact multiples, else "8388609 bytes".
func bytesText(v uint64) string {
	for _, u := range []struct {
		n    uint64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if v >= u.n && v%u.n == 0 {
			return fmt.Sprintf("%d %s", v/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", v)
}

func paranoidText(v int) string {
	var hint string
	switch {
	case v == -99:
		return "unreadable"
	case v <= -1:
		hint = "no restrictions"
	case v == 0:
		hint = "unprivileged: per-process and CPU-wide, no raw tracepoints"
	case v == 1:
		hint = "unprivileged: per-process, user and kernel"
	case v == 2:
		hint = "unprivileged: per-process, user space only"
	default:
		hint = "unprivileged: no perf_event_open at all (distro patch)"
	}
	return fmt.Sprintf("%d (%s; CAP_PERFMON lifts it)", v, hint)
}

func rtRuntimeText(runtimeUs, periodUs int64) string {
	switch {
	case periodUs == 0:
		return "unreadable"
	case runtimeUs < 0:
		return fmt.Sprintf("%d (RT throttling OFF: a runaway SCHED_FIFO thread can hang a CPU)", runtimeUs)
	default:
		return fmt.Sprintf("%d (RT throttling on: RT threads get %v per %v)", runtimeUs,
			time.Duration(runtimeUs)*time.Microsecond, time.Duration(periodUs)*time.Microsecond)
	}
}

// preemptModel names the preemption model from uname -v, the kernel config
// and a preempt= boot parameter. With PREEMPT_DYNAMIC the live mode sits in
// debugfs (/sys/kernel/debug/sched/preempt), which Gather does not read.
func (f Facts) preemptModel() string {
	cfg := func(k string) bool { return f.KernelConfig[k] == "y" }
	if cfg("CONFIG_PREEMPT_RT") || strings.Contains(f.KernelVersion, "PREEMPT_RT") {
		return "full realtime (PREEMPT_RT)"
	}
	var built string
	switch {
	case cfg("CONFIG_PREEMPT_NONE"):
		built = "none"
	case cfg("CONFIG_PREEMPT_VOLUNTARY"):
		built = "voluntary"
	case cfg("CONFIG_PREEMPT_LAZY"):
		built = "lazy"
	case cfg("CONFIG_PREEMPT"):
		built = "full"
	}
	if cfg("CONFIG_PREEMPT_DYNAMIC") || strings.Contains(f.KernelVersion, "PREEMPT_DYNAMIC") {
		for _, p := range splitCmdline(f.Cmdline) {
			if v, ok := strings.CutPrefix(p, "preempt="); ok {
				return fmt.Sprintf("dynamic, %s (cmdline preempt=)", v)
			}
		}
		if built != "" {
			return fmt.Sprintf("dynamic, %s (build default; no preempt= on cmdline)", built)
		}
		return "dynamic (mode unknown: see /sys/kernel/debug/sched/preempt)"
	}
	if built != "" {
		return built
	}
	if strings.Contains(f.KernelVersion, " PREEMPT ") {
		return "full"
	}
	return "unknown (no kernel config)"
}

// parentBudgets lists the parents' RT budgets after the cgroup's own:
// "; parents: /libpod_parent 0, / 950000" ("not visible here" for those
// above a container's mount of the hierarchy).
func parentBudgets(bs []RTBudget) string {
	if len(bs) < 2 {
		return ""
	}
	var parts []string
	for _, b := range bs[1:] {
		if b.Known {
			parts = append(parts, fmt.Sprintf("%s %d", b.Cgroup, b.RuntimeUs))
		} else {
			parts = append(parts, b.Cgroup+" not visible here")
		}
	}
	return "; parents: " + strings.Join(parts, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
