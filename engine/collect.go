package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/cpulist"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// collect turns the trial's counters and histograms into report types.
func collect(res *results.Trial, sp *scenario.Spec, senders []*sender, readers []*reader) {
	// Messages sent per group, to compute in-flight per reader.
	for _, s := range senders {
		elapsed := float64(max(1, s.ended-s.start)) / 1e9
		interval := sendInterval(s.spec)
		nsock := len(s.group.FDs())
		applied := s.applied
		tf := results.Traffic{
			Endpoint: s.spec.Endpoint, Sockets: nsock, Applied: &applied, Sent: s.sent, SendErrors: s.errs, Due: s.due,
			TargetRate:   float64(nsock) / interval.Seconds(),
			AchievedRate: float64(s.sent) / elapsed,
			RateErrorPct: rateErrorPct(s.sent, s.due), RateTolerancePct: float64(s.spec.RateTolerance),
			SendLag: results.LatencyOf(s.lag, true), MaxSendLagNs: int64(s.spec.MaxSendLag),
		}
		if s.baseOK && s.endOK {
			tf.Counters = taskCounters(s.taskEnd.Sub(s.taskBase))
			tf.Starved = starved(tf.Counters, s.ended-s.start, applied)
		}
		if why := trafficVerdict(tf, stolen(res.StealNs, applied.CPUs)); why != "" {
			res.Marks = append(res.Marks, results.Mark{Kind: results.MarkTraffic, Endpoint: tf.Endpoint, Text: tf.Endpoint + ": " + why})
		}
		res.Traffic = append(res.Traffic, tf)
	}
	for _, r := range readers {
		c := r.drain.Counts()
		t := r.total // every interval merged (the writer's finish included the last)
		clockUnit := "ticks"
		rr := results.Reader{
			Name: r.spec.Name, Method: r.spec.Method.String(), Sockets: len(r.drain.FDs()), Endpoint: strings.Join(r.spec.Endpoints, ","),
			Applied: r.applied,
			Calls:   c.Calls, Data: c.Data, EAGAIN: c.EAGAIN, Errors: c.Errors,
			Messages: c.Messages, Bytes: c.Bytes, Lost: c.Lost, Reordered: c.Reordered, Duplicates: c.Duplicates,
			SocketsRead: r.drain.SocketsRead(),
			Wakeups:     r.loop.MeasuredTicks, Overruns: r.loop.Overruns, MissedTicks: r.loop.MissedTicks, MissedAtEnd: r.loop.MissedAtEnd, RingDropped: r.loop.Wakeups.Dropped(),
			Spikes: r.loop.Spikes, SpikesDropped: r.spikesDropped, BrokeTraceAtNs: r.loop.BrokeAt.Load(), Intervals: r.intervals, SafePointPasses: r.loop.Yields,
		}
		rr.OverrunMode, rr.MaxBacklog, rr.BacklogSkips = overrunMode(r.spec), r.spec.MaxBacklog, r.loop.BacklogSkips
		rr.ThresholdNs = int64(r.spec.Threshold)
		setHistograms(&rr, t, clockUnit, true)
		rr.Counters, rr.CountersSkipped = r.readCounters(), r.countersSkipped
		if why := starved(rr.Counters, res.DurationNs, rr.Applied); why != "" {
			res.Marks = append(res.Marks, results.Mark{Kind: results.MarkStarved, Reader: rr.Name, Text: "reader " + rr.Name + " " + why})
		}
		rr.Seccomp = r.seccomp
		if rr.Seccomp != nil && rr.Seccomp.NotAsAsked != "" {
			res.Marks = append(res.Marks, results.Mark{Kind: results.MarkInvalid, Reader: rr.Name,
				Text: "reader " + rr.Name + ": seccomp filter not as asked: " + rr.Seccomp.NotAsAsked})
		}
		hotFields(&rr, r)
		rr.CPUInterrupts = r.cpuInterrupts()
		rr.Machine = r.machine.result()
		rr.TracingStopped = r.tracingStopped()
		if r.log != nil {
			st := r.log.Stats()
			rr.WakeupLog = st.Files
			rr.WakeupLogRows, rr.WakeupLogDropped, rr.WakeupLogLimit = st.Rows, st.RowsDropped, r.log.Limit()
		}
		for _, g := range r.groups {
			if d, err := g.Drops(); err == nil {
				rr.Drops += d
			}
			rr.RcvBuf = g.RcvBuf()
		}
		// Messages still in flight when the window closed were read in the
		// tail ticks; anything sent but never read is lost.
		var sent uint64
		for _, s := range senders {
			for _, g := range r.groups {
				if s.group == g {
					sent += s.sent
				}
			}
		}
		tail := r.loop.TailMessages
		for i := range res.Traffic {
			for _, g := range r.groups {
				if senders[i].group == g {
					res.Traffic[i].InFlight += int64(tail)
				}
			}
		}
		if sent > c.Messages {
			rr.Lost = max(rr.Lost, sent-c.Messages)
		}
		res.Readers = append(res.Readers, rr)
	}
}

