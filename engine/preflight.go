package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// Preflight checks, before anything is built, every privilege and every
// piece of the machine the trials need, and returns all that are missing
// at once, joined (errors.Is rt.ErrNoPrivilege): capabilities and
// rlimits, the cgroup RT budget of this process's cgroup and its parents,
// /dev/cpu_dma_latency, /dev/net/tun, a writable /run/netns for the
// namespace's bind mount (and no AppArmor profile that denies mounts), a
// writable /proc/sys for tap devices' rp_filter. With allowDegraded it
// returns only those that --allow-degraded cannot replace (network
// namespaces, tap devices); the others are then noted per thread as the
// run degrades. In a container each problem names the container setting
// that fixes it (--cap-add SYS_NICE, --cpu-rt-runtime, --device
// /dev/cpu_dma_latency, --security-opt unmask=/proc/sys, …) instead of
// "run as root", and host settings (a parent cgroup's budget) by the file
// to write. It reads the devices by opening and closing them, nothing more.
func Preflight(trials []scenario.Trial, allowDegraded bool) error {
	return preflight(trials, allowDegraded, readMachine(needsOf(trials)))
}

// machine is what Preflight reads of this process and its host;
// readMachine reads it, tests give fixtures.
type machine struct {
	nice, ipcLock, sysAdmin, netAdmin bool
	rtprio, memlock                   uint64 // soft RLIMIT_RTPRIO, RLIMIT_MEMLOCK (bytes)
	euid                              int
	// dmaErr and tunErr are what open(2) of /dev/cpu_dma_latency
	// (O_WRONLY) and /dev/net/tun (O_RDWR) returned; nil: it opened (or
	// was not needed).
	dmaErr, tunErr error
	// mounts is this process's mountinfo: where /run/netns and /proc/sys
	// are, and whether read-only.
	mounts []sysinfo.Mount
	// apparmor is this process's AppArmor label ("docker-default
	// (enforce)"), "" when none is readable.
	apparmor  string
	container sysinfo.Container
}

// needs is what the trials use that readMachine must open to check.
type needs struct{ dma, tun bool }

func needsOf(trials []scenario.Trial) needs {
	var n needs
	for _, tr := range trials {
		n.dma = n.dma || tr.Spec.CPUDMALatency >= 0
		for _, e := range tr.Spec.Endpoints {
			n.tun = n.tun || e.Kind == scenario.EndpointTap
		}
	}
	return n
}

func readMachine(n needs) machine {
	var rtprio, rl unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_RTPRIO, &rtprio)
	_ = unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl)
	m := machineFiles(os.DirFS("/"))
	m.nice, m.ipcLock = sysinfo.HasCap("CAP_SYS_NICE"), sysinfo.HasCap("CAP_IPC_LOCK")
	m.sysAdmin, m.netAdmin = sysinfo.HasCap("CAP_SYS_ADMIN"), sysinfo.HasCap("CAP_NET_ADMIN")
	m.rtprio, m.memlock, m.euid = rtprio.Cur, rl.Cur, os.Geteuid()
	if n.dma {
		// Opening adds a PM QoS request at the default (no constraint);
		// closing removes it.
		m.dmaErr = openClose("/dev/cpu_dma_latency", unix.O_WRONLY)
	}
	if n.tun {
		// No device exists until TUNSETIFF.
		m.tunErr = openClose("/dev/net/tun", unix.O_RDWR)
	}
	return m
}

