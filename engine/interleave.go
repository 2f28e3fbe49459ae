package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/scenario"
)

// An interleaved trial (scenario interleave:) runs the trials of one group
// (scenario.Trial.Group: one round's variants) as one: one set of
// endpoints, senders and noise, and for each reader one real-time thread
// whose loop alternates the variants' receivers and record sets in ABBA
// blocks (probe.Interleave). Its window measures every variant's
// duration in turn (n × duration). Everything but the readers' per-call
// work is shared; collect then splits the trial into one results.Trial
// per variant (split), each with its own histograms, counts, wakeup log
// and blocks, so every reader of Summary.Trials keeps working.

// interleaveOrder is the block order of n variants: forward then back
// (0 1 1 0 for two, 0 1 2 2 1 0 for three), so that each half-cycle holds
// every variant once and a linear drift loads none of them.
func interleaveOrder(n int) []uint8 {
	o := make([]uint8, 0, 2*n)
	for v := range n {
		o = append(o, uint8(v))
	}
	for v := n - 1; v >= 0; v-- {
		o = append(o, uint8(v))
	}
	return o
}

// interleave gives reader i of an interleaved trial one receiver (its
// buffers at bufOffset, as newReader's), one record set and (with dir) one
// wakeup log per variant of members (named with prefix, as newReader's),
// and its loop the blocks of a window of windowNs. The first variant's set
// and log are the ones newReader made.
func (r *reader) interleave(members []scenario.Trial, i, bufSize, bufOffset int, windowNs int64, dir *store.Dir, prefix string) error {
	lay := bucketLayout(members[0].Spec.Report)
	var rxs []udp.Receiver
	var recs []*probe.Recorders
	for m, mt := range members {
		rs := mt.Spec.Readers[i]
		rx, err := udp.NewReceiverAt(receiverMethod(rs.Method), bufSize, rs.Batch, bufOffset)
		if err != nil {
			return fmt.Errorf("reader %s, variant %s: %w", rs.Name, mt.Variant, err)
		}
		rec := r.loop.Rec
		if m > 0 {
			rec = readerRecorders(lay, rs.Counters)
		}
		rxs, recs = append(rxs, rx), append(recs, rec)
		switch {
		case r.log == nil:
		case m == 0:
			r.vlogs = append(r.vlogs, r.log)
		default:
			l, err := wakelog.Create(wakeupLogConfig(dir, mt, rs, prefix))
			if err != nil {
				return err
			}
			r.vlogs = append(r.vlogs, l)
		}
	}
	il, err := probe.NewInterleave(probe.InterleaveConfig{BlockNs: int64(members[0].Interleave), WindowNs: windowNs,
		Order: interleaveOrder(len(members)), Receivers: rxs, Recs: recs})
	if err != nil {
		return fmt.Errorf("reader %s: %w", r.spec.Name, err)
	}
	r.il, r.loop.Interleave = il, il
	return nil
}

// wakeupLogs are the reader's wakeup logs: one per variant when
// interleaved, else its one (none without a log).
func (r *reader) wakeupLogs() []*wakelog.Writer {
	if r.vlogs != nil {
		return r.vlogs
	}
	if r.log != nil {
		return []*wakelog.Writer{r.log}
	}
	return nil
}

// variantAt is the index, among the trial's members, of the variant that
// ran the reader's tick of deadline d (0 when not interleaved).
func (r *reader) variantAt(d int64) int {
	if r.il == nil {
		return 0
	}
	return r.il.VariantAt(d, r.loop.MeasureFrom)
}

// groupLine is the log line of an interleaved trial of a run of ntrials
// trials whose first trial's Index is base.
func groupLine(members []scenario.Trial, base, ntrials int) string {
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Variant
	}
	return fmt.Sprintf("trials %d–%d/%d: variants %s interleaved in %v ABBA blocks, round %d\n", members[0].Index-base+1, members[len(members)-1].Index-base+1, ntrials,
		strings.Join(names, ", "), time.Duration(members[0].Interleave), members[0].Round+1)
}

