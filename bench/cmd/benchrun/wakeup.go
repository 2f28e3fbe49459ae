package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// cyclictestSamples reads the per-wakeup latencies (ns) that `cyclictest
// -v -N` prints, one "thread: cycle: latency" line each, into an HDR
// histogram (the same 3-significant-digit histogram rtload keeps, so both
// sides' percentiles have one definition).
func cyclictestSamples(out []byte) (*hdrhistogram.Histogram, error) {
	h := newWakeupHist()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "0:" || !strings.HasSuffix(f[1], ":") {
			continue
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cyclictest -v line %q: %w", line, err)
		}
		if err := h.RecordValue(max(ns, 1)); err != nil {
			return nil, fmt.Errorf("cyclictest -v: %d ns: %w", ns, err)
		}
	}
	if h.TotalCount() == 0 {
		return nil, fmt.Errorf("cyclictest: no per-wakeup lines in its output")
	}
	return h, nil
}

// wakeupVals are the per-run values of a wakeup comparison, in µs.
func wakeupVals(h *hdrhistogram.Histogram) map[string]float64 {
	return map[string]float64{
		"p50": float64(h.ValueAtQuantile(50)) / 1e3,
		"p99": float64(h.ValueAtQuantile(99)) / 1e3,
		"max": float64(h.Max()) / 1e3,
	}
}

// wakeupComparison is cyclictest (A) against rtload timer-only (B), each
// run waking c.wakeRun seconds at a 10 ms period, with or without spin noise.
func wakeupComparison(c config, spin bool) *comparison {
	loops := int(math.Round(c.wakeRun * 100))
	label := "quiet"
	var nz *noise
	if spin {
		label = "spin"
		nz = &noise{argv: []string{c.drain, "-S", fmt.Sprint(c.wakeRun + 30), "-N", "5"}}
	}
	ctArgv := []string{"cyclictest", "-m", "-p", "80", "--policy=fifo", "-i", "10000", "-a", "1", "-t", "1", "-l", strconv.Itoa(loops), "-q", "-N", "-v"}
	cmp := &comparison{
		title:  label,
		warmup: c.warmupPairs,
		noise:  nz,
		stats: []stat{
			{key: "p50", label: "wakeup p50 µs", prec: 1},
			{key: "p99", label: "wakeup p99 µs", prec: 1, ratioMax: 1.10, diffMax: 5, diffUnit: "µs"},
			{key: "max", label: "wakeup max µs", prec: 1},
		},
		rule:       rule{MinPairs: 3, MaxPairs: 100, MaxRelHalfWidth: c.precision, Cap: c.wakeCap},
		minWakeups: c.minWakeups,
	}
	cmp.a = side{name: "cyclictest", argv: ctArgv, run: func(int) (measurement, error) {
		out, _, err := run(time.Duration(c.wakeRun+30)*time.Second, ctArgv...)
		if err != nil {
			return measurement{}, err
		}
		h, err := cyclictestSamples(out)
		if err != nil {
			return measurement{}, err
		}
		return measurement{vals: wakeupVals(h), hist: h}, nil
	}}
	cmp.b = rtloadWakeupSide(c, "rtload", label)
	if c.baseline != "" {
		cmp.a = rtloadWakeupSide(c.with(c.baseline), "rtload baseline", label)
	}
	return cmp
}

// rtloadWakeupSide runs timer-only for c.wakeRun seconds with c.rtload.
func rtloadWakeupSide(c config, name, label string) side {
	sd := side{name: name}
	sd.run = func(i int) (measurement, error) {
		s, argv, _, err := rtloadRun(c, time.Duration(c.wakeRun+60)*time.Second,
			filepath.Join(c.work, fmt.Sprintf("wake-%s-%s-%d", label, strings.ReplaceAll(name, " ", "-"), i)), "configs/timer-only.yaml", "--duration", fmt.Sprintf("%gs", c.wakeRun))
		if err != nil {
			return measurement{}, err
		}
		w := s.Trials[0].Readers[0].WakeupLatency
		h, err := hdrhistogram.Decode([]byte(w.HDR))
		if err != nil {
			return measurement{}, fmt.Errorf("rtload wakeup_latency.hdr: %w", err)
		}
		return measurement{vals: wakeupVals(h), hist: h, argv: argv}, nil
	}
	return sd
}

func wakeup(c config, d *doc) error {
	var outs []*outcome
	for _, spin := range []bool{false, true} {
		o, err := wakeupComparison(c, spin).run()
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	d.h2("2. Wakeup latency: cyclictest vs rtload timer-only")
	d.p("A is `cyclictest` (SCHED_FIFO 80, CPU 1, 10 ms period, clock_nanosleep TIMER_ABSTIME, mlockall, /dev/cpu_dma_latency 0; `-N -v` prints every wakeup in ns); B is `rtload run configs/timer-only.yaml` (the same period, CPU, policy, priority, and cpu_dma_latency 0). ")
	d.p("Each run wakes %d times (%g s); both sides' latencies go into the same HdrHistogram (3 significant digits), so p50, p99 and max have one definition. ", int(math.Round(c.wakeRun*100)), c.wakeRun)
	d.p("\"spin\" runs `%s -S <s> -N 5` (5 SCHED_OTHER busy threads, unpinned) around each run of either side. Values in µs. Target (issue 13): rtload's p99 ≤ 1.10 × cyclictest's, or within +5 µs of it; p50 and max are context.\n", c.drain)
	d.pairTableHead()
	for _, o := range outs {
		d.rows("wakeup", o)
	}
	d.pairNotes(outs)
	d.p("\nPooled over every pair (all wakeups of a side in one histogram):\n\n| rows | wakeups A | wakeups B | p50 A µs | p50 B µs | p99 A µs | p99 B µs | p99 B/A | max A µs | max B µs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, o := range outs {
		a, b := o.histA, o.histB
		p := func(h *hdrhistogram.Histogram, q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
		d.p("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f | %.3f | %.1f | %.1f |\n", o.cmp.title, a.TotalCount(), b.TotalCount(),
			p(a, 50), p(b, 50), p(a, 99), p(b, 99), p(b, 99)/p(a, 99), float64(a.Max())/1e3, float64(b.Max())/1e3)
	}
	return nil
}
