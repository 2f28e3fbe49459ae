package sysinfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rtload/rtload/results"
)

// Paths of the clocksource and RT throttling files (sysfs(5), proc(5)).
const (
	clocksourceDir     = "/sys/devices/system/clocksource/clocksource0/"
	currentClocksource = clocksourceDir + "current_clocksource"
	availableClocksrcs = clocksourceDir + "available_clocksource"
	rtRuntimePath      = "/proc/sys/kernel/sched_rt_runtime_us"
	rtPeriodPath       = "/proc/sys/kernel/sched_rt_period_us"
)

// maxSmallFile bounds what is read of a one-line sysfs or procfs file.
const maxSmallFile = 4096

// Clocksource is the kernel's timekeeping clocksource, from
// /sys/devices/system/clocksource/clocksource0: the one CLOCK_MONOTONIC
// (and so every wakeup latency) is read through, and the alternatives.
type Clocksource struct {
	// Current is current_clocksource: "tsc", "kvm-clock", "hpet",
	// "acpi_pm", "arch_sys_counter", …
	Current string `json:"current"`
	// Available is available_clocksource, in the kernel's order.
	Available []string `json:"available"`
}

// ReadClocksource reads the current and available clocksources (two small
// sysfs reads: cheap enough for every interval). Errors name the file.
func ReadClocksource() (Clocksource, error) {
	cur, err := readSmall(currentClocksource)
	if err != nil {
		return Clocksource{}, err
	}
	avail, err := readSmall(availableClocksrcs)
	if err != nil {
		return Clocksource{Current: cur}, err
	}
	return Clocksource{Current: cur, Available: strings.Fields(avail)}, nil
}

// readCurrentClocksource reads current_clocksource only.
func readCurrentClocksource() (string, error) { return readSmall(currentClocksource) }

// RTThrottling is the kernel's real-time bandwidth limit:
// results.RTThrottling (sched(7) "Real-time throttling").
type RTThrottling = results.RTThrottling

// ReadRTThrottling reads /proc/sys/kernel/sched_rt_runtime_us and
// sched_rt_period_us. Errors name the file.
func ReadRTThrottling() (RTThrottling, error) {
	var r RTThrottling
	for _, f := range []struct {
		path string
		v    *int64
	}{{rtRuntimePath, &r.RuntimeUs}, {rtPeriodPath, &r.PeriodUs}} {
		s, err := readSmall(f.path)
		if err != nil {
			return r, err
		}
		if *f.v, err = strconv.ParseInt(s, 10, 64); err != nil {
			return r, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return r, nil
}

// readSmall reads a one-line file of at most maxSmallFile bytes, trimmed.
func readSmall(path string) (string, error) {
	f, err := os.Open(path) // sysfs/procfs: the kernel's own file
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, maxSmallFile)
	n, err := f.Read(buf)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
