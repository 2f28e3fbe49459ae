package main

import (
	"fmt"
	"math"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rtload/rtload/stats"
)

// ---- 4 and 5. sender accuracy and scale curve ----

type scalePoint struct {
	n                               int
	achieved, target, lagP99, lag50 float64
	drainP50, drainP99, drainMax    float64
	overruns, lost, drops           uint64
	setupS, rssMiB                  float64
	argv                            []string
}

func scale(c config, d *doc) error {
	var pts []scalePoint
	for _, n := range c.counts {
		s, argv, st, err := rtloadRun(c, 3*time.Minute, filepath.Join(c.work, fmt.Sprintf("scale-%d", n)),
			"bench/scale.yaml", "--set", fmt.Sprintf("endpoints[0].count=%d", n))
		if err != nil {
			return err
		}
		p := scalePoint{n: n, argv: argv}
		var ach, tgt, lag, lag50, d50, d99, dmax []float64
		var measured time.Duration
		for _, t := range s.Trials {
			for _, tr := range t.Traffic {
				ach, tgt = append(ach, tr.AchievedRate), append(tgt, tr.TargetRate)
				lag, lag50 = append(lag, float64(tr.SendLag.P99Ns)), append(lag50, float64(tr.SendLag.P50Ns))
			}
			r := t.Readers[0]
			d50, d99, dmax = append(d50, float64(r.Drain.P50Ns)), append(d99, float64(r.Drain.P99Ns)), append(dmax, float64(r.Drain.MaxNs))
			p.overruns += r.Overruns
			p.lost += r.Lost
			p.drops += r.Drops
			measured += time.Duration(t.DurationNs) + 500*time.Millisecond
		}
		p.achieved, p.target, p.lagP99, p.lag50 = stats.Median(ach), stats.Median(tgt), stats.Median(lag), stats.Median(lag50)
		p.drainP50, p.drainP99, p.drainMax = stats.Median(d50), stats.Median(d99), stats.Median(dmax)
		p.setupS = (s.End.Sub(s.Start) - measured).Seconds() / float64(len(s.Trials))
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			p.rssMiB = float64(ru.Maxrss) / 1024
		}
		pts = append(pts, p)
	}
	d.h2("4. Sender accuracy")
	d.p("`bench/scale.yaml`: seed 000's traffic (1 msg/socket/20 ms, `spread: even`, one sendmmsg sender thread, unpinned, SCHED_OTHER) and reader (SCHED_FIFO 80 on CPU 1, recvfrom every 10 ms), no spin noise; 2 rounds of 3 s (+0.5 s warm-up), medians over rounds. Achieved vs target rate from summary.json `traffic[].achieved_rate`/`target_rate`; send lag is `traffic[].send_lag` (send time − scheduled time). Target: achieved within 0.1%% of target.\n")
	d.p("\n| sockets | target msg/s | achieved msg/s | error | send lag p50 µs | send lag p99 µs | target | met | command |\n|---:|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, p := range pts {
		if p.n != 450 && p.n != 2000 && p.n != 10000 {
			continue
		}
		e := p.achieved/p.target - 1
		met := math.Abs(e) <= 0.001
		d.p("| %d | %.0f | %.1f | %+.3f%% | %.1f | %.1f | within 0.1%% | %s | `%s` |\n", p.n, p.target, p.achieved, 100*e, p.lag50/1e3, p.lagP99/1e3, yes(met), shell(p.argv))
		if !met {
			d.gap("sender", fmt.Sprintf("%d sockets: achieved %+.3f%% off target, send lag p99 %.1f µs", p.n, 100*e, p.lagP99/1e3))
		}
	}
	d.h2("5. Scale curve")
	d.p("Same runs as section 4 (1 msg/socket/20 ms, 10 ms reader period, recvfrom, no noise). Drain time is the time the reader takes to drain every socket once per tick (`readers[].drain`); overruns are ticks missed; loss is `lost` (sequence gaps) plus kernel drops; set-up is wall time per trial not spent in warm-up or the measured window (socket creation and binding, thread start, teardown, writing results); RSS is the peak resident set of the rtload process (wait4 rusage).\n")
	d.p("\n| sockets | drain p50 µs | drain p99 µs | drain max µs | p99 / period | overruns | lost | kernel drops | set-up s/trial | peak RSS MiB |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	largest, clean := 0, true
	for _, p := range pts {
		d.p("| %d | %.0f | %.0f | %.0f | %.0f%% | %d | %d | %d | %.2f | %.1f |\n", p.n, p.drainP50/1e3, p.drainP99/1e3, p.drainMax/1e3, p.drainP99/1e7*100, p.overruns, p.lost, p.drops, p.setupS, p.rssMiB)
		// The largest count of an unbroken run of clean points from the
		// smallest: no missed tick, no loss, the drain's p99 inside the
		// period (rtload counts a tick as missed only when a whole period
		// late, so a drain longer than the period shows as late wakeups
		// first), and the sender within 0.1% of its rate.
		onRate := math.Abs(p.achieved/p.target-1) <= 0.001
		clean = clean && p.overruns == 0 && p.lost == 0 && p.drops == 0 && p.drainP99 < 1e7 && onRate
		if clean {
			largest = p.n
		}
	}
	d.p("\nCommand of each row: `%s` with `endpoints[0].count` set to the row's count.\n", shell(pts[0].argv))
	last := pts[0]
	for _, p := range pts {
		if p.n == largest {
			last = p
		}
	}
	perSock := last.drainP50 / float64(last.n)
	d.p("\n**Largest count sustained on this machine: %d sockets** (of those tried: no missed tick, no loss, drain p99 inside the 10 ms period, sender within 0.1%% of its rate). ", largest)
	d.p("The reader's drain time grows linearly, about %.0f ns per socket per tick at %d sockets (drain p50 ÷ sockets: one EAGAIN call per socket per tick plus one data call every other tick), so the reader alone would use up the 10 ms period at about %.0f sockets. Before that, the single sender thread (loopback sendmmsg, which also runs the receive side of every message in the sender's context) saturates the other CPU: see the achieved rate in section 4 and the CPU time in \"Gaps and causes\". Past the limit the reader overruns; messages queue in the 256 KiB `SO_RCVBUF` of each socket and are lost only once the reader falls far behind.\n",
		perSock, last.n, 1e7/perSock)
	return nil
}

