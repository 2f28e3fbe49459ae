package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// column is one (variant, reader) column of Report, merged over rounds.
type column struct {
	label  string
	rounds int

	all, data, eagain record.Snapshot
	calls, dataCalls  uint64
	eagainCalls, errs uint64
	messages, bytes   uint64
	lost, reordered   uint64
	dups, drops       uint64
	wakeups, overruns uint64
	missed            uint64
	backlogSkips      uint64
	catchUp           bool
	ringDropped       uint64
	logDropped        uint64
	spikesDropped     uint64

	socketsReadMin, sockets int
	rcvbufMin, rcvbufMax    int
	sent, sendErrors        uint64
	inFlight                int64
	trafficKnown            bool
	// traffic are the rounds' traffic groups feeding this column's reader;
	// trafficMissed[i] says whether traffic[i] marked its trial
	// (MarkTraffic).
	traffic       []results.Traffic
	trafficMissed []bool

	perCall             []results.TickStats
	wake, drain, oneWay []results.Latency
	// events holds each per-call hardware counter's rounds by event name
	// (readers[].counters), in the order first seen.
	events     map[string][]results.PerCallCounter
	eventNames []string
	applied    results.Applied
	// controls are the rounds' drift controls (readers[].controls; the
	// rounds that timed none left out).
	controls []*results.Controls
	// seccomp is the filter the reader's thread ran under, one per
	// round: the rounds' read-backs, each its own (nil: none).
	seccomp []*results.Seccomp
}

// seccompLine is the column's seccomp filter as read back: the rounds'
// when they all say the same, else each distinct one "; "-joined.
func (c *column) seccompLine() string {
	var seen []string
	for _, s := range c.seccomp {
		if l := s.String(); !slices.Contains(seen, l) {
			seen = append(seen, l)
		}
	}
	return strings.Join(seen, "; ")
}

// anySeccomp reports whether a column's reader ran under a filter.
func anySeccomp(cols []column) bool {
	return slices.ContainsFunc(cols, func(c column) bool {
		return slices.ContainsFunc(c.seccomp, func(s *results.Seccomp) bool { return s != nil })
	})
}

