package sysinfo

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
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
			Evidence: []string{"/.dockerenv exists", "/proc/self/cgroup: 12:pids:/docker/3f2a", "/ is an overlay mount (/proc/self/mountinfo)"}}},
		{"cgroup namespace: the mount root is ours", fstest.MapFS{
			"proc/self/cgroup":                    file("3:cpu:/\n"),
			"proc/self/environ":                   file("PATH=/bin\x00container=podman\x00"),
			"sys/fs/cgroup/cpu/cpu.rt_runtime_us": file("950000\n"),
		}, Container{Runtime: "podman", Cgroup: "/", RTRuntimeUs: 950000, RTRuntimeKnown: true,
			Evidence: []string{"environment container=podman"}}},
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
	f := Facts{Container: Container{Runtime: "docker", Evidence: []string{"/.dockerenv exists"}, Cgroup: "/docker/3f2a", RTRuntimeKnown: true}}
	text := f.Text()
	for _, want := range []string{"container:", "docker (/.dockerenv exists)", "cgroup cpu.rt_runtime_us: 0 in /docker/3f2a (cgroup v1 RT budget; 0 refuses SCHED_FIFO)"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text lacks %q:\n%s", want, text)
		}
	}
}
