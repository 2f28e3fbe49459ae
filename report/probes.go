package report

import (
	"github.com/rtload/rtload/results"

	"fmt"
	"strings"
	"text/tabwriter"
)

func hasProbes(s *results.Summary) bool {
	for _, t := range s.Trials {
		if len(t.Probes) > 0 {
			return true
		}
	}
	return false
}

// probeCol is one (variant, round) column of a probe table.
type probeCol struct {
	label string
	p     results.Probe
}

// writeProbes prints, per probe, the seed 004 figure — mean ns per packet
// — for every size, one column per trial (variant, and round when several),
// then the per-write percentiles and what the device accepted and dropped.
func writeProbes(b *strings.Builder, s *results.Summary) {
	writeRepeated(b, s)
	_, rounds := shape(s)
	byName := map[string][]probeCol{}
	var names []string
	for _, t := range s.Trials {
		for _, p := range t.Probes {
			if p.Kind != "tap_send" {
				continue
			}
			if _, ok := byName[p.Name]; !ok {
				names = append(names, p.Name)
			}
			label := t.Variant
			if rounds > 1 {
				label = fmt.Sprintf("%s#%d", t.Variant, t.Round+1)
			}
			byName[p.Name] = append(byName[p.Name], probeCol{label, p})
		}
	}
	for _, name := range names {
		cols := byName[name]
		p0 := cols[0].p
		fmt.Fprintf(b, "\n%s probe %q (device %s, mtu %d): time per packet, ns (mean of every write(2))\n", p0.Kind, name, p0.Device, p0.MTU)
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "size (B)\t")
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", c.label)
		}
		fmt.Fprintln(tw)
		for i, sz := range p0.Sizes {
			fmt.Fprintf(tw, "%d\t", sz.Size)
			for _, c := range cols {
				if i < len(c.p.Sizes) {
					fmt.Fprintf(tw, "%.0f\t", c.p.Sizes[i].MeanNs)
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintf(b, "per write (ns: p50 / p99 / max), frames written, device rx accepted / dropped, sink received / dropped\n")
		tw = tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		for _, c := range cols {
			for _, sz := range c.p.Sizes {
				fmt.Fprintf(tw, "  %s\t%d B\t%d / %d / %d\twritten %d of %d\trx %d / %d\tsink %d / %d",
					c.label, sz.Size, sz.PerWrite.P50Ns, sz.PerWrite.P99Ns, sz.PerWrite.MaxNs,
					sz.Written, sz.Packets, sz.RxPackets, sz.RxDropped, sz.SinkReceived, sz.SinkDrops)
				if sz.Errors > 0 {
					fmt.Fprintf(tw, "\terrors %d (%s)", sz.Errors, sz.LastError)
				}
				fmt.Fprintln(tw)
			}
		}
		tw.Flush()
		for _, c := range cols {
			fmt.Fprintf(b, "  %s: vnet_hdr %v, queues %d; thread %s, cpus %s\n", c.label, c.p.VnetHdr, c.p.Queues, policy(c.p.Applied), cpuList(c.p.Applied.CPUs))
		}
	}
}
