package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/sysinfo"
)

func TestVolumeNote(t *testing.T) {
	podman := sysinfo.Container{Runtime: "podman"}
	mounts := sysinfo.ParseMountinfo("77 50 0:40 / / rw,nodev,relatime - overlay overlay rw\n" +
		"98 77 254:0 /home/me/results /results rw,relatime - ext4 /dev/vda rw\n")
	ext4Root := sysinfo.ParseMountinfo("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n")
	tests := []struct {
		name   string
		c      sysinfo.Container
		mounts []sysinfo.Mount
		path   string
		o      owner
		want   string
	}{
		{"a volume", podman, mounts, "/results/timer-only-1", owner{},
			"results: /results/timer-only-1 in this container (podman); on the host /home/me/results/timer-only-1 (the volume at /results is that directory of /dev/vda)"},
		{"handed over", podman, mounts, "/results/timer-only-1", owner{uid: 1000, gid: 1000, from: "/results", ok: true},
			"/home/me/results/timer-only-1 (the volume at /results is that directory of /dev/vda); given to uid 1000 gid 1000, the owner of /results, when the run ends"},
		{"not on a volume", podman, mounts, "/tmp/out", owner{},
			"warning: results: /tmp/out is in this container's own filesystem, not on a volume: it goes when the container is removed; mount a host directory there (podman/docker run -v ./rtload-results:/tmp)"},
		{"outside a container", sysinfo.Container{}, mounts, "/results/x", owner{}, ""},
		// A VM whose image left /.dockerenv: its root is a disk.
		{"a root filesystem of its own", podman, ext4Root, "/tmp/out", owner{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := volumeNote(tt.c, tt.mounts, tt.path, tt.o)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("volumeNote:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestResultsOwner(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	vol := t.TempDir()
	if err := os.Chown(vol, 4242, 4243); err != nil {
		t.Fatal(err)
	}
	rootDir := t.TempDir()
	podman := sysinfo.Container{Runtime: "podman"}
	tests := []struct {
		name string
		c    sysinfo.Container
		euid int
		path string
		want owner
	}{
		{"root in a container, a user's volume", podman, 0, filepath.Join(vol, "run-1"), owner{4242, 4243, vol, true}},
		{"parents to be made", podman, 0, filepath.Join(vol, "a", "b", "run-1"), owner{4242, 4243, vol, true}},
		{"a root-owned volume", podman, 0, filepath.Join(rootDir, "run-1"), owner{}},
		{"--user: writes as the user already", podman, 4242, filepath.Join(vol, "run-1"), owner{}},
		{"outside a container", sysinfo.Container{}, 0, filepath.Join(vol, "run-1"), owner{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultsOwner(tt.c, tt.euid, tt.path); got != tt.want {
				t.Errorf("resultsOwner = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTrustVolume(t *testing.T) {
	const uid = 4343
	vol, other := t.TempDir(), t.TempDir()
	for _, d := range []string{vol, other} {
		if err := os.Chown(d, uid, uid); err != nil {
			t.Skipf("chown: %v (needs root)", err)
		}
	}
	mounts := []sysinfo.Mount{{Root: "/", Point: "/", FSType: "overlay"}, {Root: "/home/u/results", Point: vol, FSType: "ext4", Source: "/dev/vda"}}
	trustVolume(owner{uid: uid, gid: uid, from: vol, ok: true}, mounts)
	trustVolume(owner{uid: uid, gid: uid, from: other, ok: true}, mounts)
	if err := safeio.CheckOutPath(filepath.Join(vol, "run-1")); err != nil {
		t.Errorf("under the volume's mount point: %v", err)
	}
	if err := safeio.CheckOutPath(filepath.Join(other, "run-1")); err == nil {
		t.Errorf("under another user's directory that is no mount point: accepted")
	}
}