// ---- 6. method matrix ----

func methods(c config, d *doc) error {
	s, argv, _, err := rtloadRun(c, 4*time.Minute, filepath.Join(c.work, "methods"), "bench/methods-450.yaml")
	if err != nil {
		return err
	}
	type agg struct{ p50, p99, mean, perMsg, callsPerMsg []float64 }
	by := map[string]*agg{}
	var order []string
	for _, t := range s.Trials {
		r := t.Readers[0]
		a := by[t.Variant]
		if a == nil {
			a = &agg{}
			by[t.Variant] = a
			order = append(order, t.Variant)
		}
		var rate float64
		for _, tr := range t.Traffic {
			rate += tr.TargetRate
		}
		msgs := rate * float64(t.DurationNs) / 1e9 // messages due in the window
		a.p50 = append(a.p50, float64(r.PerCallTicks.P50Ticks))
		a.p99 = append(a.p99, float64(r.PerCallTicks.P99Ticks))
		a.mean = append(a.mean, r.PerCallTicks.MeanTicks)
		a.perMsg = append(a.perMsg, float64(r.PerCall.All.Sum)/msgs)
		a.callsPerMsg = append(a.callsPerMsg, float64(r.Calls)/msgs)
	}
	hz := s.Clock.Hz
	d.h2("6. Method matrix (450 sockets, seed 000 workload)")
	d.p("`%s`: laight-450 (5 spin threads) with four variants, 3 rounds of 2 s alternating recvfrom, recvmsg, recvmmsg batch 8, recvmmsg batch 32 inside each round; medians over rounds. Per-call is TSC ticks per recv call (all calls, data and EAGAIN); per-message is the sum of every call's ticks in the window divided by the messages due in it (target rate × window), so it includes the EAGAIN call that ends each socket's drain. ns = ticks ÷ %.3f GHz.\n", shell(argv), hz/1e9)
	d.p("\n| method | p50 ticks/call | p99 ticks/call | mean ticks/call | mean ns/call | calls per message | ticks per message | ns per message | vs recvfrom |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	base := stats.Median(by[order[0]].perMsg)
	for _, v := range order {
		a := by[v]
		pm := stats.Median(a.perMsg)
		d.p("| %s | %.0f | %.0f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f× |\n", v, stats.Median(a.p50), stats.Median(a.p99), stats.Median(a.mean), stats.Median(a.mean)/hz*1e9, stats.Median(a.callsPerMsg), pm, pm/hz*1e9, pm/base)
	}
	return nil
}
