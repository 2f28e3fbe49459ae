package sysinfo

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestDetectContainer reads fixture trees of the runtimes' signs.
func TestDetectContainer(t *testing.T) {
	const hostMountinfo = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	const overlayMountinfo = "612 540 0:52 / / rw,relatime master:310 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X\n"
	tests := []struct {
		name string
		fs   fstest.MapFS
		want Container
	}{
		{"bare host, cgroup v2", fstest.MapFS{
			"proc/self/cgroup":                 file("0::/user.slice/user-1000.slice/session-2.scope\n"),
			"proc/1/cgroup":                    file("0::/init.scope\n"),
			"proc/self/mountinfo":              file(hostMountinfo),
			"sys/fs/cgroup/cgroup.controllers": file("cpuset cpu io memory pids\n"),
		}, Container{CgroupV2: true, Cgroup: "/user.slice/user-1000.slice/session-2.scope"}},
		{"docker on cgroup v1 with an RT budget of 0", fstest.MapFS{
			".dockerenv":          file(""),
			"proc/self/cgroup":    file("12:pids:/docker/3f2a\n4:cpu,cpuacct:/docker/3f2a\n0::/docker/3f2a\n"),
			"proc/self/mountinfo": file(overlayMountinfo),
			"sys/fs/cgroup/cpu,cpuacct/docker/3f2a/cpu.rt_runtime_us": file("0\n"),
		}, Container{Runtime: "docker", Cgroup: "/docker/3f2a", RTRuntimeKnown: true,
			Evidence: []string{"/.dockerenv exists", "/proc/self/cgroup: 12:pids:/docker/3f2a", "/ is an overlay mount (/proc/self/mountinfo)"},
			RTBudgets: []RTBudget{
				{Cgroup: "/docker/3f2a", File: "/sys/fs/cgroup/cpu,cpuacct/docker/3f2a/cpu.rt_runtime_us", Known: true},
				// Absent from the fixture: unreadable counts as unknown.
				{Cgroup: "/docker", File: "/sys/fs/cgroup/cpu,cpuacct/docker/cpu.rt_runtime_us"},
				{Cgroup: "/", File: "/sys/fs/cgroup/cpu,cpuacct/cpu.rt_runtime_us"}}}},
		// This machine's podman 4.3 (cgroupfs, cgroup v1 with cpu and
		// cpuacct mounted apart): the container's mount of the cpu
		// hierarchy starts at its own cgroup, so libpod_parent and the
		// root are not visible from inside.
		{"podman on cgroup v1: parents above the mount's root", fstest.MapFS{
			"run/.containerenv": file(""),
			"proc/self/cgroup":  file("2:cpuacct:/libpod_parent/libpod-5eb0\n1:cpu:/libpod_parent/libpod-5eb0\n0::/libpod_parent/libpod-5eb0\n"),
			"proc/self/mountinfo": file(overlayMountinfo +
				"88 80 0:47 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755\n" +
				"89 88 0:29 /libpod_parent/libpod-5eb0 /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu\n" +
				"90 88 0:30 /libpod_parent/libpod-5eb0 /sys/fs/cgroup/cpuacct rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuacct\n"),
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us": file("0\n"),
		}, Container{Runtime: "podman", Cgroup: "/libpod_parent/libpod-5eb0", RTRuntimeKnown: true,
			Evidence: []string{"/run/.containerenv exists", "/proc/self/cgroup: 2:cpuacct:/libpod_parent/libpod-5eb0", "/ is an overlay mount (/proc/self/mountinfo)"},
			RTBudgets: []RTBudget{
				{Cgroup: "/libpod_parent/libpod-5eb0", File: "/sys/fs/cgroup/cpu/libpod_parent/libpod-5eb0/cpu.rt_runtime_us", Known: true},
				{Cgroup: "/libpod_parent", File: "/sys/fs/cgroup/cpu/libpod_parent/cpu.rt_runtime_us"},
				{Cgroup: "/", File: "/sys/fs/cgroup/cpu/cpu.rt_runtime_us"}}}},
		// On the host the whole hierarchy is visible: the parent whose
		// budget is 0 is named.
		{"host: a nested cgroup under a parent of 0", fstest.MapFS{
			"proc/self/cgroup": file("1:cpu:/lab/run1\n"),
			"proc/self/mountinfo": file(hostMountinfo +
				"30 25 0:29 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpu\n"),
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us":          file("950000\n"),
			"sys/fs/cgroup/cpu/lab/cpu.rt_runtime_us":      file("0\n"),
			"sys/fs/cgroup/cpu/lab/run1/cpu.rt_runtime_us": file("0\n"),
		}, Container{Cgroup: "/lab/run1", RTRuntimeKnown: true, RTBudgets: []RTBudget{
			{Cgroup: "/lab/run1", File: "/sys/fs/cgroup/cpu/lab/run1/cpu.rt_runtime_us", Known: true},
			{Cgroup: "/lab", File: "/sys/fs/cgroup/cpu/lab/cpu.rt_runtime_us", Known: true},
			{Cgroup: "/", File: "/sys/fs/cgroup/cpu/cpu.rt_runtime_us", RuntimeUs: 950000, Known: true}}}},
		{"cgroup namespace: the mount root is ours", fstest.MapFS{
			"proc/self/cgroup":                    file("3:cpu:/\n"),
			"proc/self/environ":                   file("PATH=/bin\x00container=podman\x00"),
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us": file("950000\n"),
		}, Container{Runtime: "podman", Cgroup: "/", RTRuntimeUs: 950000, RTRuntimeKnown: true,
			Evidence:  []string{"environment container=podman"},
			RTBudgets: []RTBudget{{Cgroup: "/", File: "/sys/fs/cgroup/cpu/cpu.rt_runtime_us", RuntimeUs: 950000, Known: true}}}},
		{"kubernetes pod", fstest.MapFS{
			"proc/self/environ":                file("KUBERNETES_SERVICE_HOST=10.0.0.1\x00HOME=/\x00"),
			"proc/1/cgroup":                    file("0::/kubepods.slice/kubepods-pod12.slice/cri-containerd-ab.scope\n"),
			"sys/fs/cgroup/cgroup.controllers": file("cpu\n"),
		}, Container{Runtime: "kubernetes", CgroupV2: true,
			Evidence: []string{"environment KUBERNETES_SERVICE_HOST (a Kubernetes pod)", "/proc/1/cgroup: 0::/kubepods.slice/kubepods-pod12.slice/cri-containerd-ab.scope"}}},
		{"only an overlay root", fstest.MapFS{"proc/self/mountinfo": file(hostMountinfo + overlayMountinfo)},
			Container{Runtime: "container", Evidence: []string{"/ is an overlay mount (/proc/self/mountinfo)"}}},
		{"podman's file", fstest.MapFS{"run/.containerenv": file("engine=\"podman-4.9\"\n")},
			Container{Runtime: "podman", Evidence: []string{"/run/.containerenv exists"}}},
		{"nothing readable", fstest.MapFS{}, Container{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DetectContainer(tt.fs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.In() != (tt.want.Runtime != "") {
				t.Errorf("In() = %v", got.In())
			}
		})
	}
}

// TestThisContainer runs the real reader on this machine: it must not
// fail, and what it says must be backed by evidence.
func TestThisContainer(t *testing.T) {
	c := ThisContainer()
	if c.In() != (len(c.Evidence) > 0) {
		t.Errorf("runtime %q with evidence %v", c.Runtime, c.Evidence)
	}
	t.Logf("%+v", c)
}

// TestContainerText: rtload env names the container and its RT budget.
func TestContainerText(t *testing.T) {
	f := Facts{Env: results.Env{Container: Container{Runtime: "docker", Evidence: []string{"/.dockerenv exists"}, Cgroup: "/docker/3f2a", RTRuntimeKnown: true}}}
	text := f.Text()
	for _, want := range []string{"container:", "docker (/.dockerenv exists)", "cgroup cpu.rt_runtime_us: 0 in /docker/3f2a (cgroup v1 RT budget; 0 refuses SCHED_FIFO)"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text lacks %q:\n%s", want, text)
		}
	}
}

