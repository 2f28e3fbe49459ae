package testutil

import (
	"fmt"
	"sync"
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// Seed layout: 128-wide buckets from 64, overflow at 8256 (64 buckets + the
// [0,64) bucket).
const (
	SeedWidth    = 128
	SeedOrigin   = 64
	SeedOverflow = 8256
)

// SeedSnapshot builds the Snapshot of seed column col (0 recvfrom unhard,
// 1 recvfrom hard, 2 recvmsg unhard, 3 recvmsg hard), keeping buckets for
// which keep(lower) is true and scaling each count by part(n). Sum assumes
// every sample sits mid-bucket and overflow samples at 12000.
func SeedSnapshot(col int, keep func(lower uint64) bool, part func(n uint64) uint64, withOverflow bool) record.Snapshot {
	s := record.Snapshot{
		Unit: "TSC ticks", Width: SeedWidth, Origin: SeedOrigin, Overflow: SeedOverflow,
		Counts: make([]uint64, 1+(SeedOverflow-SeedOrigin)/SeedWidth),
	}
	for _, r := range Seed000 {
		if !keep(r.Lower) {
			continue
		}
		n := part(r.N[col])
		i := 1 + (r.Lower-SeedOrigin)/SeedWidth
		s.Counts[i] += n
		s.Total += n
		s.Sum += n * (r.Lower + SeedWidth/2)
		if n > 0 {
			if s.Min == 0 || r.Lower+5 < s.Min {
				s.Min = r.Lower + 5
			}
			s.Max = max(s.Max, r.Lower+100)
		}
	}
	if withOverflow {
		n := part(Seed000Overflow[col])
		s.OverflowCount = n
		s.Total += n
		s.Sum += n * 12000
		if n > 0 {
			s.Max = 48211
		}
	}
	return s
}

// Helpers for SeedSnapshot: every bucket, whole counts or halves, and the
// seed's two peaks (calls under 2368 ticks are the cheap EAGAIN calls of
// the fixture, the rest data calls).
func SeedAll(uint64) bool           { return true }
func SeedWhole(n uint64) uint64     { return n }
func SeedFirstHalf(n uint64) uint64 { return n / 2 }
func SeedLastHalf(n uint64) uint64  { return n - n/2 }
func SeedEAGAIN(lower uint64) bool  { return lower < 2368 }
func SeedData(lower uint64) bool    { return lower >= 2368 }

// SeedSummary is a Summary of 2 variants (recvfrom, recvmsg: the seed's
// "hard" columns) × 2 rounds, run A B A B; each round holds half the
// seed's counts, so the merged tables reproduce the seed's columns.
func SeedSummary() *results.Summary {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &results.Summary{
		Version:  results.SummaryVersion,
		Scenario: "laight-450",
		File:     "configs/laight-450.yaml",
		Spec:     results.Spec(`{"name":"laight-450","period":"10ms"}`),
		Env:      results.Env{Kernel: "6.12.0", CPUs: 8},
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
		{"recvfrom", 1, 1, SeedFirstHalf},
		{"recvmsg", 1, 3, SeedFirstHalf},
		{"recvfrom", 2, 1, SeedLastHalf},
		{"recvmsg", 2, 3, SeedLastHalf},
	} {
		all := SeedSnapshot(tr.col, SeedAll, tr.part, true)
		eag := SeedSnapshot(tr.col, SeedEAGAIN, tr.part, false)
		dat := SeedSnapshot(tr.col, SeedData, tr.part, true)
		extra := int64(tr.col * 1000) // recvmsg a little slower
		r := results.Reader{
			Name: "drain", Method: tr.variant, Sockets: 450, Endpoint: "lo450",
			Applied: results.Applied{Thread: results.Thread{TID: 4242 + i, Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}, Mlocked: true},
			Calls:   all.Total, Data: dat.Total, EAGAIN: eag.Total,
			Messages: dat.Total, Bytes: dat.Total * 64,
			Lost: uint64(tr.col), Reordered: 0, Duplicates: 0, Drops: uint64(tr.col / 3),
			SocketsRead: 450 - tr.col/3, RcvBuf: 212992,
			Wakeups: 1000, Overruns: uint64(tr.round - 1), RingDropped: 0,
			PerCall:       results.PerCall{Unit: "TSC ticks", All: all, Data: dat, EAGAIN: eag},
			PerCallTicks:  TickStatsOfSnapshot(all),
			WakeupLog:     []string{results.WakeupLogBase(i, tr.variant, tr.round, "drain") + ".csv"},
			WakeupLatency: Latency(1000, 2_000+extra, 37),
			Drain:         Latency(1000, 700_000+100*extra, 211),
			OneWayDelay:   Latency(1000, 5_000_000, 9_000),
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
				SendLag: Latency(100, 1000, 10),
			}},
			Noise: []results.Noise{
				{Kind: "spin", Threads: 5, Unit: "loops", Count: 4_000_000_000, Seconds: 20, PerSec: 2e8},
			},
		})
	}
	s.Plan = results.PlanOf(s.Spec)
	return s
}

// TickStatsOfSnapshot is the TickStats (with HDR) of the samples a linear
// snapshot holds, as SeedSnapshot places them: each bucket's at its
// middle, the overflow bucket's at 12000, and one sample each at the
// snapshot's Min and Max.
func TickStatsOfSnapshot(s record.Snapshot) results.TickStats {
	key := fmt.Sprint(s.Width, s.Origin, s.Overflow, s.Counts, s.OverflowCount, s.Min, s.Max)
	tickStatsMu.Lock()
	defer tickStatsMu.Unlock()
	if t, ok := tickStatsCache[key]; ok {
		return t
	}
	t := tickStatsOfSnapshot(s)
	tickStatsCache[key] = t
	return t
}

// The seed's columns hold millions of samples: record each once per test binary.
var (
	tickStatsMu    sync.Mutex
	tickStatsCache = map[string]results.TickStats{}
)

func tickStatsOfSnapshot(s record.Snapshot) results.TickStats {
	h := record.NewHDR(1 << 40)
	rest := s.Total
	if s.Total > 0 {
		h.Record(s.Min)
		rest--
	}
	if s.Total > 1 {
		h.Record(s.Max)
		rest--
	}
	for i, c := range s.Counts {
		mid := s.Lower(i) + s.Width/2
		for ; c > 0 && rest > 0; c-- {
			h.Record(mid)
			rest--
		}
	}
	for ; rest > 0; rest-- {
		h.Record(12000)
	}
	return results.TickStatsOf(h, true)
}
