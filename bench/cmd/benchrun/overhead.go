package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/stats"
)

// benchKey names one metric of one Go benchmark.
type benchKey struct{ name, unit string }

// parseGoBench reads `go test -bench` output: every "value unit" pair of
// every benchmark line, by benchmark name (without the -GOMAXPROCS
// suffix), and the names in first-seen order.
func parseGoBench(out []byte) (map[benchKey][]float64, []string) {
	vals := map[benchKey][]float64{}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				vals[benchKey{name, f[i+1]}] = append(vals[benchKey{name, f[i+1]}], v)
			}
		}
	}
	return vals, names
}

// cClockNs is the cost of one rdtscp;lfence read in C (drain450 -T: the
// median over blocks of 1000 reads), ns, median of 3 runs.
func cClockNs(c config) (float64, []string, error) {
	var ns []float64
	argv := []string{c.drain, "-T", "10000000"}
	for range 3 {
		out, _, err := run(time.Minute, argv...)
		if err != nil {
			return 0, argv, err
		}
		var r struct {
			NsPerRead float64 `json:"ns_per_read"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return 0, argv, fmt.Errorf("drain450 -T: %w", err)
		}
		ns = append(ns, r.NsPerRead)
	}
	return stats.Median(ns), argv, nil
}

func overhead(c config, d *doc) error {
	cc, cArgv, err := cClockNs(c)
	if err != nil {
		return err
	}
	argv := []string{"go", "test", "-run", "^$", "-bench", "Overhead|Recv|Record|Clock|Classify|DrainStepContext", "-benchmem", "-count", "3", "-benchtime", "300ms", "./net/udp", "./record", "./rt", "./probe"}
	out, _, err := run(5*time.Minute, argv...)
	if err != nil {
		return err
	}
	vals, names := parseGoBench(out)
	limit := 2*cc + 10
	d.h2("3. Overhead of measuring (Go benchmarks of the tick machinery)")
	d.p("`%s`; medians of 3 counts. BenchmarkOverhead (probe) alternates, within each iteration, a block of 1000 bare recv calls on one empty socket (EAGAIN: A, raw) with the drain's measured path over the same socket listed 1000 times (B, timed: two clock reads at the call site, the call, one stored sample per call), the flush that derives the histograms from those samples after the tick's calls (derive), and 1000 back-to-back pairs of clock reads; each metric is the median over blocks. B − A is what the measured path adds per recv call; derive is spent after the timed calls. ", shell(argv))
	d.p("Target (issue 13): B − A at most the C loop's two `rdtscp; lfence` reads + 10 ns, on this machine 2 × %.1f + 10 = %.1f ns (one read in C: `%s`, median over blocks of 1000, median of 3 runs), and 0 allocations.\n", cc, limit, shell(cArgv))
	d.p("\n| benchmark | raw ns/call (A) | timed ns/call (B) | overhead ns/call (B − A) | derive ns/call | total ns/call | allocs/op | target | met |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, n := range names {
		if !strings.HasPrefix(n, "BenchmarkOverhead/") {
			continue
		}
		a, b, o := stats.Median(vals[benchKey{n, "raw-ns/call"}]), stats.Median(vals[benchKey{n, "timed-ns/call"}]), stats.Median(vals[benchKey{n, "overhead-ns/call"}])
		dv, tot := stats.Median(vals[benchKey{n, "derive-ns/call"}]), stats.Median(vals[benchKey{n, "total-overhead-ns/call"}])
		al := stats.Median(vals[benchKey{n, "allocs/op"}])
		met := o <= limit && al == 0
		d.p("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | ≤ %.1f ns, 0 allocs | %s |\n", n, a, b, o, dv, tot, al, limit, yes(met))
		if !met {
			d.gap("overhead", fmt.Sprintf("%s: %.1f ns/call overhead (target ≤ %.1f), %.0f allocs", n, o, limit, al))
		}
	}
	gc := stats.Median(vals[benchKey{"BenchmarkClock/tsc", "ns/op"}])
	d.p("\nOne clock read through rtload's clock (BenchmarkClock/tsc): %.1f ns, against %.1f ns in C (B/A %.2f).\n", gc, cc, gc/cc)
	d.p("\nThe pieces, ns per operation (median of 3):\n\n| benchmark | ns/op | ns/call | allocs/op |\n|---|---:|---:|---:|\n")
	for _, n := range names {
		if strings.HasPrefix(n, "BenchmarkOverhead/") {
			continue
		}
		nc := "–"
		if v := vals[benchKey{n, "ns/call"}]; len(v) > 0 {
			nc = fmt.Sprintf("%.1f", stats.Median(v))
		}
		d.p("| %s | %.1f | %s | %.0f |\n", n, stats.Median(vals[benchKey{n, "ns/op"}]), nc, stats.Median(vals[benchKey{n, "allocs/op"}]))
	}
	return nil
}
