package sysinfo

import (
	"bytes"
	"cmp"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/results"
)

// Facts are the `rtload env` facts of this machine and process: the
// schema results.Env (summary.json's "env", one definition), with
// Gather's reading, Text's rendering and the checks a scenario's
// requirements need (KernelParam, ReadKernelConfig).
type Facts struct {
	results.Env
}

// Counter, Privileges, Container and RTBudget are the results types
// sysinfo fills (results.CounterCheck, …): the names of their producer.
type (
	Counter    = results.CounterCheck
	Privileges = results.Privileges
	Container  = results.Container
	RTBudget   = results.RTBudget
)

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
	f.BootID = bootID(read("proc/sys/kernel/random/boot_id"))
	if stat, err := fs.ReadFile(fsys, "proc/stat"); err == nil {
		f.Booted = parseBtime(stat)
	}
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