// setHistograms fills rr's latency summaries (each from its class's HDR,
// summarised by latency) and per-call snapshots (in unit) from t.
func setHistograms(rr *results.Reader, t *record.Set, unit string, encode bool) {
	rr.WakeupLatency = results.LatencyOf(t.HDR(record.WakeupLatency), encode)
	rr.PerCallTicks = results.TickStatsOf(t.HDR(record.CallAll), encode)
	rr.Drain = results.LatencyOf(t.HDR(record.DrainTime), encode)
	rr.OneWayDelay = results.LatencyOf(t.HDR(record.OneWayDelay), encode)
	rr.PerCall = perCall(t, unit)
	rr.PerCallClass = perCallClass(t, unit)
}

// perCall snapshots the per-call histograms of t by result (every call,
// data, EAGAIN).
func perCall(t *record.Set, unit string) results.PerCall {
	return results.PerCall{Unit: unit, All: t.Snapshot(record.CallAll, unit), Data: t.Snapshot(record.CallData, unit),
		EAGAIN: t.Snapshot(record.CallEAGAIN, unit)}
}

// perCallClass snapshots the per-call context histograms of t (nil when the
// set has none).
func perCallClass(t *record.Set, unit string) *results.PerCallClass {
	for _, c := range []record.Class{record.CallWarm, record.CallCold, record.CallFirst, record.CallRest} {
		if t.Linear(c) == nil {
			return nil
		}
	}
	return &results.PerCallClass{Unit: unit, FirstCalls: probe.FirstCalls,
		Warm: t.Snapshot(record.CallWarm, unit), Cold: t.Snapshot(record.CallCold, unit),
		First: t.Snapshot(record.CallFirst, unit), Rest: t.Snapshot(record.CallRest, unit)}
}

// rateErrorPct is how far sent is from due, in % of due (0 when nothing
// was due).
func rateErrorPct(sent, due uint64) float64 {
	if due == 0 {
		return 0
	}
	return (float64(sent) - float64(due)) / float64(due) * 100
}

// trafficVerdict says how traffic group tf missed its thresholds: its
// rate error beyond RateTolerancePct, its send-lag p99 above
// MaxSendLagNs (each checked when set), joined with ", "; "" when it met
// both.
func trafficVerdict(tf results.Traffic, steal string) string {
	var why []string
	if tf.RateTolerancePct > 0 && tf.Due > 0 && math.Abs(tf.RateErrorPct) > tf.RateTolerancePct {
		why = append(why, fmt.Sprintf("rate %.1f msg/s against %.1f (%+.2f%%: %d of %d due sent; tolerance ±%s%%)",
			tf.AchievedRate, tf.TargetRate, tf.RateErrorPct, tf.Sent, tf.Due, strconv.FormatFloat(tf.RateTolerancePct, 'g', -1, 64)))
	}
	if tf.MaxSendLagNs > 0 && tf.SendLag.Count > 0 && tf.SendLag.P99Ns > tf.MaxSendLagNs {
		why = append(why, fmt.Sprintf("send lag p99 %s > max_send_lag %s", time.Duration(tf.SendLag.P99Ns).Round(time.Microsecond), time.Duration(tf.MaxSendLagNs)))
	}
	if len(why) > 0 && tf.Starved != "" {
		why = append(why, "the sender "+tf.Starved)
	}
	if len(why) > 0 && steal != "" {
		why = append(why, steal)
	}
	return strings.Join(why, ", ")
}

// stolen says how much of the trial the hypervisor took from the CPUs a
// thread may run on (cpus; stealNs by CPU, as results.Trial.StealNs):
// "CPU 0 lost 110ms to the hypervisor during the trial (/proc/stat
// steal): the machine's share", or "" when none (or under 10 ms, one
// tick of /proc/stat).
func stolen(stealNs []int64, cpus []int) string {
	var parts []string
	for c, ns := range stealNs {
		if ns >= int64(10*time.Millisecond) && (len(cpus) == 0 || slices.Contains(cpus, c)) {
			parts = append(parts, fmt.Sprintf("CPU %d lost %s", c, time.Duration(ns).Round(time.Millisecond)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " and ") + " to the hypervisor during the trial (/proc/stat steal): the machine's share"
}

// starved says why a reader (or a sender) was runnable but off its CPU for more than 1%
// of the window dur (ns), at least 10 ms, by its run-queue wait (the
// procfs counter "runqueue-wait", schedstat's run_delay: the time between
// being woken and running, which holds RT throttling's whole stall); ""
// when it was not, or when no run-queue wait was counted. A SCHED_FIFO
// reader alone at its priority waits microseconds per tick: 0.1% of the
// window at 100 ticks/s.
func starved(counters []results.Counter, dur int64, a results.Applied) string {
	var wait int64 = -1
	for _, c := range counters {
		if c.Name == "runqueue-wait" {
			wait = int64(c.Value)
		}
	}
	if wait < 0 || dur <= 0 || wait <= max(10*int64(time.Millisecond), dur/100) {
		return ""
	}
	share := fmt.Sprintf("%.1f%% of the %s window", 100*float64(wait)/float64(dur), time.Duration(dur).Round(time.Millisecond))
	if wait > dur {
		share = fmt.Sprintf("longer than the %s window: warm-up and tail too", time.Duration(dur).Round(time.Millisecond))
	}
	return fmt.Sprintf("runnable but off CPU %s for %s (%s; schedstat run-queue wait): RT throttling or a thread at or above %s %d there",
		cpulist.Format(a.CPUs), time.Duration(wait).Round(time.Millisecond), share, a.Policy, a.Priority)
}
