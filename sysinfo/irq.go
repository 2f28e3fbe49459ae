package sysinfo

import (
	"cmp"
	"slices"
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
// file's read error (*fs.PathError). A writer sampling them often uses a
// ProcReader instead.
func ReadIRQCounts(cpu int) (IRQCounts, error) {
	m := IRQCounts{}
	if err := NewProcReader().IRQCounts(cpu, m); err != nil {
		return nil, err
	}
	return m, nil
}

// ParseIRQCounts adds column cpu of a /proc/interrupts or /proc/softirqs
// text to m, keyed prefix+source. The header ("CPU0 CPU1 …") gives the
// column; rows with fewer counts than that (MIS, ERR) are skipped unless
// they reach it. A numbered IRQ's key carries its device name, the last
// field of its row ("irq:26 ttyS0").
func ParseIRQCounts(text string, cpu int, prefix string, m IRQCounts) {
	col := appendDecimal([]byte("CPU"), cpu)
	parseIRQColumn([]byte(text), col, prefix, nil, func(key []byte, v uint64) { m[string(key)] += v })
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
