package report

import (
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// Seed layout: 128-wide buckets from 64, overflow at 8256 (64 buckets + the
// [0,64) bucket).
const (
	seedWidth    = 128
	seedOrigin   = 64
	seedOverflow = 8256
)

// seedSnapshot builds the Snapshot of seed column col (0 recvfrom unhard,
// 1 recvfrom hard, 2 recvmsg unhard, 3 recvmsg hard), keeping buckets for
// which keep(lower) is true and scaling each count by part(n). Sum assumes
// every sample sits mid-bucket and overflow samples at 12000.
func seedSnapshot(col int, keep func(lower uint64) bool, part func(n uint64) uint64, withOverflow bool) record.Snapshot {
	s := record.Snapshot{
		Unit: "TSC ticks", Width: seedWidth, Origin: seedOrigin, Overflow: seedOverflow,
		Counts: make([]uint64, 1+(seedOverflow-seedOrigin)/seedWidth),
	}
	for _, r := range seedRows {
		if !keep(r.Lower) {
			continue
		}
		n := part(r.N[col])
		i := 1 + (r.Lower-seedOrigin)/seedWidth
		s.Counts[i] += n
		s.Total += n
		s.Sum += n * (r.Lower + seedWidth/2)
		if n > 0 {
			if s.Min == 0 || r.Lower+5 < s.Min {
				s.Min = r.Lower + 5
			}
			s.Max = max(s.Max, r.Lower+100)
		}
	}
	if withOverflow {
		n := part(seedOverflowRow[col])
		s.OverflowCount = n
		s.Total += n
		s.Sum += n * 12000
		if n > 0 {
			s.Max = 48211
		}
	}
	return s
}

func all(uint64) bool           { return true }
func whole(n uint64) uint64     { return n }
func firstHalf(n uint64) uint64 { return n / 2 }
func lastHalf(n uint64) uint64  { return n - n/2 }

// eagainBelow splits the seed's two peaks: calls under 2368 ticks are the
// cheap EAGAIN calls of the fixture, the rest data calls.
func eagain(lower uint64) bool { return lower < 2368 }
func data(lower uint64) bool   { return lower >= 2368 }

// latencyNs builds a Latency from an HDR holding n samples base, base+step, ….
func latencyNs(n int, base, step int64) results.Latency {
	h := record.NewHDR(10_000_000_000)
	for i := range n {
		h.RecordSigned(base + int64(i)*step)
	}
	return results.LatencyFromHDR(h.Histogram())
}

// fixture is a Summary of 2 variants (recvfrom, recvmsg: the seed's
// "hard" columns) × 2 rounds, run A B A B; each round holds half the
// seed's counts, so the merged tables reproduce the seed's columns.
func fixture() *results.Summary {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &results.Summary{
		Version:  results.SummaryVersion,
		Scenario: "laight-450",
		File:     "configs/laight-450.yaml",
		Spec:     map[string]any{"name": "laight-450", "period": "10ms"},
		Env:      map[string]any{"kernel": "6.12.0", "cpus": float64(8)},
		Start:    start,
		End:      start.Add(85 * time.Second),
		Clock: results.ClockInfo{
			Kind: "tsc", Unit: "TSC ticks", Hz: 2.095e9, Invariant: true,
			Note: "TSC frequency from CPUID leaf 0x15; TSC ticks are not core cycles",
		},
	}
	for i, tr := range []struct {
		variant string
		round   int
		col     int
		part    func(uint64) uint64
	}{
		{"recvfrom", 1, 1, firstHalf},
		{"recvmsg", 1, 3, firstHalf},
		{"recvfrom", 2, 1, lastHalf},
		{"recvmsg", 2, 3, lastHalf},
	} {
		all := seedSnapshot(tr.col, all, tr.part, true)
		eag := seedSnapshot(tr.col, eagain, tr.part, false)
		dat := seedSnapshot(tr.col, data, tr.part, true)
		extra := int64(tr.col * 1000) // recvmsg a little slower
		r := results.Reader{
			Name: "drain", Method: tr.variant, Sockets: 450, Endpoint: "lo450",
			Applied: results.Applied{TID: 4242 + i, Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}, Mlocked: true},
			Calls:   all.Total, Data: dat.Total, EAGAIN: eag.Total,
			Messages: dat.Total, Bytes: dat.Total * 64,
			Lost: uint64(tr.col), Reordered: 0, Duplicates: 0, Drops: uint64(tr.col / 3),
			SocketsRead: 450 - tr.col/3, RcvBuf: 212992,
			Wakeups: 1000, Overruns: uint64(tr.round - 1), RingDropped: 0,
			PerCall:       results.PerCall{Unit: "TSC ticks", All: all, Data: dat, EAGAIN: eag},
			WakeupLatency: latencyNs(1000, 2_000+extra, 37),
			Drain:         latencyNs(1000, 700_000+100*extra, 211),
			OneWayDelay:   latencyNs(1000, 5_000_000, 9_000),
		}
		s.Trials = append(s.Trials, results.Trial{
			Index: i, Round: tr.round, Variant: tr.variant,
			Overrides:  map[string]string{"readers[0].method": tr.variant},
			DurationNs: int64(20 * time.Second),
			GCBefore:   3, GCAfter: 3,
			Readers: []results.Reader{r},
			Traffic: []results.Traffic{{
				Endpoint: "lo450", Sockets: 450, Sent: dat.Total + uint64(tr.col),
				TargetRate: 22500, AchievedRate: 22499.5, InFlight: 0,
				SendLag: latencyNs(100, 1000, 10),
			}},
			Noise: []results.Noise{
				{Kind: "spin", Threads: 5, Unit: "loops", Count: 4_000_000_000, Seconds: 20, PerSec: 2e8},
			},
			WakeupLog: []string{"wakeups-" + tr.variant + "-r" + string(rune('0'+tr.round)) + ".csv"},
		})
	}
	return s
}
