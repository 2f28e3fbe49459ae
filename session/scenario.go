package session

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/internal/cpulist"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// loadSpec reads FILE (a path on disk) or NAME (a built-in scenario),
// applies --set overrides and validates for this machine: its CPUs, and
// the CPUs this process may use (taskset, a container's cpuset).
func LoadSpec(arg string, sets []string) (*scenario.Spec, error) {
	spec, err := ReadSpec(arg)
	if err != nil {
		return nil, err
	}
	if err := spec.Apply(sets); err != nil {
		return nil, err
	}
	if err := spec.Validate(ThisHost()); err != nil {
		return nil, err
	}
	return spec, nil
}

// thisHost describes this machine for scenario.Validate: its online CPUs
// (/sys/devices/system/cpu/online) and the CPUs this process may use
// (sched_getaffinity(2) of the calling thread). validate and run both use
// it, so they accept and refuse the same CPUs.
func ThisHost() scenario.Host {
	var online []int
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		online, _ = cpulist.Parse(string(b))
	}
	return hostFor(online, sysinfo.AllowedCPUs())
}

// hostFor builds the Host from the online CPUs and the affinity mask
// (either nil when unknown). NumCPU is one past the highest online CPU,
// never the size of the mask: runtime.NumCPU counts the mask, so under
// taskset -c 1 it is 1 and CPU 1 would look missing from the host.
// Without the online list it is one past the highest allowed CPU, else
// runtime.NumCPU.
func hostFor(online, allowed []int) scenario.Host {
	n := runtime.NumCPU()
	if len(online) > 0 {
		n = slices.Max(online) + 1
	} else if len(allowed) > 0 {
		n = max(n, slices.Max(allowed)+1)
	}
	return scenario.Host{NumCPU: n, Allowed: allowed}
}

// readSpec loads arg as a file when a path of that name exists and is not
// a directory (scenario.LoadFileLenient then refuses anything but a regular
// file), else as a built-in scenario. Decode problems are held for
// Validate, which every caller runs next, so that they come with every
// other problem of the file in one list. A directory is never a scenario, so
// one named like a built-in (./laight-450/) does not shadow it.
func ReadSpec(arg string) (*scenario.Spec, error) {
	fi, statErr := os.Stat(arg)
	if statErr == nil && !fi.IsDir() {
		return scenario.LoadFileLenient(arg) // every problem at once: Validate follows
	}
	data, err := configs.Read(arg)
	switch {
	case err != nil && statErr == nil:
		return nil, UsageError{fmt.Errorf("%s: a directory, not a scenario file, and %w", arg, err)}
	case err != nil:
		return nil, UsageError{fmt.Errorf("%s: not a file, and %w", arg, err)}
	}
	return scenario.LoadLenient("built-in:"+strings.TrimSuffix(arg, ".yaml")+".yaml", data)
}
