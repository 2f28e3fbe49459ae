package testutil

import (
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// Runs for the readers of results (compare, verdict): summaries built in
// memory from seed 000's table or from per-round values, the same on
// every run of a test.

// Seed layout of SeedShifted: 128-wide buckets from 64, overflow at 8256.
const (
	seedWidth    = 128
	seedOrigin   = 64
	seedOverflow = 8256
)

// SeedShifted is seed column col (0 recvfrom unhard, 1 recvfrom hard, 2
// recvmsg unhard, 3 recvmsg hard) with every bucket moved up by shift
// buckets (counts pushed past the last bucket land in overflow). Sum
// assumes samples mid-bucket and overflow samples at 12000.
func SeedShifted(col, shift int) record.Snapshot {
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
	for _, r := range Seed000 {
		add(1+int((r.Lower-seedOrigin)/seedWidth)+shift, r.N[col])
	}
	add(len(s.Counts), Seed000Overflow[col])
	return s
}

// SeedRun is one run of the seed's two variants (recvfrom, recvmsg) on
// one kernel: cols are the seed columns of recvfrom and recvmsg, one
// round each, per-call buckets moved up by shift (SeedShifted).
func SeedRun(kernel string, cols [2]int, shift int) *results.Summary {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &results.Summary{
		Version: results.SummaryVersion, Scenario: "laight-450", File: "configs/laight-450.yaml",
		Spec:  results.Spec(`{"name":"laight-450","period":"10ms","readers":[{"cpu":1}]}`),
		Env:   results.Env{Kernel: kernel, CPUModel: "Intel(R) Core(TM) i7-3770", Clocksource: "tsc", Cmdline: "quiet"},
		Start: start, End: start.Add(45 * time.Second),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 3.4e9, Invariant: true},
	}
	for i, v := range []string{"recvfrom", "recvmsg"} {
		all := SeedShifted(cols[i], shift)
		s.Trials = append(s.Trials, results.Trial{
			Index: i, Round: 0, Variant: v,
			Readers: []results.Reader{{
				Name: "rt", Method: v, Sockets: 450, Calls: all.Total,
				PerCall:       results.PerCall{Unit: "TSC ticks", All: all},
				WakeupLatency: Latency(1000, 2_000+int64(shift)*100, 37),
				Drain:         Latency(1000, 700_000, 211),
				WakeupLog:     []string{"wakeups-" + v + ".csv"},
			}},
		})
	}
	return s
}

// ProcessRun is SeedRun as procs processes × 2 rounds, each trial's
// per-call sum scaled by its own factor from jitter (a fixed pattern, so
// that the intervals are the same on every run of a test).
func ProcessRun(kernel string, cols [2]int, shift, procs int, jitter []float64) *results.Summary {
	one := SeedRun(kernel, cols, shift)
	s := *one
	s.Trials = nil
	for p := range procs {
		for r := range 2 {
			for v := range one.Trials {
				t := one.Trials[v]
				t.Readers = append([]results.Reader(nil), t.Readers...)
				i := len(s.Trials)
				t.Index, t.Round, t.Process = i, p*2+r, p
				all := t.Readers[0].PerCall.All
				all.Sum = uint64(float64(all.Sum) * jitter[i%len(jitter)])
				t.Readers[0].PerCall.All = all
				s.Trials = append(s.Trials, t)
			}
		}
	}
	return &s
}

// RoundsRun is a run of one process with one round per costs entry: a
// reader "rt" of variant "v" whose every call costs costs[i] ns (100
// calls, a 10 ns linear histogram; clock monotonic), i messages lost, and
// a file_write probe "fstime" of kbps[i] KB/s.
func RoundsRun(costs, kbps []float64) *results.Summary {
	s := &results.Summary{Version: 1, Scenario: "x", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	for i, c := range costs {
		h := record.NewLinear(10, 0, 10_000)
		for range 100 {
			h.Record(uint64(c))
		}
		s.Trials = append(s.Trials, results.Trial{Index: i, Round: i, Variant: "v",
			Readers: []results.Reader{{Name: "rt", Lost: uint64(i), PerCall: results.PerCall{All: h.Snapshot("ns")}}},
			Probes:  []results.Probe{{Name: "fstime", Kind: "file_write", FileWrite: &results.FileWriteResult{KBps: kbps[i]}}},
		})
	}
	return s
}
