package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// Preflight checks, before anything is built, every privilege the trials
// need and returns all that are missing at once, joined (errors.Is
// rt.ErrNoPrivilege). With allowDegraded it returns only those that
// --allow-degraded cannot replace (network namespaces, tap devices); the
// others are then noted per thread as the run degrades. In a container
// each missing privilege names the container setting that gives it
// (--cap-add SYS_NICE, --ulimit rtprio=99, --ulimit memlock=-1, the
// cgroup's RT budget) instead of "run as root".
func Preflight(trials []scenario.Trial, allowDegraded bool) error {
	return preflight(trials, allowDegraded, readMachine())
}

// machine is what Preflight reads of this process and its host;
// readMachine reads it, tests give fixtures.
type machine struct {
	nice, ipcLock, sysAdmin, netAdmin bool
	rtprio, memlock                   uint64 // soft RLIMIT_RTPRIO, RLIMIT_MEMLOCK (bytes)
	dmaExists, dmaWritable            bool   // /dev/cpu_dma_latency
	container                         sysinfo.Container
}

func readMachine() machine {
	var rtprio, rl unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_RTPRIO, &rtprio)
	_ = unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl)
	_, statErr := os.Stat("/dev/cpu_dma_latency")
	return machine{
		nice: sysinfo.HasCap("CAP_SYS_NICE"), ipcLock: sysinfo.HasCap("CAP_IPC_LOCK"),
		sysAdmin: sysinfo.HasCap("CAP_SYS_ADMIN"), netAdmin: sysinfo.HasCap("CAP_NET_ADMIN"),
		rtprio: rtprio.Cur, memlock: rl.Cur,
		dmaExists: statErr == nil, dmaWritable: unix.Access("/dev/cpu_dma_latency", unix.W_OK) == nil,
		container: sysinfo.ThisContainer(),
	}
}

// rtThread is one thread of a trial that asks for SCHED_FIFO/RR.
type rtThread struct {
	what     string // "reader rt", "sender for socks", "probe hackbench"
	policy   scenario.Policy
	priority int
}

// rtThreads lists the real-time threads of sp: readers, senders, probes.
func rtThreads(sp *scenario.Spec) []rtThread {
	var out []rtThread
	for _, r := range sp.Readers {
		out = append(out, rtThread{"reader " + r.Name, r.Policy, r.Priority})
	}
	for _, t := range sp.Traffic {
		out = append(out, rtThread{"sender for " + t.Endpoint, t.Policy, t.Priority})
	}
	for _, p := range sp.Probes {
		out = append(out, rtThread{"probe " + p.Name, p.Policy, p.Priority})
	}
	return out
}

const degradeSched = "run at SCHED_OTHER and mark results degraded"

