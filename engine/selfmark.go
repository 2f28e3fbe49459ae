package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/results"
)

// This file marks what rtload's own process did to a soak's intervals:
// a garbage collection (the readers wait at their safe point for it), a
// resident size past what the design allows, a metrics endpoint under a
// flood. Each interval record says so (Interval.Mark), and the trial sums
// it up (Trial.Marks: a collection marks it invalid, the rest MarkRtload).

// RSSSlack is what a soak's resident memory may exceed its first
// interval's by, beyond the GC headroom, before its intervals are marked:
// histograms are fixed, logs stream to disk, and the heap grows by at most
// the headroom before the writer collects.
const RSSSlack = 64 << 20

// selfWatch is a trial writer's watch on its own process. Only the writer
// goroutine uses it.
type selfWatch struct {
	run      *run // rssBase: the run's first interval's RSS, shared by its trials
	headroom uint64
	slack    int64 // RSSSlack
	exporter *exporter.Server
	gcBefore uint32
	readers  []selfReader // by the writer's reader index

	// Trial totals, for the trial's marks (trialMarks).
	gcSeqs         []int
	gcRuns         uint32
	rssIntervals   int
	rssMax         int64
	pressIntervals int
	pressure       exporter.Pressure
}

// selfReader is one reader's last record's view of the process.
type selfReader struct {
	lastGC       uint32
	lastPressure exporter.Pressure
	started      bool
}

func newSelfWatch(w *trialWriter, r *run, gcBefore uint32) *selfWatch {
	s := &selfWatch{run: r, headroom: w.headroom, slack: RSSSlack, exporter: w.exporter, gcBefore: gcBefore, readers: make([]selfReader, len(w.readers))}
	if s.headroom == 0 {
		s.headroom = soakHeadroom(0)
	}
	if s.exporter != nil {
		p := s.exporter.Pressure()
		for i := range s.readers {
			s.readers[i].lastPressure = p
		}
	}
	return s
}

// mark fills the interval record iv of reader i (its RSSBytes and
// GCCycles read) with what the process did since that reader's previous
// record: GCRuns, RSSBoundBytes, Exporter and, when any of them disturbs
// the interval, Mark. It allocates only for a marked record and the
// exporter's counts.
func (s *selfWatch) mark(i int, iv *results.Interval) {
	if s == nil || i >= len(s.readers) {
		return
	}
	r := &s.readers[i]
	if !r.started {
		r.lastGC, r.started = s.gcBefore, true
	}
	iv.GCRuns = iv.GCCycles - min(r.lastGC, iv.GCCycles)
	r.lastGC = iv.GCCycles
	var parts []string
	if iv.GCRuns > 0 {
		parts = append(parts, fmt.Sprintf("rtload's own garbage collection ran %s (its readers waited at their safe point)", times(int(iv.GCRuns))))
		s.gcSeqs = append(s.gcSeqs, iv.Seq)
		s.gcRuns += iv.GCRuns
	}
	if iv.RSSBytes > 0 {
		if s.run != nil && s.run.rssBase == 0 {
			s.run.rssBase = iv.RSSBytes
		}
		if s.run != nil {
			iv.RSSBoundBytes = s.run.rssBase + int64(s.headroom) + s.slack
		}
		if iv.RSSBoundBytes > 0 && iv.RSSBytes > iv.RSSBoundBytes {
			parts = append(parts, fmt.Sprintf("rtload's RSS %s is past its bound %s (the run's first interval's %s + GC headroom %s + %s)",
				bytesText(uint64(iv.RSSBytes)), bytesText(uint64(iv.RSSBoundBytes)), bytesText(uint64(s.run.rssBase)), bytesText(s.headroom), bytesText(uint64(s.slack))))
			s.rssIntervals++
			s.rssMax = max(s.rssMax, iv.RSSBytes)
		}
	}
	if s.exporter != nil {
		p := s.exporter.Pressure()
		d := results.ExporterInterval{Connections: p.Connections - r.lastPressure.Connections, Refused: p.Refused - r.lastPressure.Refused,
			Requests: p.Requests - r.lastPressure.Requests, FDWaits: p.FDWaits - r.lastPressure.FDWaits}
		r.lastPressure = p
		iv.Exporter = &d
		if i == 0 { // the trial's totals: once per interval, not once per reader
			s.pressure.Connections += d.Connections
			s.pressure.Refused += d.Refused
			s.pressure.FDWaits += d.FDWaits
		}
		if flooded(d) {
			what := fmt.Sprintf("its metrics endpoint refused %d of %d connections, %d requests served (a flood, or requests over its limits)", d.Refused, d.Connections, d.Requests)
			if d.FDWaits > 0 {
				what += fmt.Sprintf(", and held back accepting %s for want of descriptors", times(int(d.FDWaits)))
			}
			parts = append(parts, what)
			if i == 0 {
				s.pressIntervals++
			}
		}
	}
	if len(parts) > 0 {
		iv.Mark = strings.Join(parts, "; ")
	}
}

// flooded reports whether the metrics endpoint met more than scrapes in
// an interval: a connection refused (closed with no request served: over
// its limits, timed out, not HTTP; counted when it closes, often in the
// next interval), accepting held back for descriptors, or more than one
// connection beyond the requests served (a scraper's connection serves a
// request at once; one may be in flight at the interval's end).
func flooded(d results.ExporterInterval) bool {
	return d.Refused > 0 || d.FDWaits > 0 || d.Connections > d.Requests+1
}

// trialMarks sums the trial's marked intervals up as the trial's marks,
// one per kind of disturbance: its own garbage collection (MarkInvalid:
// the readers waited for it), its RSS past its bound and its metrics
// endpoint flooded (MarkRtload).
func (s *selfWatch) trialMarks() []results.Mark {
	if s == nil {
		return nil
	}
	var marks []results.Mark
	if len(s.gcSeqs) > 0 {
		seqs := make([]string, 0, min(len(s.gcSeqs), 5))
		for _, q := range s.gcSeqs[:min(len(s.gcSeqs), 5)] {
			seqs = append(seqs, "#"+strconv.Itoa(q))
		}
		if len(s.gcSeqs) > 5 {
			seqs = append(seqs, "…")
		}
		line := fmt.Sprintf("rtload's own garbage collection ran %s in %s (%s): its readers waited at their safe point meanwhile",
			times(int(s.gcRuns)), plural(len(s.gcSeqs), "interval record"), strings.Join(seqs, ", "))
		marks = append(marks, results.Mark{Kind: results.MarkInvalid, Text: line})
	}
	if s.rssIntervals > 0 {
		marks = append(marks, results.Mark{Kind: results.MarkRtload,
			Text: fmt.Sprintf("rtload's RSS passed its bound in %s (at most %s)", plural(s.rssIntervals, "interval record"), bytesText(uint64(s.rssMax)))})
	}
	if s.pressIntervals > 0 {
		m := fmt.Sprintf("rtload's metrics endpoint was flooded in %s: it refused %d of %d connections in the trial (a flood, or requests over its limits)",
			plural(s.pressIntervals, "interval record"), s.pressure.Refused, s.pressure.Connections)
		if s.pressure.FDWaits > 0 {
			m += fmt.Sprintf("; it held back accepting %s for want of descriptors", times(int(s.pressure.FDWaits)))
		}
		marks = append(marks, results.Mark{Kind: results.MarkRtload, Text: m})
	}
	return marks
}

// times is "once", "twice", "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// plural is "1 interval", "3 intervals".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
