package compare

import (
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"testing"
	"time"

	"github.com/rtload/rtload/record"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

// Seed layout: 128-wide buckets from 64, overflow at 8256.
const (
	seedWidth    = 128
	seedOrigin   = 64
	seedOverflow = 8256
)

// seedSnapshot is seed column col (0 recvfrom unhard, 1 recvfrom hard,
// 2 recvmsg unhard, 3 recvmsg hard) with every bucket moved up by shift
// buckets (counts pushed past the last bucket land in overflow). Sum
// assumes samples mid-bucket and overflow samples at 12000.
func seedSnapshot(col, shift int) record.Snapshot {
	s := record.Snapshot{
		Unit: "TSC ticks", Width: seedWidth, Origin: seedOrigin, Overflow: seedOverflow,
		Counts: make([]uint64, 1+(seedOverflow-seedOrigin)/seedWidth),
	}
	add := func(i int, n uint64) {
		if n == 0 {
			return
		}
		s.Total += n
		if i >= len(s.Counts) {
			s.OverflowCount += n
			s.Sum += n * 12000
			s.Max = 48211
			return
		}
		s.Counts[i] += n
		lower := s.Lower(i)
		s.Sum += n * (lower + seedWidth/2)
		if s.Min == 0 || lower+5 < s.Min {
			s.Min = lower + 5
		}
		s.Max = max(s.Max, lower+100)
	}
	for _, r := range seedRows {
		add(1+int((r.Lower-seedOrigin)/seedWidth)+shift, r.N[col])
	}
	add(len(s.Counts), seedOverflowRow[col])
	return s
}

// seedSummary is one run of the seed's two variants (recvfrom, recvmsg)
// on one kernel: cols are the seed columns of recvfrom and recvmsg, one
// round each, per-call buckets moved up by shift.
func seedSummary(kernel string, cols [2]int, shift int) *results.Summary {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &results.Summary{
		Version: results.SummaryVersion, Scenario: "laight-450", File: "configs/laight-450.yaml",
		Spec:  results.Spec(`{"name":"laight-450","period":"10ms","readers":[{"cpu":1}]}`),
		Env:   results.Env{Kernel: kernel, CPUModel: "Intel(R) Core(TM) i7-3770", Clocksource: "tsc", Cmdline: "quiet"},
		Start: start, End: start.Add(45 * time.Second),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 3.4e9, Invariant: true},
	}
	for i, v := range []string{"recvfrom", "recvmsg"} {
		all := seedSnapshot(cols[i], shift)
		s.Trials = append(s.Trials, results.Trial{
			Index: i, Round: 0, Variant: v,
			Readers: []results.Reader{{
				Name: "rt", Method: v, Sockets: 450, Calls: all.Total,
				PerCall:       results.PerCall{Unit: "TSC ticks", All: all},
				WakeupLatency: testutil.Latency(1000, 2_000+int64(shift)*100, 37),
				Drain:         testutil.Latency(1000, 700_000, 211),
				WakeupLog:     []string{"wakeups-" + v + ".csv"},
			}},
		})
	}
	return s
}

// seedRuns is the seed itself: run "unhard" (seed columns 0, 2) and run
// "hard" (columns 1, 3).
func seedRuns() []Run {
	return []Run{
		{Label: "unhard", Dir: "results/unhard", Summary: seedSummary("5.4.0-rc7", [2]int{0, 2}, 0)},
		{Label: "hard", Dir: "results/hard", Summary: seedSummary("5.4.0-rc7-hardened", [2]int{1, 3}, 0)},
	}
}