// preflight is Preflight on the machine m.
func preflight(trials []scenario.Trial, allowDegraded bool, m machine) error {
	var errs []error
	seen := map[string]bool{}
	add := func(e *rt.PrivilegeError, degradable bool) {
		if seen[e.Op] || (degradable && allowDegraded) {
			return
		}
		seen[e.Op] = true
		errs = append(errs, e)
	}
	c := m.container
	for _, tr := range trials {
		sp := tr.Spec
		for _, th := range rtThreads(&sp) {
			pol := schedPolicy(th.policy)
			if pol == rt.Other {
				continue
			}
			op := fmt.Sprintf("sched_setattr(%s %d) for %s", pol, th.priority, th.what)
			if !m.nice && m.rtprio < uint64(th.priority) {
				add(&rt.PrivilegeError{Op: op, Cap: "CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority)", Hint: niceHint(c), Degraded: degradeSched}, true)
			} else if c.RTRuntimeKnown && c.RTRuntimeUs == 0 {
				add(&rt.PrivilegeError{Op: op, Cap: fmt.Sprintf("an RT runtime budget in cgroup %s (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root)", c.Cgroup),
					Hint: budgetHint(c), Degraded: degradeSched}, true)
			}
		}
		if len(sp.Readers) > 0 && !m.ipcLock && m.memlock != unix.RLIM_INFINITY {
			add(&rt.PrivilegeError{Op: "mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT)", Cap: "CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK)",
				Hint: memlockHint(c), Degraded: "run with memory unlocked (page faults may show as latency) and mark results degraded"}, true)
		}
		if sp.CPUDMALatency >= 0 && m.dmaExists && !m.dmaWritable {
			add(&rt.PrivilegeError{Op: "open /dev/cpu_dma_latency", Cap: "root (the file is 0600)", Hint: containerHint(c, "--device /dev/cpu_dma_latency, and rtload as root in it", ""),
				Degraded: "let CPUs enter deep idle states (or set cpu_dma_latency: -1)"}, true)
		}
		if sp.Network.Namespace == scenario.NamespacePrivate && !m.sysAdmin {
			add(&rt.PrivilegeError{Op: "unshare(CLONE_NEWNET) for network.namespace: private", Cap: "CAP_SYS_ADMIN (run as root; --allow-degraded cannot replace a private namespace)",
				Hint: containerHint(c, "--cap-add SYS_ADMIN (or --privileged)", "securityContext.privileged: true")}, false)
		}
		for _, e := range sp.Endpoints {
			if e.Kind == scenario.EndpointTap && !m.netAdmin {
				add(&rt.PrivilegeError{Op: "TUNSETIFF for tap endpoints", Cap: "CAP_NET_ADMIN (run as root; --allow-degraded cannot replace tap devices)",
					Hint: containerHint(c, "--cap-add NET_ADMIN --device /dev/net/tun", "securityContext.capabilities.add: [NET_ADMIN], and /dev/net/tun (privileged, or a device plugin)")}, false)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &PreflightError{errs}
}

// containerHint names the setting to change in container c: flags for
// docker and podman (and other runtimes), the pod spec for Kubernetes
// (k8s "" = the same as the flags). "" outside a container.
func containerHint(c sysinfo.Container, flags, k8s string) string {
	switch {
	case !c.In():
		return ""
	case c.Runtime == "kubernetes" && k8s != "":
		return "in this Kubernetes pod: " + k8s
	case c.Runtime == "kubernetes":
		return "in this Kubernetes pod: the container runtime's setting " + flags
	}
	return fmt.Sprintf("in this container (%s): start it with %s", c.Runtime, flags)
}

// niceHint is the container setting for SCHED_FIFO without CAP_SYS_NICE,
// with cgroup v2's lack of an RT budget stated.
func niceHint(c sysinfo.Container) string {
	h := containerHint(c, "--cap-add SYS_NICE, or --ulimit rtprio=99 (SCHED_FIFO/RR up to 99 without the capability)",
		"securityContext.capabilities.add: [SYS_NICE] (RLIMIT_RTPRIO comes from the container runtime's defaults, not the pod spec)")
	if h != "" && c.CgroupV2 {
		h += "; cgroup v2 has no RT budget per cgroup: a kernel with CONFIG_RT_GROUP_SCHED=y allows SCHED_FIFO only in the root cgroup"
	}
	return h
}

// budgetHint says how to give cgroup v1's cpu.rt_runtime_us a budget.
func budgetHint(c sysinfo.Container) string {
	if h := containerHint(c, "--cpu-rt-runtime=950000 (dockerd needs --cpu-rt-runtime too, and every parent cgroup a budget)",
		"no pod field sets it: run the pod on a node whose container runtime gives cgroups an RT budget, or without CONFIG_RT_GROUP_SCHED"); h != "" {
		return h
	}
	return fmt.Sprintf("give it one (echo 950000 > /sys/fs/cgroup/cpu%s/cpu.rt_runtime_us, its parents first), or run rtload in the root cgroup", strings.TrimSuffix(c.Cgroup, "/"))
}

// memlockHint is the container setting for mlockall.
func memlockHint(c sysinfo.Container) string {
	return containerHint(c, "--ulimit memlock=-1 (or --cap-add IPC_LOCK)", "securityContext.capabilities.add: [IPC_LOCK]")
}

// PreflightError lists every missing privilege, one per line.
type PreflightError struct{ Missing []error }

func (e *PreflightError) Error() string {
	if len(e.Missing) == 1 {
		return "missing privilege: " + e.Missing[0].Error()
	}
	s := fmt.Sprintf("%d missing privileges:", len(e.Missing))
	for _, m := range e.Missing {
		s += "\n  - " + m.Error()
	}
	return s
}

// Unwrap returns the individual *rt.PrivilegeError values.
func (e *PreflightError) Unwrap() []error { return e.Missing }

// Unmet is one requirement of a scenario (its requires: block) this
// machine does not meet.
type Unmet struct {
	// Requirement as the scenario writes it: "CONFIG_HARDENED_USERCOPY=y",
	// "init_on_alloc=1", "kernel >= 5.10", "feature tun", "cpus 4".
	Requirement string `json:"requirement"`
	// Have is what this machine has instead, with its source.
	Have string `json:"have"`
	// Fix says how to meet it.
	Fix string `json:"fix"`
}

// String is "requirement: have; to meet it: fix".
func (u Unmet) String() string {
	return fmt.Sprintf("%s: %s; to meet it: %s", u.Requirement, u.Have, u.Fix)
}

// RequirementsError is a scenario's requirements this machine does not
// meet, every one. It matches rt.ErrNotSupported (rtload exits 3).
type RequirementsError struct {
	Scenario string
	Unmet    []Unmet
}

func (e *RequirementsError) Error() string {
	var b strings.Builder
	noun := "requirements"
	if len(e.Unmet) == 1 {
		noun = "requirement"
	}
	fmt.Fprintf(&b, "scenario %s: this machine does not meet %d %s (--allow-degraded runs anyway and marks the results):", e.Scenario, len(e.Unmet), noun)
	for _, u := range e.Unmet {
		b.WriteString("\n  - " + u.String())
	}
	return b.String()
}

// Is matches rt.ErrNotSupported.
func (e *RequirementsError) Is(target error) bool { return target == rt.ErrNotSupported }

// Requirements checks r against the machine facts f and returns every
// requirement f does not meet, in the order r lists them (config,
// cmdline, kernel, features, cpus); nil when all are met. f.KernelConfig
// must hold every option r.Config names: Gather reads its own list,
// (*sysinfo.Facts).ReadKernelConfig(r.ConfigNames()) adds the others; an
// option absent from a readable config counts as not set. Command-line
// parameters follow f.KernelParam (an absent init_on_alloc is its
// CONFIG_INIT_ON_ALLOC_DEFAULT_ON). Pure: it reads only r and f.
func Requirements(r scenario.Requires, f *sysinfo.Facts) []Unmet {
	var out []Unmet
	for _, o := range r.Config {
		if u := configUnmet(o, f); u != nil {
			out = append(out, *u)
		}
	}
	for _, p := range r.Cmdline {
		if u := cmdlineUnmet(p, f); u != nil {
			out = append(out, *u)
		}
	}
	if r.Kernel != "" {
		switch ok, parsed := r.Kernel.Allows(f.Kernel); {
		case !parsed:
			out = append(out, Unmet{"kernel " + string(r.Kernel), fmt.Sprintf("release %q holds no version", f.Kernel), "boot a kernel " + string(r.Kernel)})
		case !ok:
			out = append(out, Unmet{"kernel " + string(r.Kernel), "this kernel is " + f.Kernel, "boot a kernel " + string(r.Kernel)})
		}
	}
	for _, ft := range r.Features {
		if u := featureUnmet(ft, f); u != nil {
			out = append(out, *u)
		}
	}
	if n := len(f.AllowedCPUs); r.CPUs > 0 && n < r.CPUs {
		out = append(out, Unmet{fmt.Sprintf("cpus %d", r.CPUs), fmt.Sprintf("this process may use %d CPU(s) (%s)", n, sysinfo.FormatCPUList(f.AllowedCPUs)),
			"a machine with more CPUs, or a wider affinity (taskset, docker --cpuset-cpus, a Kubernetes pod's integer CPU request)"})
	}
	return out
}

// configUnmet checks one kernel config requirement.
func configUnmet(o scenario.ConfigOption, f *sysinfo.Facts) *Unmet {
	name, want := o.Name(), o.Value()
	if f.KernelConfig == nil {
		return &Unmet{string(o), "kernel config " + f.KernelConfigSource,
			"make the config readable: CONFIG_IKCONFIG_PROC gives /proc/config.gz (modprobe configs where it is a module), or install /boot/config-" + f.Kernel}
	}
	have, ok := f.KernelConfig[name]
	src := f.KernelConfigSource
	haveText := fmt.Sprintf("this kernel has %s=%s (%s)", name, have, src)
	switch {
	case !ok:
		have, haveText = "n", fmt.Sprintf("%s is absent from %s (no such option, or its dependencies are off): counts as not set", name, src)
	case have == "n":
		haveText = fmt.Sprintf("%s is not set in this kernel (%s)", name, src)
	}
	if have == want {
		return nil
	}
	short := strings.TrimPrefix(name, "CONFIG_")
	cmd := map[string]string{"y": "--enable " + short, "n": "--disable " + short, "m": "--module " + short}[want]
	if cmd == "" {
		cmd = "--set-val " + short + " " + strconv.Quote(want)
	}
	fix := fmt.Sprintf("boot a kernel built with %s=%s (scripts/config %s, then make olddefconfig)", name, want, cmd)
	if p := sysinfo.DefaultParam(name); p != "" {
		fix += fmt.Sprintf("; if the behaviour is what matters, %s=%s on the command line sets it at boot: require that instead",
			p, map[bool]string{true: "1", false: "0"}[want == "y"])
	}
	return &Unmet{string(o), haveText, fix}
}

// cmdlineFix is how to put a parameter on the kernel command line.
const cmdlineFix = "(GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub or grub2-mkconfig, and reboot)"

// cmdlineUnmet checks one command-line requirement: a boolean parameter
// rtload knows by its state (default included), others as text.
func cmdlineUnmet(p scenario.CmdlineParam, f *sysinfo.Facts) *Unmet {
	name := p.Name()
	k := f.KernelParam(name)
	want, isBool := sysinfo.ParseBool(p.Value())
	switch {
	case k.Bool && p.HasValue() && isBool:
		switch {
		case !k.Known:
			return &Unmet{string(p), k.Why, "make the kernel config readable (CONFIG_IKCONFIG_PROC, or /boot/config-" + f.Kernel + ") so the default can be read, or put " + string(p) + " on the command line"}
		case k.On == want:
			return nil
		case k.Missing != "" && want:
			return &Unmet{string(p), k.Why, "boot a kernel built with " + k.Missing + "=y, with " + string(p) + " on its command line " + cmdlineFix}
		}
		return &Unmet{string(p), "this boot has " + name + " " + map[bool]string{true: "on", false: "off"}[k.On] + " (" + k.Why + ")",
			"boot with " + string(p) + " on the kernel command line " + cmdlineFix}
	case p.HasValue() && k.Given && k.Raw == p.Value(), !p.HasValue() && k.Given:
		return nil
	case k.Given:
		return &Unmet{string(p), fmt.Sprintf("this boot has %s=%s (/proc/cmdline)", name, k.Raw), "boot with " + string(p) + " instead " + cmdlineFix}
	}
	return &Unmet{string(p), name + " is not on the command line (/proc/cmdline)", "boot with " + string(p) + " on the kernel command line " + cmdlineFix}
}

// featureUnmet checks one feature requirement.
func featureUnmet(ft scenario.Feature, f *sysinfo.Facts) *Unmet {
	req := "feature " + ft.String()
	switch ft {
	case scenario.FeatureTun:
		if f.DevNetTun {
			return nil
		}
		return &Unmet{req, "/dev/net/tun is missing", "load the tun driver (CONFIG_TUN; modprobe tun); in a container: --device /dev/net/tun"}
	case scenario.FeatureCycles, scenario.FeatureCounters:
		for _, c := range f.Counters {
			if c.Name != "perf cycles" {
				continue
			}
			if c.Works {
				return nil
			}
			fix := "a PMU this process may count with: bare metal, or a VM with the PMU passed through (KVM: -cpu host,pmu=on); kernel.perf_event_paranoid ≤ 1 or CAP_PERFMON"
			if ft == scenario.FeatureCycles {
				fix += "; user-space rdpmc (/sys/bus/event_source/devices/cpu/rdpmc ≥ 1)"
			}
			return &Unmet{req, "hardware counters do not work here: " + c.Note, fix}
		}
		return &Unmet{req, "hardware counters were not probed", "run on a machine whose facts include the perf cycles probe (rtload env)"}
	}
	return &Unmet{req, "unknown feature", "a feature rtload knows: tun, cycles, counters"}
}
