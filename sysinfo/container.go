package sysinfo

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

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
	readCgroup(&c, fsys)
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
// root filesystem of most container images); the last "/" mount wins.
func rootIsOverlay(mountinfo string) bool {
	m, ok := MountOf(ParseMountinfo(mountinfo), "/")
	return ok && m.Point == "/" && (m.FSType == "overlay" || m.FSType == "aufs")
}

// readCgroup fills Cgroup, CgroupV2 and, on cgroup v1, the RT budget of
// this process's cgroup and of each parent up to the root (RTBudgets).
func readCgroup(c *Container, fsys fs.FS) {
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
	cg := path.Clean("/" + c.Cgroup)
	point, root, ok := cpuMount(fsys, cg)
	if !ok {
		return
	}
	for a := cg; ; a = path.Dir(a) {
		bud := RTBudget{Cgroup: a, File: path.Join(point, a, "cpu.rt_runtime_us")}
		if under(a, root) {
			raw, err := fs.ReadFile(fsys, strings.TrimPrefix(path.Join(point, strings.TrimPrefix(a, root), "cpu.rt_runtime_us"), "/"))
			if v, perr := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil && perr == nil {
				bud.RuntimeUs, bud.Known = v, true
			}
		}
		c.RTBudgets = append(c.RTBudgets, bud)
		if a == "/" {
			break
		}
	}
	if own := c.RTBudgets[0]; own.Known {
		c.RTRuntimeUs, c.RTRuntimeKnown = own.RuntimeUs, true
	}
}

// cpuMount finds where this process has the cgroup v1 cpu controller
// mounted (point, absolute) and which cgroup that mount's top directory
// is (root: "/" on a host, the container's own cgroup in a container).
// It reads mountinfo, else, for trees without one, tries
// /sys/fs/cgroup/cpu,cpuacct and /sys/fs/cgroup/cpu: a directory holding
// cg is the whole hierarchy, one holding cpu.rt_runtime_us only at its
// top is cg itself (a cgroup namespace, or a container's mount).
func cpuMount(fsys fs.FS, cg string) (point, root string, ok bool) {
	for _, m := range ReadMounts(fsys) {
		if m.FSType == "cgroup" && slices.Contains(m.Super, "cpu") {
			point, root, ok = m.Point, path.Clean("/"+m.Root), true
		}
	}
	if ok {
		return point, root, true
	}
	for _, dir := range []string{"sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpu"} {
		if _, err := fs.Stat(fsys, path.Join(dir, cg, "cpu.rt_runtime_us")); err == nil {
			return "/" + dir, "/", true
		}
		if _, err := fs.Stat(fsys, path.Join(dir, "cpu.rt_runtime_us")); err == nil {
			return "/" + dir, cg, true
		}
	}
	return "", "", false
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
