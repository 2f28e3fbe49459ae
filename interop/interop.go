package interop

import (
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"math"

	"bytes"
	"fmt"
	"path/filepath"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Interoperable files WriteInterop writes into a results directory.
const (
	// WakeupHlogFile holds wakeup latency (ns) as an HdrHistogram interval
	// log, one interval per trial and reader.
	WakeupHlogFile = "wakeup.hlog"
	// PerCallHlogFile holds per-call cost (clock ticks) likewise.
	PerCallHlogFile = "per-call.hlog"
	// WakeupCyclictestFile holds wakeup latency in cyclictest -h layout,
	// one column per trial and reader.
	WakeupCyclictestFile = "wakeup-cyclictest.txt"
)

// Max-value divisors of the Interval_Max column (HdrHistogram's
// maxValueUnitRatio).
const (
	// WakeupMaxDivisor prints wakeup Interval_Max in µs (ns / 1e3), the
	// unit cyclictest and most RT latency plots use; HdrHistogram's default
	// of 1e6 (ms) would print typical wakeups as 0.000.
	WakeupMaxDivisor = 1e3
	// PerCallMaxDivisor prints per-call Interval_Max in raw clock ticks,
	// the histogram's own unit.
	PerCallMaxDivisor = 1
)

// Cyclictest row counts WriteInterop chooses between.
const (
	// CyclictestBuckets is the default number of 1 µs rows (-h 1000).
	CyclictestBuckets = 1000
	// CyclictestMaxBuckets caps the rows when latencies run longer; larger
	// values are counted as overflows.
	CyclictestMaxBuckets = 100000
	// CyclictestMaxCells caps rows × columns, so the file stays under
	// about 2 MB (7 bytes a cell): a run of 28 trials with one 100 ms
	// wakeup wrote 100,000 rows × 28 columns, a 19.5 MB file that was 85%
	// of its results directory (issue 34). Fewer rows then: the longer
	// latencies are counted as overflows, as cyclictest -h counts them,
	// "Max Latencies" still gives each column's max, and the .hlog files
	// keep the whole histograms.
	CyclictestMaxCells = 1 << 18
)

// WriteInterop writes s's wakeup and per-call histograms into dir in
// formats other tools read, and returns the names written (relative to
// dir), in this order, each only when some trial has data for it:
//
//	wakeup.hlog            HdrHistogram interval log of WakeupLatency (ns)
//	per-call.hlog          HdrHistogram interval log of PerCallTicks (clock ticks)
//	wakeup-cyclictest.txt  cyclictest -h layout of WakeupLatency (µs rows)
//
// Each trial's reader is one interval (Tag "<variant>/r<round>/<reader>")
// or one column. A Summary records no per-trial start time, so interval k
// starts at the sum of the DurationNs of the trials before it, relative to
// s.Start (StartTime/BaseTime): setup time between trials is left out.
// Intervals are as long as their trial. The cyclictest file has
// CyclictestBuckets rows, or the largest wakeup rounded up to a multiple
// of 1000 µs when that is longer, at most CyclictestMaxBuckets and at most
// CyclictestMaxCells over all columns (never fewer than
// CyclictestBuckets). Readers
// whose Latency carries no HDR encoding are skipped; an HDR that does not
// decode is an error naming the trial and reader. Files are written
// atomically.
func WriteInterop(d *safeio.Dir, s *results.Summary) ([]string, error) {
	if s == nil {
		return nil, fmt.Errorf("write interop %s: nil Summary", d.Path())
	}
	wake := &HlogFile{Start: s.Start, Comments: []string{
		"rtload: wakeup latency, values in ns",
		"rtload: Interval_Max is the max in us (ns / 1000)",
	}}
	unit := s.Clock.TickUnit()
	call := &HlogFile{Start: s.Start, Comments: []string{
		fmt.Sprintf("rtload: per-call cost, values in %s at %s Hz", unit, strconv.FormatFloat(s.Clock.Hz, 'f', -1, 64)),
		"rtload: Interval_Max is the max in the same unit",
	}}
	var cols []CyclictestColumn
	var offset float64
	var maxUs uint64
	for _, t := range s.Trials {
		length := float64(t.DurationNs) / 1e9
		for _, r := range t.Readers {
			tag := hlogTag(fmt.Sprintf("%s/r%d/%s", t.Variant, t.Round, r.Name))
			wh, err := decodeLatency(r.WakeupLatency.HDR)
			if err != nil {
				return nil, fmt.Errorf("write interop: trial %d reader %s: wakeup latency: %w", t.Index, r.Name, err)
			}
			if wh != nil {
				wake.Intervals = append(wake.Intervals, HlogInterval{Tag: tag, StartSec: offset, LengthSec: length, Hist: wh,
					MaxValueDivisor: WakeupMaxDivisor, Max: r.WakeupLatency.MaxNs})
				cols = append(cols, CyclictestColumn{Name: tag, Hist: wh, MaxNs: r.WakeupLatency.MaxNs})
				maxUs = max(maxUs, uint64(r.WakeupLatency.MaxNs)/1000)
			}
			ch, err := decodeLatency(r.PerCallTicks.HDR)
			if err != nil {
				return nil, fmt.Errorf("write interop: trial %d reader %s: per-call ticks: %w", t.Index, r.Name, err)
			}
			if ch != nil {
				call.Intervals = append(call.Intervals, HlogInterval{Tag: tag, StartSec: offset, LengthSec: length, Hist: ch,
					MaxValueDivisor: PerCallMaxDivisor, Max: int64(min(r.PerCallTicks.MaxTicks, math.MaxInt64))})
			}
		}
		offset += length
	}
	var written []string
	for _, f := range []struct {
		name string
		log  *HlogFile
	}{{WakeupHlogFile, wake}, {PerCallHlogFile, call}} {
		if len(f.log.Intervals) == 0 {
			continue
		}
		if err := WriteHlog(d, f.name, f.log); err != nil {
			return written, fmt.Errorf("write interop: %w", err)
		}
		written = append(written, f.name)
	}
	if len(cols) > 0 {
		var b bytes.Buffer
		if err := WriteCyclictestHist(&b, cols, cyclictestBuckets(maxUs, len(cols))); err != nil {
			return written, fmt.Errorf("write interop %s: %w", filepath.Join(d.Path(), WakeupCyclictestFile), err)
		}
		if err := d.WriteFile(WakeupCyclictestFile, b.Bytes()); err != nil {
			return written, fmt.Errorf("write interop: %w", err)
		}
		written = append(written, WakeupCyclictestFile)
	}
	return written, nil
}

// cyclictestBuckets returns CyclictestBuckets, or maxUs+1 rounded up to a
// multiple of 1000 when larger, capped at CyclictestMaxBuckets and at
// CyclictestMaxCells / columns rounded down to a multiple of 1000, but
// never below CyclictestBuckets.
func cyclictestBuckets(maxUs uint64, columns int) int {
	n := (maxUs + 1 + 999) / 1000 * 1000
	limit := uint64(CyclictestMaxBuckets)
	if columns > 0 {
		limit = min(limit, max(uint64(CyclictestMaxCells/columns)/1000*1000, CyclictestBuckets))
	}
	return int(min(max(n, CyclictestBuckets), limit))
}

// decodeLatency decodes an HDR encoding, or returns nil for none.
func decodeLatency(enc string) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		return nil, nil
	}
	return results.DecodeHDR(enc)
}
