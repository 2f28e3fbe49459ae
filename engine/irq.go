package engine

import (
	"os"
	"strconv"
	"strings"

	"github.com/rtload/rtload/results"
)

// cpuIRQs is the interrupt and softirq counts of one CPU by source, read
// from /proc/interrupts and /proc/softirqs by the non-real-time writer.
type cpuIRQs map[string]uint64

// readCPUIRQs reads both files for cpu; sources are named "irq:<name>"
// ("irq:LOC", "irq:26 ttyS0") and "softirq:<name>" ("softirq:TIMER").
func readCPUIRQs(cpu int) (cpuIRQs, error) {
	m := cpuIRQs{}
	for _, f := range []struct{ path, prefix string }{{"/proc/interrupts", "irq:"}, {"/proc/softirqs", "softirq:"}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		parseProcIRQs(string(b), cpu, f.prefix, m)
	}
	return m, nil
}

// parseProcIRQs adds column cpu of a /proc/interrupts or /proc/softirqs
// text to m, keyed prefix+source. The header ("CPU0 CPU1 …") gives the
// column; rows with fewer counts than that (MIS, ERR) are skipped unless
// they reach it. A numbered IRQ's key carries its device name, the last
// field of its row ("irq:26 ttyS0").
func parseProcIRQs(text string, cpu int, prefix string, m cpuIRQs) {
	lines := strings.Split(text, "\n")
	if len(lines) == 0 {
		return
	}
	col := -1
	for i, h := range strings.Fields(lines[0]) {
		if h == "CPU"+strconv.Itoa(cpu) {
			col = i
		}
	}
	if col < 0 {
		return
	}
	for _, l := range lines[1:] {
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

// delta returns the sources that counted since prev, largest first, and
// the irq and softirq totals.
func (m cpuIRQs) delta(prev cpuIRQs) (out []results.Counter, irqs, softirqs uint64) {
	for k, v := range m {
		d := v - min(v, prev[k])
		if d == 0 {
			continue
		}
		out = append(out, results.Counter{Name: k, Value: d})
		if strings.HasPrefix(k, "softirq:") {
			softirqs += d
		} else {
			irqs += d
		}
	}
	sortCounters(out)
	return out, irqs, softirqs
}

// sortCounters orders counters by value, largest first, then by name.
func sortCounters(c []results.Counter) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && (c[j].Value > c[j-1].Value || c[j].Value == c[j-1].Value && c[j].Name < c[j-1].Name); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}
