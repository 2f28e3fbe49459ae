package sysinfo

import (
	"cmp"
	"os"
	"slices"
	"strconv"
	"strings"
)

// IRQCounts is one CPU's interrupt and softirq counts by source, as read
// from /proc/interrupts and /proc/softirqs: keys are "irq:<name>"
// ("irq:LOC", "irq:26 ttyS0") and "softirq:<name>" ("softirq:TIMER"),
// values are the kernel's cumulative counts since boot.
type IRQCounts map[string]uint64

// SourceCount is one interrupt source's count over an interval.
type SourceCount struct {
	Name  string
	Count uint64
}

// ReadIRQCounts reads /proc/interrupts and /proc/softirqs for cpu. A CPU
// that is not in the files' headers reads as empty counts; the error is a
// file's read error (*fs.PathError).
func ReadIRQCounts(cpu int) (IRQCounts, error) {
	m := IRQCounts{}
	for _, f := range []struct{ path, prefix string }{{"/proc/interrupts", "irq:"}, {"/proc/softirqs", "softirq:"}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		ParseIRQCounts(string(b), cpu, f.prefix, m)
	}
	return m, nil
}

// ParseIRQCounts adds column cpu of a /proc/interrupts or /proc/softirqs
// text to m, keyed prefix+source. The header ("CPU0 CPU1 …") gives the
// column; rows with fewer counts than that (MIS, ERR) are skipped unless
// they reach it. A numbered IRQ's key carries its device name, the last
// field of its row ("irq:26 ttyS0").
func ParseIRQCounts(text string, cpu int, prefix string, m IRQCounts) {
	header, rows, _ := strings.Cut(text, "\n")
	col := slices.Index(strings.Fields(header), "CPU"+strconv.Itoa(cpu))
	if col < 0 {
		return
	}
	for _, l := range strings.Split(rows, "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		f := strings.Fields(rest)
		if col >= len(f) {
			continue
		}
		v, err := strconv.ParseUint(f[col], 10, 64)
		if err != nil {
			continue
		}
		if _, err := strconv.Atoi(name); err == nil && len(f) > col+1 {
			name += " " + f[len(f)-1]
		}
		m[prefix+name] += v
	}
}

// Delta returns the sources that counted since prev, largest first (then
// by name), and the irq and softirq totals. A count that went backwards
// (a CPU brought offline and back) counts 0.
func (m IRQCounts) Delta(prev IRQCounts) (sources []SourceCount, irqs, softirqs uint64) {
	for k, v := range m {
		d := v - min(v, prev[k])
		if d == 0 {
			continue
		}
		sources = append(sources, SourceCount{Name: k, Count: d})
		if strings.HasPrefix(k, "softirq:") {
			softirqs += d
		} else {
			irqs += d
		}
	}
	slices.SortFunc(sources, func(a, b SourceCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return sources, irqs, softirqs
}