// Report writes the end-of-run report for s to w, built only from s: a
// header (scenario, run window, what one clock tick is, degraded and
// stopped banners), the per-call tables for all calls, data calls and
// EAGAIN calls (one column per variant, or per variant/reader when a trial
// has several readers; rounds of a variant merged), per-column call stats,
// wakeup latency and drain time, message accounting, noise work and the
// GC check. It fits 100 columns for up to four columns. It fails only on
// a write error or per-call histograms whose layouts differ.
//
// Every string taken from s is escaped for the terminal (termsafe.Copy):
// a summary from elsewhere cannot move the cursor, retitle the terminal or
// forge a line.
func Report(w io.Writer, s *results.Summary) error {
	s = termsafe.Copy(s)
	var b strings.Builder
	writeHeader(&b, s)
	cols, err := columns(s)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		if hasProbes(s) {
			writeProbes(&b, s)
			b.WriteByte('\n')
			writeNoise(&b, s)
			b.WriteByte('\n')
			writeGC(&b, s)
		} else {
			b.WriteString("\nno readers: nothing measured\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	unitLong := s.Clock.TickUnit()
	unit := ShortUnit(unitLong)
	merged := roundsNote(cols)
	timerOnly := true // readers with no sockets: a cyclictest-like timer probe
	for _, c := range cols {
		timerOnly = timerOnly && c.sockets == 0
	}
	if timerOnly {
		b.WriteString("\nreaders drain no sockets: wakeup latency only\n\n")
		writeBlocks(&b, labels(cols), latency(cols)[:1])
		b.WriteByte('\n')
		writeNoise(&b, s)
		b.WriteByte('\n')
		writeGC(&b, s)
		_, err := io.WriteString(w, b.String())
		return err
	}
	tables := []struct {
		title string
		hist  func(c *column) record.Snapshot
	}{
		{"per-call cost in " + unitLong + ", all calls (data + EAGAIN)", func(c *column) record.Snapshot { return c.all }},
		{"per-call cost in " + unitLong + ", data calls only", func(c *column) record.Snapshot { return c.data }},
		{"per-call cost in " + unitLong + ", EAGAIN calls only", func(c *column) record.Snapshot { return c.eagain }},
	}
	for _, t := range tables {
		tc := make([]Column, len(cols))
		for i := range cols {
			tc[i] = Column{Label: cols[i].label, Hist: t.hist(&cols[i])}
		}
		b.WriteByte('\n')
		if err := Table(&b, tc, TableOptions{Title: t.title + merged, Unit: unit}); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	b.WriteByte('\n')
	var blocks []*kv
	blocks = append(blocks, stats(s, cols, unit, unitLong))
	blocks = append(blocks, perCallCounters(cols)...)
	if k := controlsBlock(s, cols, unit); k != nil {
		blocks = append(blocks, k)
	}
	blocks = append(blocks, latency(cols)...)
	blocks = append(blocks, messages(cols))
	blocks = append(blocks, trafficBlocks(cols)...)
	writeBlocks(&b, labels(cols), blocks)
	writeRounds(&b, s)
	if hasProbes(s) {
		writeProbes(&b, s)
	}
	b.WriteByte('\n')
	writeNoise(&b, s)
	b.WriteByte('\n')
	writeGC(&b, s)
	writeProfiled(&b, s)
	_, err = io.WriteString(w, b.String())
	return err
}

// writeTitle writes the report's first line: "rtload report: scenario
// NAME (FILE)".
func writeTitle(b *strings.Builder, s *results.Summary) {
	name := s.Scenario
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(b, "rtload report: scenario %s", name)
	if s.File != "" {
		fmt.Fprintf(b, " (%s)", s.File)
	}
	b.WriteByte('\n')
}

func writeHeader(b *strings.Builder, s *results.Summary) {
	writeTitle(b, s)
	if !s.Start.IsZero() {
		fmt.Fprintf(b, "run: %s", s.Start.Format(time.RFC3339))
		if !s.End.IsZero() {
			fmt.Fprintf(b, " to %s (%s)", s.End.Format(time.RFC3339), s.End.Sub(s.Start).Round(time.Millisecond))
		}
		b.WriteString(", ")
	}
	fmt.Fprintf(b, "%s: %s\n", plural(len(s.Trials), "trial"), trialShape(s))
	b.WriteString(interleaveLine(s))
	b.WriteString(clockLine(s.Clock))
	b.WriteByte('\n')
	if s.Clock.Note != "" {
		fmt.Fprintf(b, "  %s\n", s.Clock.Note)
	}
	for _, f := range s.Clock.Fallbacks {
		fmt.Fprintf(b, "  fallback: %s\n", f)
	}
	if l := clockRateLine(s); l != "" {
		fmt.Fprintf(b, "  %s\n", l)
	}
	b.WriteString(kernelLine(s))
	b.WriteString(housekeepingLine(s))
	if a := s.Auto; a != nil {
		b.WriteString(autoLine(a))
	}
	if s.Degraded {
		b.WriteString("\n*** DEGRADED: run without some privileges (--allow-degraded); not comparable to a privileged run\n")
		for _, r := range s.DegradedReasons {
			fmt.Fprintf(b, "    - %s\n", r)
		}
	}
	if s.InProgress {
		fmt.Fprintf(b, "\n*** INCOMPLETE: summary.json is a checkpoint written at %s by a run that had not finished (killed, or its results could not be saved); its data end there\n", s.End.Format(time.RFC3339))
	}
	if s.Stopped {
		b.WriteString("\n*** STOPPED EARLY")
		if s.StoppedAt != nil {
			fmt.Fprintf(b, " at %s", s.StoppedAt.Format(time.RFC3339))
		}
		b.WriteString(": interrupted; last trial partial, rounds may be missing\n")
	}
	markBanners(b, s)
	threadWarnings(b, s)
	for _, tr := range s.Trials {
		for _, r := range tr.Readers {
			if r.TracingStopped != "" {
				fmt.Fprintf(b, "\n*** TRACING STOPPED (%s): %s\n", tr.Name(), r.TracingStopped)
			}
		}
	}
}

// interleaveLine says, when variants ran interleaved, that each round's
// variants shared one window, and which columns' rows are then the
// trial's rather than the variant's.
func interleaveLine(s *results.Summary) string {
	for _, t := range s.Trials {
		if il := t.Interleave; il != nil {
			return fmt.Sprintf("interleaved: each round's variants ran in one trial, alternating in %s ABBA blocks (%s, …) on the same reader threads and sockets; "+
				"the traffic sent, noise, kernel drops and thread counters are that trial's, shown in each variant's column\n",
				time.Duration(il.BlockNs), strings.Join(il.Order, " "))
		}
	}
	return ""
}

// autoLine states how a rounds: auto run ended: the reason, the rounds,
// and the 95% CI of the headline difference against the precision asked.
func autoLine(a *results.AutoRounds) string {
	reason := a.Reason
	if reason == "" {
		reason = "still running"
	}
	target := strconv.FormatFloat(a.PrecisionPct, 'g', -1, 64)
	l := fmt.Sprintf("rounds: auto: %s after %s", reason, plural(a.Rounds, "round"))
	what := fmt.Sprintf("the %s difference (%s, every variant against %s)", a.Metric, a.Unit, firstOr(a.Columns))
	if len(a.Columns) < 2 {
		what = fmt.Sprintf("the %s (%s; one variant: the interval of its mean over rounds)", a.Metric, a.Unit)
	}
	switch {
	case a.HalfWidthPct != nil && a.Within:
		l += fmt.Sprintf("; the 95%% CI of %s is ±%.2f%% of the baseline, within the ±%s%% asked", what, *a.HalfWidthPct, target)
	case a.HalfWidthPct != nil:
		l += fmt.Sprintf("; the 95%% CI of %s is ±%.2f%% of the baseline, NOT within the ±%s%% asked (more rounds, or a quieter machine)", what, *a.HalfWidthPct, target)
	case a.Metric != "":
		l += fmt.Sprintf("; no 95%% CI of %s yet (fewer than 2 rounds, or a zero baseline)", what)
	}
	return l + "\n"
}

func firstOr(cols []string) string {
	if len(cols) == 0 {
		return "the first"
	}
	return cols[0]
}

// plural prints "1 round", "2 rounds".
func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "s"):
		return strconv.Itoa(n) + " " + what + "es"
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// trialShape says what the trials were: "2 variants × 3 rounds" when
// every variant ran every round, "2 variants in soak slices" for a soak
// whose variants alternated in slices, else each variant's range of
// rounds ("2 variants, 1–2 rounds each": a run stopped inside a round).
func trialShape(s *results.Summary) string {
	variants, rounds := shape(s)
	if s.Plan.Sliced() && variants > 1 {
		return plural(variants, "variant") + " in soak slices"
	}
	if procs := s.ProcessCount(); procs > 1 && len(s.Trials) == variants*rounds {
		return plural(variants, "variant") + " × " + plural(procs, "process") + " × " + plural(rounds/procs, "round")
	}
	if len(s.Trials) == variants*rounds {
		return plural(variants, "variant") + " × " + plural(rounds, "round")
	}
	per := map[string]int{}
	for _, t := range s.Trials {
		per[t.Variant]++
	}
	least := rounds
	for _, n := range per {
		least = min(least, n)
	}
	return fmt.Sprintf("%s, %d–%d rounds each", plural(variants, "variant"), least, rounds)
}

// shape counts distinct variants and the most rounds any variant ran.
func shape(s *results.Summary) (variants, rounds int) {
	per := map[string]int{}
	for _, t := range s.Trials {
		per[t.Variant]++
	}
	for _, n := range per {
		rounds = max(rounds, n)
	}
	return len(per), rounds
}

// clockLine states what one tick is, honestly.
func clockLine(c results.ClockInfo) string {
	switch {
	case c.Kind == "tsc":
		l := "clock: tsc, 1 tick = 1/" + hz(c.Hz) + " (TSC ticks are not core cycles)"
		if c.Invariant {
			l += ", invariant TSC"
		} else {
			l += ", TSC NOT invariant: ticks may not be constant time"
		}
		if c.Read == results.ReadRDTSCFenced {
			l += ", read LFENCE;RDTSC;LFENCE"
		}
		return l
	case c.Kind == "cycles":
		return "clock: " + results.CyclesDescription + ", core clock " + hz(c.Hz) + " while calibrating"
	case c.Kind == "monotonic" && (c.Hz == 1e9 || c.Hz == 0):
		return "clock: monotonic, 1 tick = 1 ns"
	case c.Kind == "":
		return "clock: unknown (summary has no clock info): per-call units unknown"
	default:
		return "clock: " + c.Kind + ", 1 tick = 1/" + hz(c.Hz)
	}
}

// clockRateLine says how a tsc clock's rate held against CLOCK_MONOTONIC
// over the trials that measured it (Trial.ClockRate): the largest
// deviation from the calibration, and how many trials strayed beyond
// results.ClockRateTolerance (marked invalid); "" when no trial has one.
func clockRateLine(s *results.Summary) string {
	n, off := 0, 0
	var worst results.ClockRate
	for _, t := range s.Trials {
		r := t.ClockRate
		if r == nil {
			continue
		}
		n++
		if r.Disagrees() {
			off++
		}
		if math.Abs(r.Deviation) >= math.Abs(worst.Deviation) {
			worst = *r
		}
	}
	if n == 0 {
		return ""
	}
	l := fmt.Sprintf("TSC rate against CLOCK_MONOTONIC: at most %+.4f%% from its calibration over %s (tolerance ±%g%%)",
		worst.Deviation*100, plural(n, "trial"), results.ClockRateTolerance*100)
	if off > 0 {
		l += fmt.Sprintf("; *** %d of %d beyond it, marked invalid", off, n)
	}
	return l
}

func hz(v float64) string {
	switch {
	case v <= 0:
		return "? Hz (frequency unknown)"
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 3, 64) + " GHz"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 3, 64) + " MHz"
	default:
		return strconv.FormatFloat(v, 'f', 0, 64) + " Hz"
	}
}

