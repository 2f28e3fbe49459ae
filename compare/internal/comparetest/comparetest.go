// Package comparetest holds the fixtures the tests of compare's
// subpackages share (compare/view, compare/facts, compare/load,
// compare/auto): the seed's two runs, a rounds run, drift controls, an
// interleaved run and a sessions directory. Only tests import it.
//
// Package compare's own internal tests (package compare) cannot import it,
// since it imports compare: they keep their own copies.
package comparetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// Near reports whether a and b are within tol of each other.
func Near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Mkdir makes d and its parents.
func Mkdir(d string) error { return os.MkdirAll(d, 0o755) }

// SeedRuns is the seed itself: run "unhard" (seed columns 0, 2) and run
// "hard" (columns 1, 3).
func SeedRuns() []compare.Run {
	return []compare.Run{
		{Label: "unhard", Dir: "results/unhard", Summary: testutil.SeedRun("5.4.0-rc7", [2]int{0, 2}, 0)},
		{Label: "hard", Dir: "results/hard", Summary: testutil.SeedRun("5.4.0-rc7-hardened", [2]int{1, 3}, 0)},
	}
}

// RoundsRun is a run with one reader metric per round (Welch) and a
// file_write probe (testutil.RoundsRun).
func RoundsRun(label string, costs, kbps []float64) compare.Run {
	return compare.Run{Label: label, Summary: testutil.RoundsRun(costs, kbps)}
}

// WithControls gives every reader of s drift controls: trial i's null
// syscall null(i) and user loop loop(i) ticks on average, and every
// interleaved block the same means (its sums over 640 calls each).
func WithControls(s *results.Summary, null, loop func(i int) float64) *results.Summary {
	for i := range s.Trials {
		t := &s.Trials[i]
		for r := range t.Readers {
			t.Readers[r].Controls = &results.Controls{PerTick: 64, UserLoopIters: 180,
				NullSyscall: results.TickStats{Count: 6400, MeanTicks: null(i)}, UserLoop: results.TickStats{Count: 6400, MeanTicks: loop(i)}}
		}
		if il := t.Interleave; il != nil {
			for b := range il.Blocks {
				il.Blocks[b].Controls = &results.BlockControls{NullCalls: 640, NullSumTicks: uint64(640 * null(i)), LoopCalls: 640, LoopSumTicks: uint64(640 * loop(i))}
			}
		}
	}
	return s
}

// InterleavedSummary is testutil.SeedRun with its two trials interleaved
// in one group: pairs blocks of 1000 calls each in ABBA order, recvfrom
// at 1000 + 10·(i mod 3) ticks per call in pair i and recvmsg 8% above
// it, times 1 + 1%·x, x standard normal (a fixed seed).
func InterleavedSummary(pairs int) *results.Summary {
	s := testutil.SeedRun("6.1", [2]int{0, 2}, 0)
	order := []string{"recvfrom", "recvmsg", "recvmsg", "recvfrom"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range s.Trials {
		s.Trials[i].Interleave = &results.Interleave{Group: 0, BlockNs: 1e8, WindowNs: int64(2*pairs) * 1e8, Order: order}
	}
	for seq := range 2 * pairs {
		pair := seq / 2
		base := 1000 + 10*float64(pair%3)
		v, mean := order[seq%4], base
		if v == "recvmsg" {
			mean = base * 1.08 * (1 + 0.01*rng.NormFloat64())
		}
		b := results.Block{Seq: seq, StartNs: int64(seq) * 1e8, EndNs: int64(seq+1) * 1e8, Ticks: 10, Calls: 1000, EAGAIN: 500, Data: 500,
			SumTicks: uint64(math.Round(mean * 1000))}
		t := &s.Trials[map[string]int{"recvfrom": 0, "recvmsg": 1}[v]]
		t.Interleave.Blocks = append(t.Interleave.Blocks, b)
	}
	return s
}

// SessionsDir writes a sessions directory of n sessions, each
// testutil.ProcessRun (seed columns cols, 2 processes × 2 rounds), the
// k-th session's per-call costs scaled by boot[k] (its boot effect), each
// in a boot of its own.
func SessionsDir(t *testing.T, cols [2]int, boot []float64) string {
	return SessionsDirWith(t, cols, boot, nil)
}

// SessionsDirWith is SessionsDir with drift controls when null is set:
// session k's null syscall null(k) ticks, its user loop 570.
func SessionsDirWith(t *testing.T, cols [2]int, boot []float64, null func(k int) float64) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "base")
	for k, f := range boot {
		s, err := store.OpenSessions(base)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		d, err := store.CreateNewDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		jitter := []float64{f * 1.00, f * 1.01, f * 0.99, f * 1.02, f * 0.98, f * 1.0, f * 1.005, f * 0.995}
		sum := testutil.ProcessRun("6.1.0", cols, 0, 2, jitter)
		sum.Env.BootID = fmt.Sprintf("00000000-0000-0000-0000-%012d", k)
		for i := range sum.Trials {
			sum.Trials[i].Readers[0].WakeupLog = nil
		}
		if null != nil {
			WithControls(sum, func(i int) float64 { return null(k) * (1 + 0.002*float64(i%3)) }, func(int) float64 { return 570 })
		}
		testutil.WriteSummary(t, dir, sum)
		if err := s.Add(dir, sum); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	return base
}
