package sysinfo

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

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
}

// In reports whether anything says this process runs in a container.
func (c Container) In() bool { return c.Runtime != "" }

// DetectContainer looks for the signs container runtimes leave, through
// fsys rooted at "/" (os.DirFS("/") for this machine, a fixture in
// tests): /.dockerenv (Docker), /run/.containerenv (Podman), the
// container= and KUBERNETES_SERVICE_HOST variables of this process's
// environment, runtime names in /proc/1/cgroup and /proc/self/cgroup
// (docker, kubepods, libpod, lxc, containerd), and an overlay root mount
// in /proc/self/mountinfo. It also reads this process's cgroup and, on
// cgroup v1, its cpu.rt_runtime_us. Unreadable files count as absent.
func DetectContainer(fsys fs.FS) Container {
	var c Container
	found := func(runtime, evidence string) {
		if c.Runtime == "" || c.Runtime == "container" {
			c.Runtime = runtime
		}
		c.Evidence = append(c.Evidence, evidence)
	}
	if _, err := fs.Stat(fsys, ".dockerenv"); err == nil {
		found("docker", "/.dockerenv exists")
	}
	if _, err := fs.Stat(fsys, "run/.containerenv"); err == nil {
		found("podman", "/run/.containerenv exists")
	}
	env, _ := fs.ReadFile(fsys, "proc/self/environ")
	for kv := range strings.SplitSeq(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
			found(v, "environment container="+v)
		}
		if strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=") {
			found("kubernetes", "environment KUBERNETES_SERVICE_HOST (a Kubernetes pod)")
		}
	}
	for _, file := range []string{"proc/1/cgroup", "proc/self/cgroup"} {
		b, _ := fs.ReadFile(fsys, file)
		for line := range strings.Lines(string(b)) {
			if rt := cgroupRuntime(line); rt != "" {
				found(rt, "/"+file+": "+shorten(strings.TrimSpace(line), 80))
				break
			}
		}
	}
	if mi, err := fs.ReadFile(fsys, "proc/self/mountinfo"); err == nil && rootIsOverlay(string(mi)) {
		found("container", "/ is an overlay mount (/proc/self/mountinfo)")
	}
	c.readCgroup(fsys)
	return c
}

// cgroupRuntime names the runtime a /proc/<pid>/cgroup line points at,
// or "".
func cgroupRuntime(line string) string {
	_, p, ok := strings.Cut(line, "::")
	if !ok {
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			p = line[i+1:]
		}
	}
	for _, m := range []struct{ marker, runtime string }{
		{"kubepods", "kubernetes"}, {"libpod", "podman"}, {"/docker/", "docker"}, {"docker-", "docker"},
		{"/lxc/", "lxc"}, {"lxc.payload", "lxc"}, {"containerd", "containerd"}, {"machine.slice/machine-", "systemd-nspawn"},
	} {
		if strings.Contains(p, m.marker) {
			return m.runtime
		}
	}
	return ""
}

// rootIsOverlay reports whether mountinfo's "/" mount is an overlay (the
// root filesystem of most container images). Fields: ID, parent, dev,
// root, mount point, options, optional fields, "-", fstype, …
// (proc_pid_mountinfo(5)); the last "/" mount wins.
func rootIsOverlay(mountinfo string) bool {
	overlay := false
	for line := range strings.Lines(mountinfo) {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) || f[4] != "/" {
			continue
		}
		overlay = f[sep+1] == "overlay" || f[sep+1] == "aufs"
	}
	return overlay
}

// readCgroup fills Cgroup, CgroupV2 and the cgroup v1 RT budget.
func (c *Container) readCgroup(fsys fs.FS) {
	if _, err := fs.Stat(fsys, "sys/fs/cgroup/cgroup.controllers"); err == nil {
		c.CgroupV2 = true
	}
	b, _ := fs.ReadFile(fsys, "proc/self/cgroup")
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" && c.Cgroup == "" {
			c.Cgroup = parts[2]
		}
		if slices.Contains(strings.Split(parts[1], ","), "cpu") {
			c.Cgroup = parts[2] // the v1 cpu controller's wins
			break
		}
	}
	if c.CgroupV2 {
		return
	}
	cg := strings.TrimPrefix(path.Clean("/"+c.Cgroup), "/")
	// Inside a cgroup namespace the mount's root is our cgroup already.
	for _, dir := range []string{"sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpu"} {
		for _, p := range []string{path.Join(dir, cg), dir} {
			raw, err := fs.ReadFile(fsys, path.Join(p, "cpu.rt_runtime_us"))
			if err != nil {
				continue
			}
			if v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
				c.RTRuntimeUs, c.RTRuntimeKnown = v, true
				return
			}
		}
	}
}

// ThisContainer is DetectContainer for this machine.
func ThisContainer() Container { return DetectContainer(os.DirFS("/")) }

// shorten cuts s to n bytes with "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// AllowedCPUs returns the CPUs this process may use, ascending:
// sched_getaffinity(2) of the calling thread, which taskset and a
// container's cpuset narrow. nil when the call fails.
func AllowedCPUs() []int { return allowedCPUs() }

// FormatCPUList formats sorted, unique CPUs as the kernel's CPU lists do:
// "0-3,8" (the format of /sys/devices/system/cpu/online and cpusets).
func FormatCPUList(cpus []int) string { return formatCPUList(cpus) }
