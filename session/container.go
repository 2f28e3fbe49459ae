package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/sysinfo"
)

// owner is a uid and gid to give a run's results to at its end; ok false:
// keep them as written.
type owner struct {
	uid, gid int
	from     string // the directory whose owner it is
	ok       bool
}

// resultsOwner decides who gets the results of a run into path (not yet
// created) in container c: rtload runs as root (euid 0) and the nearest
// existing parent of path, the volume the user mounted, belongs to
// another user, so the files would otherwise be root's on the host. A
// run with --user writes as that user already; outside a container
// nothing changes.
func resultsOwner(c sysinfo.Container, euid int, path string) owner {
	if !c.In() || euid != 0 {
		return owner{}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return owner{}
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || !fi.IsDir() || st.Uid == 0 {
				return owner{}
			}
			return owner{uid: int(st.Uid), gid: int(st.Gid), from: p, ok: true}
		}
		if !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
			return owner{}
		}
	}
}

// trustVolume lets the --out ownership check (safeio.CheckOutPath)
// accept o's directory, the nearest existing parent of a results
// directory in a container, as owned by o's user when it is the mount
// point of a volume (mounts, from mountinfo): the user who handed that
// directory to the container. Any other directory owned by another user
// stays refused.
func trustVolume(o owner, mounts []sysinfo.Mount) {
	if !o.ok {
		return
	}
	if m, ok := sysinfo.MountOf(mounts, o.from); ok && m.Point == o.from && m.Point != "/" {
		safeio.TrustVolumeOwner(o.from, o.uid)
	}
}

// volumeNote says, in container c, where the results directory path is
// on the host: the mount holding it (mounts, from mountinfo) is a volume,
// a directory of the host's filesystem bind-mounted in; or a warning that
// it is in the container's own overlay filesystem, gone with the
// container. o adds who the results will belong to. "" outside a
// container, and for a root filesystem that is not an overlay.
func volumeNote(c sysinfo.Container, mounts []sysinfo.Mount, path string, o owner) string {
	if !c.In() {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	m, ok := sysinfo.MountOf(mounts, abs)
	switch {
	case !ok:
		return ""
	case m.Point == "/" && m.FSType != "overlay" && m.FSType != "aufs":
		return "" // a root filesystem of its own (a VM image), not the image's layers
	case m.Point == "/":
		return fmt.Sprintf("warning: results: %s is in this container's own filesystem, not on a volume: it goes when the container is removed; mount a host directory there (podman/docker run -v ./rtload-results:%s)",
			abs, filepath.Dir(abs))
	}
	s := fmt.Sprintf("results: %s in this container (%s); on the host %s (the volume at %s is that directory of %s)",
		abs, c.Runtime, m.HostPath(abs), m.Point, m.Source)
	if o.ok {
		s += fmt.Sprintf("; given to uid %d gid %d, the owner of %s, when the run ends", o.uid, o.gid, o.from)
	}
	return s
}

// handOver gives the run's results to o (store.Dir.Chown), saying so on
// w when it fails.
func handOver(w io.Writer, d *store.Dir, o owner) {
	if err := d.Chown(o.uid, o.gid); err != nil {
		fmt.Fprintf(w, "rtload: results %s stay root's: %v\n", d.Path(), err)
	}
}