// openClose opens path with flags and closes it: the error of open(2).
func openClose(path string, flags int) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// machineFiles reads what preflight needs from the files of fsys (rooted
// at "/"; a fixture tree in tests): mountinfo, the AppArmor label
// (/proc/self/attr/apparmor/current, or /proc/self/attr/current) and the
// container with its cgroups (sysinfo.DetectContainer).
func machineFiles(fsys fs.FS) machine {
	m := machine{mounts: sysinfo.ReadMounts(fsys), container: sysinfo.DetectContainer(fsys)}
	for _, p := range []string{"proc/self/attr/apparmor/current", "proc/self/attr/current"} {
		if b, err := fs.ReadFile(fsys, p); err == nil {
			m.apparmor = strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
			break
		}
	}
	return m
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

// checks collects preflight's problems, each once (by Op and Cap), in
// the order found; degradable ones are dropped under --allow-degraded.
type checks struct {
	allowDegraded bool
	seen          map[string]bool
	errs          []error
}

func (c *checks) add(e *rt.PrivilegeError, degradable bool) {
	key := e.Op + "\x00" + e.Cap
	if c.seen[key] || (degradable && c.allowDegraded) {
		return
	}
	c.seen[key] = true
	c.errs = append(c.errs, e)
}

// preflight is Preflight on the machine m.
func preflight(trials []scenario.Trial, allowDegraded bool, m machine) error {
	ck := &checks{allowDegraded: allowDegraded, seen: map[string]bool{}}
	c := m.container
	var budgetless []string // RT threads an RT budget of 0 refuses
	for _, tr := range trials {
		sp := tr.Spec
		for _, th := range rtThreads(&sp) {
			pol := schedPolicy(th.policy)
			if pol == rt.Other {
				continue
			}
			op := fmt.Sprintf("sched_setattr(%s %d) for %s", pol, th.priority, th.what)
			if !m.nice && m.rtprio < uint64(th.priority) {
				ck.add(&rt.PrivilegeError{Op: op, Cap: "CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority)", Hint: niceHint(c), Degraded: degradeSched}, true)
			}
			if c.RTRuntimeKnown && c.RTRuntimeUs == 0 && !slices.Contains(budgetless, th.what) {
				budgetless = append(budgetless, th.what)
			}
		}
		if len(sp.Readers) > 0 && !m.ipcLock && m.memlock != unix.RLIM_INFINITY {
			ck.add(&rt.PrivilegeError{Op: "mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT)", Cap: "CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK)",
				Hint: memlockHint(c), Degraded: "run with memory unlocked (page faults may show as latency) and mark results degraded"}, true)
		}
		if sp.CPUDMALatency >= 0 && m.dmaErr != nil {
			ck.add(dmaProblem(m.dmaErr, m.euid, c), true)
		}
		if sp.Network.Namespace == scenario.NamespacePrivate {
			namespaceProblems(ck, m)
		}
		for _, e := range sp.Endpoints {
			if e.Kind == scenario.EndpointTap {
				tapProblems(ck, m)
			}
		}
	}
	if len(budgetless) > 0 {
		ck.add(&rt.PrivilegeError{Op: "sched_setattr(SCHED_FIFO/SCHED_RR) for " + strings.Join(budgetless, ", "),
			Cap:  fmt.Sprintf("an RT runtime budget in cgroup %s (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root)", c.Cgroup),
			Hint: budgetHint(c), Degraded: degradeSched}, true)
	}
	if len(ck.errs) == 0 {
		return nil
	}
	return &PreflightError{ck.errs}
}

// dmaProblem says why /dev/cpu_dma_latency did not open (err from open(2)).
func dmaProblem(err error, euid int, c sysinfo.Container) *rt.PrivilegeError {
	const op = "open /dev/cpu_dma_latency"
	const degraded = "let CPUs enter deep idle states (or set cpu_dma_latency: -1)"
	switch {
	case errors.Is(err, unix.ENOENT):
		hint := containerHint(c, "--device /dev/cpu_dma_latency, or set cpu_dma_latency: -1 (--set cpu_dma_latency=-1) to run without it",
			"securityContext.privileged: true, or set cpu_dma_latency: -1 (--set cpu_dma_latency=-1) to run without it")
		if hint == "" {
			hint = "the kernel has no PM QoS device (CONFIG_CPU_IDLE): set cpu_dma_latency: -1 (--set cpu_dma_latency=-1) to run without it"
		}
		return &rt.PrivilegeError{Op: op, Cap: "the device /dev/cpu_dma_latency (it does not exist here)", Hint: hint, Degraded: degraded}
	case errors.Is(err, unix.EPERM) && euid == 0:
		return &rt.PrivilegeError{Op: op, Cap: "the device allowed (root was refused it: a device cgroup)", Err: err,
			Hint: containerHint(c, "--device /dev/cpu_dma_latency", "securityContext.privileged: true"), Degraded: degraded}
	}
	return &rt.PrivilegeError{Op: op, Cap: "root (the file is 0600)", Hint: containerHint(c, "--device /dev/cpu_dma_latency, and rtload as root in it", ""),
		Degraded: degraded}
}

// namespaceProblems checks what network.namespace: private needs: the
// capability, a writable /run/netns for the bind mount that names the
// namespace, and no AppArmor profile that denies mount(2).
func namespaceProblems(ck *checks, m machine) {
	c := m.container
	const op = "unshare(CLONE_NEWNET) for network.namespace: private"
	if !m.sysAdmin {
		ck.add(&rt.PrivilegeError{Op: op, Cap: "CAP_SYS_ADMIN (--allow-degraded cannot replace a private namespace)",
			Hint: orHost(containerHint(c, "--cap-add SYS_ADMIN (or --privileged)", "securityContext.privileged: true"), "run as root")}, false)
	}
	mountOp := "mount --bind /proc/thread-self/ns/net " + netns.Dir + "/<name> for network.namespace: private"
	if mt, ok := sysinfo.MountOf(m.mounts, netns.Dir); ok && mt.ReadOnly() {
		ck.add(&rt.PrivilegeError{Op: mountOp, Cap: fmt.Sprintf("a writable %s (it is on the read-only mount %s)", netns.Dir, mt.Point),
			Hint: orHost(containerHint(c, "--tmpfs /run (a --read-only container's /run is read-only)", "an emptyDir volume mounted at /run"),
				"mount a tmpfs on "+netns.Dir)}, false)
	}
	if p := deniesMount(m.apparmor); p != "" {
		ck.add(&rt.PrivilegeError{Op: mountOp, Cap: fmt.Sprintf("mount(2), which this process's AppArmor profile %s denies", p),
			Hint: orHost(containerHint(c, "--security-opt apparmor=unconfined (or --privileged)", "securityContext.appArmorProfile: {type: Unconfined} (or privileged: true)"),
				"run rtload unconfined (aa-exec -p unconfined)")}, false)
	}
}

// deniesMount returns the name of an AppArmor profile known to deny
// mount(2) (docker's docker-default, podman's containers-default-*), in
// enforce mode, from label; "" otherwise.
func deniesMount(label string) string {
	name, mode, _ := strings.Cut(label, " ")
	if mode != "(enforce)" {
		return ""
	}
	if name == "docker-default" || strings.HasPrefix(name, "containers-default") {
		return name
	}
	return ""
}

// tapProblems checks what tap endpoints need: CAP_NET_ADMIN, an openable
// /dev/net/tun, and a writable /proc/sys (tap.Create sets rp_filter).
func tapProblems(ck *checks, m machine) {
	c := m.container
	if !m.netAdmin {
		ck.add(&rt.PrivilegeError{Op: "TUNSETIFF for tap endpoints", Cap: "CAP_NET_ADMIN (--allow-degraded cannot replace tap devices)",
			Hint: orHost(containerHint(c, "--cap-add NET_ADMIN --device /dev/net/tun", "securityContext.capabilities.add: [NET_ADMIN], and /dev/net/tun (privileged, or a device plugin)"), "run as root")}, false)
	}
	switch err := m.tunErr; {
	case err == nil:
	case errors.Is(err, unix.ENOENT):
		ck.add(&rt.PrivilegeError{Op: "open /dev/net/tun for tap endpoints", Cap: "the device /dev/net/tun (it does not exist here; --allow-degraded cannot replace tap devices)",
			Hint: orHost(containerHint(c, "--device /dev/net/tun", "/dev/net/tun (privileged: true, or a device plugin)"), "load the tun driver (CONFIG_TUN; modprobe tun)")}, false)
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES):
		ck.add(&rt.PrivilegeError{Op: "open /dev/net/tun for tap endpoints", Cap: "the device allowed (open refused it: a device cgroup, or its mode)", Err: err,
			Hint: containerHint(c, "--device /dev/net/tun", "/dev/net/tun (privileged: true, or a device plugin)")}, false)
	default:
		ck.add(&rt.PrivilegeError{Op: "open /dev/net/tun for tap endpoints", Cap: "a /dev/net/tun that opens", Err: err}, false)
	}
	const sysNet = "/proc/sys/net"
	if mt, ok := sysinfo.MountOf(m.mounts, sysNet); ok && mt.ReadOnly() {
		flags := "--privileged (or the runtime's setting for a writable /proc/sys)"
		switch c.Runtime {
		case "podman":
			flags = "--security-opt unmask=/proc/sys (or --privileged)"
		case "docker":
			flags = "--security-opt systempaths=unconfined (or --privileged)"
		}
		ck.add(&rt.PrivilegeError{Op: "write " + sysNet + "/ipv4/conf/<tap>/rp_filter for tap endpoints",
			Cap:  fmt.Sprintf("a writable /proc/sys (%s is a read-only mount; --allow-degraded cannot replace tap devices)", mt.Point),
			Hint: orHost(containerHint(c, flags, "securityContext.privileged: true"), "remount "+mt.Point+" read-write")}, false)
	}
}

