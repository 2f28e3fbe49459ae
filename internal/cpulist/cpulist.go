// Package cpulist reads and writes the kernel's CPU list format ("0-3,8,10-11",
// as in /sys/devices/system/cpu/online, cpuset files and
// /proc/<pid>/status Cpus_allowed_list). It is shared by rt and sysinfo,
// which may import nothing but the standard library and x/sys/unix.
package cpulist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxRange bounds one range of a list, so a corrupt file cannot make Parse
// allocate without limit (the kernel's NR_CPUS maximum is 8192).
const MaxRange = 1 << 16

// Parse parses a kernel CPU list into ascending, unique CPU numbers. An
// empty or blank list gives nil. It fails on a negative or malformed CPU,
// a descending range, or a range wider than MaxRange.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > MaxRange {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// Format renders ascending, unique CPUs as a kernel CPU list ("0-2,5"),
// the inverse of Parse; "" for none.
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
