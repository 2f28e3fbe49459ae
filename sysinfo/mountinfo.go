package sysinfo

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo (proc_pid_mountinfo(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//	ID PA MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
type Mount struct {
	// Root is the directory of the filesystem mounted here: "/" for a
	// whole filesystem, the source directory's path within its
	// filesystem for a bind mount (a container's volume), the cgroup's
	// path for a cgroup v1 controller seen from a container.
	Root string
	// Point is the mount point, relative to this process's root.
	Point string
	// Options are the per-mount options: "rw" or "ro", "nosuid", ….
	Options []string
	// FSType and Source are the filesystem type ("ext4", "cgroup",
	// "overlay", "tmpfs") and its source ("/dev/vda", "overlay").
	FSType, Source string
	// Super are the per-superblock options: a cgroup v1 mount's
	// controllers ("rw,cpu,cpuacct").
	Super []string
}

// ReadOnly reports whether the mount is read-only (its per-mount "ro",
// or a read-only superblock).
func (m Mount) ReadOnly() bool {
	return slices.Contains(m.Options, "ro") || slices.Contains(m.Super, "ro")
}

// ParseMountinfo parses /proc/self/mountinfo, in its order (a mount comes
// after the mounts it is mounted over). Malformed lines are skipped;
// octal escapes (\040 for a space) are decoded.
func ParseMountinfo(s string) []Mount {
	var out []Mount
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+3 {
			continue
		}
		m := Mount{Root: unescapeMount(f[3]), Point: unescapeMount(f[4]), Options: strings.Split(f[5], ","),
			FSType: f[sep+1], Source: unescapeMount(f[sep+2])}
		if len(f) > sep+3 {
			m.Super = strings.Split(f[sep+3], ",")
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount decodes mountinfo's octal escapes (\040 space, \011 tab,
// \012 newline, \134 backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountOf returns the mount that holds the absolute path p: of the mounts
// whose point is p or one of its parents, the one mounted last (on top).
// p need not exist. ok is false when no mount holds it (an empty list).
func MountOf(mounts []Mount, p string) (m Mount, ok bool) {
	p = path.Clean("/" + p)
	best := -1
	for i, mt := range mounts {
		if under(p, mt.Point) && (best < 0 || len(mt.Point) >= len(mounts[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return Mount{}, false
	}
	return mounts[best], true
}

// under reports whether p is dir or below it (both clean and absolute).
func under(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// HostPath says where p (an absolute path inside mount m) comes from: the
// path within m's filesystem (m.Root joined with p's part below m.Point).
// For a bind mount of a directory of the host's root filesystem, a
// container's volume, that is the host's path.
func (m Mount) HostPath(p string) string {
	rel := strings.TrimPrefix(path.Clean(p), m.Point)
	return path.Join(m.Root, rel)
}

// ReadMounts reads fsys's proc/self/mountinfo (nil when unreadable).
func ReadMounts(fsys fs.FS) []Mount {
	b, err := fs.ReadFile(fsys, "proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return ParseMountinfo(string(b))
}