// ShortUnit is the word for a tick unit in a narrow heading (the seed
// table's row labels, "mean ticks/call"): "ticks" for "TSC ticks", the
// unit itself otherwise ("cycles", "ns").
func ShortUnit(unit string) string { return strings.TrimPrefix(unit, "TSC ") }

// columns merges the trials into one column per variant (or per
// variant/reader when there are several readers), in run order.
func columns(s *results.Summary) ([]column, error) {
	perReader := results.PerReader(s)
	var cols []column
	for _, rc := range results.Columns(s) {
		r0 := rc.Rounds[0].Reader
		c := column{label: rc.Label(perReader, "/"), socketsReadMin: r0.SocketsRead, rcvbufMin: r0.RcvBuf,
			rcvbufMax: r0.RcvBuf, applied: r0.Applied}
		for _, rd := range rc.Rounds {
			if err := c.add(*rd.Trial, *rd.Reader, len(rd.Trial.Readers)); err != nil {
				return nil, fmt.Errorf("report: %s round %d: %w", c.label, rd.Trial.Round, err)
			}
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func (c *column) add(t results.Trial, r results.Reader, nReaders int) error {
	c.rounds++
	for _, m := range []struct {
		name string
		dst  *record.Snapshot
		src  record.Snapshot
	}{
		{"all", &c.all, r.PerCall.All},
		{"data", &c.data, r.PerCall.Data},
		{"eagain", &c.eagain, r.PerCall.EAGAIN},
	} {
		if len(m.src.Counts) == 0 {
			continue
		}
		sum, ok := m.dst.Add(m.src)
		if !ok {
			return fmt.Errorf("per-call %s histogram layout %s differs from earlier rounds %s", m.name, layoutString(m.src), layoutString(*m.dst))
		}
		*m.dst = sum
	}
	c.calls += r.Calls
	c.dataCalls += r.Data
	c.eagainCalls += r.EAGAIN
	c.errs += r.Errors
	c.messages += r.Messages
	c.bytes += r.Bytes
	c.lost += r.Lost
	c.reordered += r.Reordered
	c.dups += r.Duplicates
	c.drops += r.Drops
	c.wakeups += r.Wakeups
	c.overruns += r.Overruns
	c.missed += r.MissedTicks
	c.backlogSkips += r.BacklogSkips
	c.catchUp = c.catchUp || r.OverrunMode == "catchup"
	c.ringDropped += r.RingDropped
	c.logDropped += r.WakeupLogDropped
	c.spikesDropped += r.SpikesDropped
	c.socketsReadMin = min(c.socketsReadMin, r.SocketsRead)
	c.sockets = max(c.sockets, r.Sockets)
	c.rcvbufMin = min(c.rcvbufMin, r.RcvBuf)
	c.rcvbufMax = max(c.rcvbufMax, r.RcvBuf)
	c.seccomp = append(c.seccomp, r.Seccomp)
	c.perCall = append(c.perCall, r.PerCallTicks)
	c.wake = append(c.wake, r.WakeupLatency)
	c.drain = append(c.drain, r.Drain)
	c.oneWay = append(c.oneWay, r.OneWayDelay)
	if r.Controls != nil {
		c.controls = append(c.controls, r.Controls)
	}
	for _, pc := range r.PerCallCounters {
		if c.events == nil {
			c.events = map[string][]results.PerCallCounter{}
		}
		if _, ok := c.events[pc.Event]; !ok {
			c.eventNames = append(c.eventNames, pc.Event)
		}
		c.events[pc.Event] = append(c.events[pc.Event], pc)
	}
	// Traffic belongs to this reader when it names the endpoint, or when
	// the reader is alone in its trial.
	for _, tr := range t.Traffic {
		if feeds(tr, r, nReaders) {
			c.traffic = append(c.traffic, tr)
			c.trafficMissed = append(c.trafficMissed, trafficMissed(&t, tr.Endpoint))
			c.sent += tr.Sent
			c.sendErrors += tr.SendErrors
			c.inFlight += tr.InFlight
			c.trafficKnown = true
		}
	}
	return nil
}

// roundsNote says how many rounds each column merges, or "" for one.
func roundsNote(cols []column) string {
	same := true
	for _, c := range cols {
		same = same && c.rounds == cols[0].rounds
	}
	if same {
		if cols[0].rounds <= 1 {
			return ""
		}
		return fmt.Sprintf(" (%d rounds merged)", cols[0].rounds)
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s %d", c.label, c.rounds)
	}
	return " (rounds merged: " + strings.Join(parts, ", ") + ")"
}

// kv is a block of named rows, one cell per column, right-aligned.
type kv struct {
	title string
	rows  [][]string // rows[i][0] is the name
	notes []string   // printed under the block
}

func (k *kv) add(name string, cells ...string) {
	k.rows = append(k.rows, append([]string{name}, cells...))
}

// writeBlocks prints blocks under one set of column widths so their
// columns line up.
func writeBlocks(b *strings.Builder, labels []string, blocks []*kv) {
	nameW := 24
	widths := make([]int, len(labels))
	for i, l := range labels {
		widths[i] = max(12, Width(l))
	}
	for _, k := range blocks {
		for _, r := range k.rows {
			nameW = max(nameW, Width(r[0])+4)
			for i := range labels {
				if i+1 < len(r) {
					widths[i] = max(widths[i], Width(r[i+1]))
				}
			}
		}
	}
	for n, k := range blocks {
		if n > 0 {
			b.WriteByte('\n')
		}
		line := PadRight(k.title, nameW)
		if Width(k.title) > nameW-2 {
			WriteLine(b, k.title)
			line = strings.Repeat(" ", nameW)
		}
		for i, l := range labels {
			line += "  " + Pad(l, widths[i])
		}
		WriteLine(b, line)
		for _, r := range k.rows {
			WriteRow(b, r, nameW, widths, "  ")
		}
		for _, note := range k.notes {
			fmt.Fprintf(b, "  %s\n", note)
		}
	}
}

func labels(cols []column) []string {
	l := make([]string, len(cols))
	for i, c := range cols {
		l[i] = c.label
	}
	return l
}

// cells maps f over the columns.
func cells(cols []column, f func(c *column) string) []string {
	out := make([]string, len(cols))
	for i := range cols {
		out[i] = f(&cols[i])
	}
	return out
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// stats is the per-column call counts and per-call cost. Percentiles
// and max come from the per-call HdrHistogram (results' definition); a
// column without one falls back to the linear buckets and the title says
// the percentiles are bucket lower edges.
func stats(s *results.Summary, cols []column, unit, unitLong string) *kv {
	pc := make([]results.TickStats, len(cols))
	fromHDR := true
	for i, c := range cols {
		var exact bool
		pc[i], exact = results.MergeTickStats(c.perCall...)
		fromHDR = fromHDR && exact && (pc[i].Count > 0 || c.all.Total == 0)
	}
	title := "per-call stats (" + unitLong + "; percentiles from the HdrHistogram, max exact)"
	if !fromHDR {
		title = "per-call stats (" + unitLong + "; percentiles are bucket lower edges where no HdrHistogram was recorded)"
	}
	k := &kv{title: title}
	k.add("calls", cells(cols, func(c *column) string { return u(c.calls) })...)
	k.add("data calls", cells(cols, func(c *column) string { return u(c.dataCalls) })...)
	k.add("EAGAIN calls", cells(cols, func(c *column) string { return u(c.eagainCalls) })...)
	k.add("other errors", cells(cols, func(c *column) string { return u(c.errs) })...)
	k.add("mean "+unit+"/call", cells(cols, func(c *column) string { return f1(c.all.Mean()) })...)
	if s.Clock.Kind == "tsc" && s.Clock.Hz > 0 {
		k.add("mean ns/call", cells(cols, func(c *column) string { return f1(c.all.Mean() * 1e9 / s.Clock.Hz) })...)
	}
	k.add("mean "+unit+"/data call", cells(cols, func(c *column) string { return f1(c.data.Mean()) })...)
	k.add("mean "+unit+"/EAGAIN call", cells(cols, func(c *column) string { return f1(c.eagain.Mean()) })...)
	for _, q := range []results.Quantity{results.P50, results.P99, results.P999} {
		row := make([]string, len(cols))
		for i := range cols {
			row[i] = perCallQuantity(&cols[i], pc[i], q)
		}
		k.add(q.String()+" "+unit, row...)
	}
	k.add("max "+unit, cells(cols, func(c *column) string { return u(c.all.Max) })...)
	k.add("policy (read back)", cells(cols, func(c *column) string { return policy(c.applied) })...)
	k.add("cpus", cells(cols, func(c *column) string { return cpuList(c.applied.CPUs) })...)
	k.add("mlockall", cells(cols, func(c *column) string { return yesNo(c.applied.Mlocked) })...)
	if anySeccomp(cols) {
		k.add("seccomp (read back)", cells(cols, func(c *column) string { return c.seccompLine() })...)
	}
	return k
}

// perCallQuantity prints quantity q of a column's per-call cost: from its
// HdrHistogram summary t, or else the linear bucket edge ("8256+" for the
// overflow bucket).
func perCallQuantity(c *column, t results.TickStats, q results.Quantity) string {
	if t.Count > 0 {
		return strconv.FormatFloat(t.Ticks(q), 'f', 0, 64)
	}
	if c.all.Total == 0 {
		return "-"
	}
	qs := map[results.Quantity]float64{results.P50: 0.50, results.P90: 0.90, results.P99: 0.99, results.P999: 0.999}
	return edge(c.all, results.BucketPercentile(c.all, qs[q]))
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// edge prints a bucket edge, "8256+" for the overflow bucket.
func edge(s record.Snapshot, v uint64) string {
	if s.Total > 0 && v == s.Overflow {
		return u(v) + "+"
	}
	return u(v)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// policy is the applied policy in a few characters: "FIFO 80", "OTHER".
func policy(a results.Applied) string {
	if a.Policy == "" {
		return "?"
	}
	p := strings.TrimPrefix(a.Policy, "SCHED_")
	switch p {
	case "FIFO", "RR", "DEADLINE":
		p += " " + strconv.Itoa(a.Priority)
	default:
		if a.Nice != 0 {
			p += " nice " + strconv.Itoa(a.Nice)
		}
	}
	return p
}

// cpuList prints CPUs as ranges: "0-3,6", or "any" for an empty set.
func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "any"
	}
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(c[i])+"-"+strconv.Itoa(c[j]))
		} else {
			parts = append(parts, strconv.Itoa(c[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// latency is the wakeup latency, drain time and one-way delay blocks.
func latency(cols []column) []*kv {
	wake := make([]results.Latency, len(cols))
	drain := make([]results.Latency, len(cols))
	oneWay := make([]results.Latency, len(cols))
	exact := true
	anyOneWay := false
	for i, c := range cols {
		var e1, e2, e3 bool
		wake[i], e1 = results.MergeLatency(c.wake...)
		drain[i], e2 = results.MergeLatency(c.drain...)
		oneWay[i], e3 = results.MergeLatency(c.oneWay...)
		exact = exact && e1 && e2 && e3
		anyOneWay = anyOneWay || oneWay[i].Count > 0
	}
	k := &kv{title: "wakeup latency (µs, wake − deadline)"}
	k.add("wakeups", cells(cols, func(c *column) string { return u(c.wakeups) })...)
	k.add("overruns (late ticks)", cells(cols, func(c *column) string { return u(c.overruns) })...)
	k.add("missed ticks (skipped)", cells(cols, func(c *column) string { return u(c.missed) })...)
	if slices.ContainsFunc(cols, func(c column) bool { return c.catchUp }) {
		k.add("backlog skips (catchup)", cells(cols, func(c *column) string {
			if !c.catchUp {
				return "-"
			}
			return u(c.backlogSkips)
		})...)
	}
	k.add("log rows dropped (ring full)", cells(cols, func(c *column) string { return u(c.ringDropped) })...)
	if slices.ContainsFunc(cols, func(c column) bool { return c.logDropped > 0 }) {
		k.add("log rows deleted (log_limit)", cells(cols, func(c *column) string { return u(c.logDropped) })...)
	}
	if slices.ContainsFunc(cols, func(c column) bool { return c.spikesDropped > 0 }) {
		k.add("spikes not logged (cap)", cells(cols, func(c *column) string { return u(c.spikesDropped) })...)
	}
	addLat(k, wake, results.AllQuantities)
	blocks := []*kv{k}
	k = &kv{title: "drain time per wakeup (µs)"}
	addLat(k, drain, []results.Quantity{results.P50, results.P99, results.Max})
	blocks = append(blocks, k)
	if anyOneWay {
		k = &kv{title: "one-way delay send → recv (µs)"}
		addLat(k, oneWay, []results.Quantity{results.P50, results.P99, results.Max})
		blocks = append(blocks, k)
	}
	if !exact {
		k.notes = append(k.notes, "note: some rounds carry no HDR histogram; merged percentiles are the worst round's")
	}
	return blocks
}

// addLat adds a row per quantity of ls (µs, one decimal).
func addLat(k *kv, ls []results.Latency, qs []results.Quantity) {
	for _, q := range qs {
		row := make([]string, len(ls))
		for i, l := range ls {
			row[i] = "-"
			if l.Count > 0 {
				row[i] = Microseconds(l.Ns(q))
			}
		}
		k.add(q.String(), row...)
	}
}

// Microseconds prints ns in µs with one decimal, as every latency of the
// report (and the live line) is printed.
func Microseconds(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }

// messages is the message accounting block.
func messages(cols []column) *kv {
	k := &kv{title: "message accounting"}
	known := func(f func(c *column) string) func(c *column) string {
		return func(c *column) string {
			if !c.trafficKnown {
				return "-"
			}
			return f(c)
		}
	}
	k.add("sent (warm-up + window)", cells(cols, known(func(c *column) string { return u(c.sent) }))...)
	k.add("send errors", cells(cols, known(func(c *column) string { return u(c.sendErrors) }))...)
	k.add("received (incl. in flight)", cells(cols, func(c *column) string { return u(c.messages) })...)
	k.add("received bytes", cells(cols, func(c *column) string { return u(c.bytes) })...)
	k.add("  of which in flight at end", cells(cols, known(func(c *column) string { return strconv.FormatInt(c.inFlight, 10) }))...)
	k.add("lost", cells(cols, func(c *column) string { return u(c.lost) })...)
	k.add("reordered", cells(cols, func(c *column) string { return u(c.reordered) })...)
	k.add("duplicates", cells(cols, func(c *column) string { return u(c.dups) })...)
	k.add("kernel drops", cells(cols, func(c *column) string { return u(c.drops) })...)
	k.add("sockets read / sockets", cells(cols, func(c *column) string {
		return strconv.Itoa(c.socketsReadMin) + "/" + strconv.Itoa(c.sockets)
	})...)
	k.add("rcvbuf given by kernel", cells(cols, func(c *column) string {
		if c.rcvbufMin == c.rcvbufMax {
			return strconv.Itoa(c.rcvbufMin) + " B"
		}
		return strconv.Itoa(c.rcvbufMin) + "-" + strconv.Itoa(c.rcvbufMax) + " B"
	})...)
	if cols[0].rounds > 1 {
		k.notes = append(k.notes, "sockets read is the fewest in any round")
	}
	return k
}

// writeNoise prints each variant's background work, summed over rounds.
func writeNoise(b *strings.Builder, s *results.Summary) {
	type key struct{ variant, kind, unit string }
	type work struct {
		threads int
		count   uint64
		seconds float64
		cpu     float64 // CPU seconds per thread (CPUShare × Seconds), summed
	}
	var order []key
	sum := map[key]*work{}
	for _, t := range s.Trials {
		for _, n := range t.Noise {
			k := key{t.Variant, n.Kind, n.Unit}
			w, ok := sum[k]
			if !ok {
				w = &work{}
				sum[k] = w
				order = append(order, k)
			}
			w.threads = max(w.threads, n.Threads)
			w.count += n.Count
			w.seconds += n.Seconds
			w.cpu += n.CPUShare * n.Seconds
		}
	}
	if len(order) == 0 {
		b.WriteString("noise: none\n")
		return
	}
	b.WriteString("noise (achieved work, summed over rounds)\n")
	for _, k := range order {
		w := sum[k]
		v := k.variant
		if v == "" {
			v = "run"
		}
		rate := "-"
		if w.seconds > 0 {
			rate = strconv.FormatFloat(float64(w.count)/w.seconds, 'f', 0, 64)
		}
		share := ""
		if w.cpu > 0 && w.seconds > 0 {
			share = fmt.Sprintf(", %.0f%% of a CPU per thread (getrusage)", 100*w.cpu/w.seconds)
		}
		fmt.Fprintf(b, "  %s: %s × %d threads: %d %s in %.1f s = %s %s/s%s\n",
			v, k.kind, w.threads, w.count, k.unit, w.seconds, rate, k.unit, share)
	}
}

// writeGC checks that no garbage collection ran in a measured window.
func writeGC(b *strings.Builder, s *results.Summary) {
	var total uint64
	var where []string
	soak := false
	for i := range s.Trials {
		t := &s.Trials[i]
		for _, r := range t.Readers {
			soak = soak || r.Intervals > 0
		}
		if t.GCDuring > 0 {
			total += uint64(t.GCDuring)
			where = append(where, fmt.Sprintf("%s: %d", t.Name(), t.GCDuring))
		}
	}
	if total == 0 {
		b.WriteString("gc during measured windows: 0\n")
		return
	}
	if soak {
		fmt.Fprintf(b, "gc during the soak: %s, rtload's own (GC stays off until the heap has grown by the soak's headroom; the readers wait at their safe point while it runs, so the intervals it ran in are marked and their trials invalid)\n", plural(int(total), "cycle"))
		return
	}
	fmt.Fprintf(b, "WARNING: %s during measured windows (want 0); those samples may include GC work\n", plural(int(total), "GC cycle"))
	for _, w := range where {
		fmt.Fprintf(b, "  %s\n", w)
	}
}
