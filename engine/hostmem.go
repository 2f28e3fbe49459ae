package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// hostMemory is the memory this host lets rtload allocate, in bytes, and
// where that was read.
type hostMemory struct {
	avail  uint64
	source string // "MemAvailable in /proc/meminfo", "cgroup /x memory.max − memory.current"
}

// readHostMemory reads MemAvailable from fsys's proc/meminfo and, when
// lower, the room left under this process's cgroup memory limit (v2:
// memory.max − memory.current; v1: memory.limit_in_bytes −
// memory.usage_in_bytes), which a container's limit sets while its
// /proc/meminfo shows the whole host. avail 0 when nothing was readable.
func readHostMemory(fsys fs.FS) hostMemory {
	var h hostMemory
	if b, err := fs.ReadFile(fsys, "proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemAvailable:" {
				if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					h = hostMemory{kb << 10, "MemAvailable in /proc/meminfo"}
				}
			}
		}
	}
	cg, _ := fs.ReadFile(fsys, "proc/self/cgroup")
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, limit, usage string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, limit, usage = "sys/fs/cgroup", "memory.max", "memory.current"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir, limit, usage = "sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		// The cgroup's directory; inside a cgroup namespace the mount's root is it.
		for _, d := range []string{path.Join(dir, strings.TrimPrefix(path.Clean("/"+parts[2]), "/")), dir} {
			lim, err1 := readUint(fsys, path.Join(d, limit))
			use, err2 := readUint(fsys, path.Join(d, usage))
			if err1 != nil || err2 != nil {
				continue
			}
			if room := lim - min(use, lim); h.avail == 0 || room < h.avail {
				h = hostMemory{room, fmt.Sprintf("cgroup %s: %s − %s", parts[2], limit, usage)}
			}
			break
		}
	}
	return h
}

// readUint reads a cgroup file holding one number; "max" (no limit) is an
// error, as an absent file is.
func readUint(fsys fs.FS, name string) (uint64, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// noiseMemory is the memory the memory noise of sp allocates (each
// thread its own buffer of size, as Load filled it), in bytes, and its
// entries as "noise[0] (1024 threads × 16GiB)".
func noiseMemory(sp *scenario.Spec) (uint64, []string) {
	var total uint64
	var parts []string
	for i, nz := range sp.Noise {
		if nz.Kind != scenario.NoiseMemory {
			continue
		}
		size := uint64(nz.Size)
		threads := uint64(max(nz.Threads, 1))
		total += threads * size
		parts = append(parts, fmt.Sprintf("noise[%d] (%d threads × %s)", i, threads, scenario.Size(size)))
	}
	return total, parts
}

// checkNoiseMemory refuses trials whose memory noise would allocate more
// than half the memory h has available: the run's own buffers, its
// results and the rest of the host need the other half, and noise that
// drives the host into reclaim or the OOM killer (Go's "fatal error: out
// of memory" mid-run) measures those, not memory interference. Nothing
// to check when h is unknown (avail 0).
func checkNoiseMemory(trials []scenario.Trial, h hostMemory) error {
	if h.avail == 0 {
		return nil
	}
	for _, tr := range trials {
		total, parts := noiseMemory(&tr.Spec)
		if total <= h.avail/2 {
			continue
		}
		where := ""
		if tr.Variant != "" && tr.Variant != "base" {
			where = " in variant " + tr.Variant
		}
		return &NoiseMemoryError{fmt.Sprintf("memory noise%s: %s allocate %s in all, more than half of the %s this host has available (%s): at most %s; lower noise[].threads or noise[].size",
			where, strings.Join(parts, " + "), bytesText(total), bytesText(h.avail), h.source, bytesText(h.avail/2))}
	}
	return nil
}

// NoiseMemoryError is memory noise the host cannot hold (checkNoiseMemory).
// It matches rt.ErrNotSupported (rtload exits 3).
type NoiseMemoryError struct{ msg string }

func (e *NoiseMemoryError) Error() string { return e.msg }

// Is matches rt.ErrNotSupported.
func (e *NoiseMemoryError) Is(target error) bool { return target == rt.ErrNotSupported }

// bytesText is b in GiB (MiB below 1 GiB), one decimal.
func bytesText(b uint64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1fGiB", float64(b)/(1<<30))
}

// hostMem reads this host's (readHostMemory of /).
func hostMem() hostMemory { return readHostMemory(os.DirFS("/")) }
