package report

import (
	"github.com/rtload/rtload/results"
	"slices"

	"fmt"
	"strings"
	"text/tabwriter"
)

// metric is one number per run of a repeated probe.
type metric struct {
	title          string
	unit           string
	format         string
	higherIsBetter bool
	get            func(p results.Probe) (float64, bool)
}

var fileWriteMetrics = []metric{
	{"write throughput", "KB/s", "%.0f", true, func(p results.Probe) (float64, bool) {
		if p.FileWrite == nil {
			return 0, false
		}
		return p.FileWrite.KBps, true
	}},
	{"writes", "writes/s", "%.0f", true, func(p results.Probe) (float64, bool) {
		if p.FileWrite == nil {
			return 0, false
		}
		return p.FileWrite.WritesPerSec, true
	}},
}

var messagingMetrics = []metric{
	{"time", "s", "%.3f", false, func(p results.Probe) (float64, bool) {
		if p.Messaging == nil {
			return 0, false
		}
		return float64(p.Messaging.ElapsedNs) / 1e9, true
	}},
	{"sys time", "s", "%.3f", false, func(p results.Probe) (float64, bool) {
		if p.Messaging == nil {
			return 0, false
		}
		return float64(p.Messaging.SysNs) / 1e9, true
	}},
	{"user time", "s", "%.3f", false, func(p results.Probe) (float64, bool) {
		if p.Messaging == nil {
			return 0, false
		}
		return float64(p.Messaging.UserNs) / 1e9, true
	}},
}

// writeRepeated prints the file_write and messaging probes: every run's
// value, then Min / Max / Mean / Std Dev per variant and the change against
// the first variant (seed 001's layout), for each metric.
func writeRepeated(b *strings.Builder, s *results.Summary) {
	type key struct{ probe, kind string }
	var probes []key
	seen := map[key]bool{}
	for _, t := range s.Trials {
		for _, p := range t.Probes {
			k := key{p.Name, p.Kind}
			if (p.Kind == "file_write" || p.Kind == "messaging") && !seen[k] {
				seen[k] = true
				probes = append(probes, k)
			}
		}
	}
	for _, k := range probes {
		metrics := fileWriteMetrics
		head := ""
		if k.kind == "messaging" {
			metrics = messagingMetrics
		}
		var variants []string
		for _, t := range s.Trials {
			for _, p := range t.Probes {
				if p.Name != k.probe {
					continue
				}
				if !slices.Contains(variants, t.Variant) {
					variants = append(variants, t.Variant)
				}
				if head == "" {
					head = probeHead(p)
				}
			}
		}
		fmt.Fprintf(b, "\n%s probe %q: %s\n", k.kind, k.probe, head)
		for _, m := range metrics {
			runs := map[string][]float64{}
			for _, t := range s.Trials {
				for _, p := range t.Probes {
					if p.Name == k.probe {
						if v, ok := m.get(p); ok {
							runs[t.Variant] = append(runs[t.Variant], v)
						}
					}
				}
			}
			fmt.Fprintf(b, "%s (%s)\n", m.title, m.unit)
			tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
			for _, v := range variants {
				var base []float64
				if v != variants[0] {
					base = runs[variants[0]]
				}
				WriteSamples(tw, v, m.format, runs[v], base, variants[0], m.higherIsBetter)
			}
			tw.Flush()
		}
	}
}

func probeHead(p results.Probe) string {
	switch {
	case p.FileWrite != nil:
		f := p.FileWrite
		return fmt.Sprintf("%d B write(2) × %d per pass then lseek to 0, for %.3g s (fstime w_test)", f.BlockBytes, f.Blocks, float64(f.DurationNs)/1e9)
	case p.Messaging != nil:
		m := p.Messaging
		return fmt.Sprintf("%d groups × %d senders/receivers, %d loops of %d B over %s, %d threads (hackbench -T)", m.Groups, m.FDs, m.Loops, m.Size, m.Transport, m.Workers)
	}
	return ""
}

// WriteSamples prints one column's runs in seed 001's layout to tw: "Runs:
// …", "Min: … Max: … Mean: … Std Dev: …" (each value in format, Std Dev
// over n) and, when base is given, the change against it ("4.57% slower
// than recvfrom", see Change). Flush tw afterwards.
func WriteSamples(tw *tabwriter.Writer, label, format string, xs, base []float64, baseLabel string, higherIsBetter bool) {
	vals := make([]string, len(xs))
	for i, x := range xs {
		vals[i] = fmt.Sprintf(format, x)
	}
	st := Summarize(xs)
	fmt.Fprintf(tw, "  %s\tRuns: %s\n", label, strings.Join(vals, " "))
	fmt.Fprintf(tw, "  \tMin: "+format+" Max: "+format+" Mean: "+format+" Std Dev: "+format+"\n", st.Min, st.Max, st.Mean, st.Std)
	if len(base) > 0 {
		fmt.Fprintf(tw, "  \t%s than %s\n", Change(Summarize(base), st, higherIsBetter), baseLabel)
	}
}