// orHost is hint, or host when hint is "" (not in a container).
func orHost(hint, host string) string {
	if hint != "" {
		return hint
	}
	return host
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

// rtBudget is the budget preflight suggests: the kernel's default
// sched_rt_runtime_us, all a cgroup can have under a root of 950000.
const rtBudget = 950000

// budgetHint says how to give cgroup v1's cpu.rt_runtime_us a budget: the
// container setting, and every parent cgroup (c.RTBudgets) whose budget
// is 0 or cannot be read from here, with the file to write on the host,
// parents first. A cgroup gets a budget only within its parent's.
func budgetHint(c sysinfo.Container) string {
	own := path.Join("/sys/fs/cgroup/cpu", c.Cgroup, "cpu.rt_runtime_us")
	var parents []sysinfo.RTBudget // root first
	if len(c.RTBudgets) > 0 {
		own = c.RTBudgets[0].File
		for i := len(c.RTBudgets) - 1; i >= 1; i-- {
			if b := c.RTBudgets[i]; !b.Known || b.RuntimeUs == 0 {
				parents = append(parents, b)
			}
		}
	}
	var zero, unseen []string
	for _, b := range parents {
		if b.Known {
			zero = append(zero, fmt.Sprintf("echo %d > %s", rtBudget, b.File))
		} else if b.Cgroup != "/" { // the root's budget is sched_rt_runtime_us
			unseen = append(unseen, b.File)
		}
	}
	var p string
	switch {
	case len(zero) > 0:
		p = fmt.Sprintf("its parent %s has 0 too, so first give the parents theirs: %s", parents[0].Cgroup, strings.Join(zero, "; "))
		if len(unseen) > 0 {
			p += "; and check " + strings.Join(unseen, ", ")
		}
	case len(unseen) > 0:
		p = fmt.Sprintf("the runtime can give it only what its parents have, and they are not visible from here: on the host, cat %s; if one holds 0, echo %d > it first (parents first), else the runtime fails with \"write …/cpu.rt_runtime_us: invalid argument\"",
			strings.Join(unseen, ", "), rtBudget)
	}
	if h := containerHint(c, fmt.Sprintf("--cpu-rt-runtime=%d", rtBudget)+map[bool]string{true: " (dockerd needs --cpu-rt-runtime too)"}[c.Runtime == "docker"],
		"no pod field sets it: run the pod on a node whose container runtime gives cgroups an RT budget, or without CONFIG_RT_GROUP_SCHED"); h != "" {
		if p != "" && c.Runtime != "kubernetes" {
			h += "; " + p
		}
		return h
	}
	if len(zero) > 0 {
		return fmt.Sprintf("give it one, parents first: %s; echo %d > %s; or run rtload in the root cgroup", strings.Join(zero, "; "), rtBudget, own)
	}
	return fmt.Sprintf("give it one (echo %d > %s, its parents first), or run rtload in the root cgroup", rtBudget, own)
}

// memlockHint is the container setting for mlockall.
func memlockHint(c sysinfo.Container) string {
	return containerHint(c, "--cap-add IPC_LOCK (or --ulimit memlock=-1, which the runtime can set only within its own hard limit or with CAP_SYS_RESOURCE)",
		"securityContext.capabilities.add: [IPC_LOCK]")
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