// TestParseMountinfo reads the fields rtload uses, escapes decoded, and
// finds the mount holding a path (the one on top).
func TestParseMountinfo(t *testing.T) {
	const mi = "77 50 0:40 / / rw,nodev,relatime - overlay overlay rw,lowerdir=/x\n" +
		"78 77 0:43 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n" +
		"60 78 0:43 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n" +
		"98 77 254:0 /tmp/my\\040results /results rw,relatime - ext4 /dev/vda rw,discard\n" +
		"bad line\n"
	ms := ParseMountinfo(mi)
	if len(ms) != 4 {
		t.Fatalf("%d mounts, want 4: %+v", len(ms), ms)
	}
	tests := []struct {
		path, point, root string
		ro                bool
	}{
		{"/", "/", "/", false},
		{"/proc/sys/net/ipv4/conf/all/rp_filter", "/proc/sys", "/sys", true},
		{"/proc/self", "/proc", "/", false},
		{"/results/timer-only-1", "/results", "/tmp/my results", false},
		{"/resultsx", "/", "/", false}, // a prefix of the name is not a parent
		{"/run/netns", "/", "/", false},
	}
	for _, tt := range tests {
		m, ok := MountOf(ms, tt.path)
		if !ok || m.Point != tt.point || m.Root != tt.root || m.ReadOnly() != tt.ro {
			t.Errorf("MountOf(%s) = %+v, %v; want point %s root %s ro %v", tt.path, m, ok, tt.point, tt.root, tt.ro)
		}
	}
	m, _ := MountOf(ms, "/results/timer-only-1")
	if got := m.HostPath("/results/timer-only-1"); got != "/tmp/my results/timer-only-1" {
		t.Errorf("HostPath = %q", got)
	}
	if _, ok := MountOf(nil, "/"); ok {
		t.Error("MountOf(nil) found a mount")
	}
}