// split turns the results of an interleaved trial (res: the trial-wide
// values, as collect made them) into one results.Trial per variant. Each
// keeps the trial's shared facts (traffic, noise, kernel, threads, GC,
// marks) and gets its own identity (index, variant, overrides), readers
// (its tallies, histograms, per-call counters and wakeup log; the
// reader's thread counters, drops and CPU interrupts stay the trial's)
// and Interleave (its blocks). Its DurationNs is its blocks' time (the
// first reader's); Interleave.WindowNs the whole window.
func (t *trial) split(res *results.Trial) []*results.Trial {
	order := interleaveOrder(len(t.members))
	names := make([]string, len(order))
	for i, v := range order {
		names[i] = t.members[v].Variant
	}
	out := make([]*results.Trial, len(t.members))
	for m, mt := range t.members {
		c := *res
		c.Index, c.Round, c.Variant, c.Overrides = mt.Index, mt.Round, mt.Variant, variantSet(&mt.Spec, mt.Variant)
		c.Traffic, c.Noise = slices.Clone(res.Traffic), slices.Clone(res.Noise)
		il := &results.Interleave{Group: mt.Group, BlockNs: int64(mt.Interleave), WindowNs: res.DurationNs, Order: names, Blocks: []results.Block{}}
		c.Readers = make([]results.Reader, len(res.Readers))
		var measured int64
		for i, r := range t.readers {
			c.Readers[i] = r.variantReader(res.Readers[i], mt.Spec.Readers[i], m)
			for _, b := range r.il.Blocks[:r.il.Closed] {
				if int(b.Variant) != m {
					continue
				}
				il.Blocks = append(il.Blocks, resultBlock(b, i, r.loop.MeasureFrom, r.drain.Controls() > 0))
				if i == 0 {
					measured += b.EndNs - b.StartNs
				}
			}
			il.BlocksDropped += r.il.Dropped
		}
		c.DurationNs, c.Interleave = measured, il
		out[m] = &c
	}
	return out
}

// variantReader is reader r's results for variant m of its interleaved
// trial (spec rs): base (the trial-wide results) with the variant's
// method, tallies, histograms, per-call counters and wakeup log. The
// messages the trial never read (lost at the end, beyond the sequence
// gaps the variants saw) go to the variant that ran the tail.
func (r *reader) variantReader(base results.Reader, rs scenario.Reader, m int) results.Reader {
	rr := base
	tl := r.il.Tally[m]
	rr.Method = rs.Method.String()
	rr.Calls, rr.Data, rr.EAGAIN, rr.Errors = tl.Calls, tl.Data, tl.EAGAIN, tl.Errors
	rr.Messages, rr.Bytes, rr.Reordered, rr.Duplicates = tl.Messages, tl.Bytes, tl.Reordered, tl.Duplicates
	rr.Lost = tl.Lost
	if m == r.il.Current() {
		var seen uint64
		for _, x := range r.il.Tally {
			seen += x.Lost
		}
		rr.Lost += base.Lost - min(base.Lost, seen)
	}
	rr.Wakeups, rr.Overruns, rr.MissedTicks, rr.BacklogSkips, rr.Spikes = tl.Ticks, tl.Overruns, tl.MissedTicks, tl.BacklogSkips, tl.Spikes
	set := r.il.Recs[m].Set
	setHistograms(&rr, set, "ticks", true)
	rr.PerCallCounters = perCallCounters(set, r.drain.CountedEvents())
	rr.Controls = controls(set, r.drain.Controls(), tl.ControlSkips, true)
	rr.WakeupLog, rr.WakeupLogRows, rr.WakeupLogDropped, rr.WakeupLogLimit = nil, 0, 0, 0
	if m < len(r.vlogs) {
		st := r.vlogs[m].Stats()
		rr.WakeupLog, rr.WakeupLogRows, rr.WakeupLogDropped, rr.WakeupLogLimit = st.Files, st.Rows, st.RowsDropped, r.vlogs[m].Limit()
	}
	return rr
}

// resultBlock is probe block b of reader i as results keep it, its times
// from the window's start from, with its drift controls' sums when the
// reader timed them (ctl).
func resultBlock(b probe.Block, i int, from int64, ctl bool) results.Block {
	rb := results.Block{Seq: int(b.Seq), Reader: i, StartNs: b.StartNs - from, EndNs: b.EndNs - from,
		Ticks: b.Ticks, MissedTicks: b.MissedTicks, Calls: b.Calls, Data: b.Data, EAGAIN: b.EAGAIN, SumTicks: b.SumTicks,
		Messages: b.Messages, WakeupMaxNs: b.WakeupMaxNs}
	if ctl {
		rb.Controls = &results.BlockControls{NullCalls: b.NullCalls, NullSumTicks: b.NullSumTicks, LoopCalls: b.LoopCalls, LoopSumTicks: b.LoopSumTicks}
	}
	return rb
}
