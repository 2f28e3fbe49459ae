package view

import (
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

// seedSummary is testutil.SeedRun.
func seedSummary(kernel string, cols [2]int, shift int) *results.Summary {
	return testutil.SeedRun(kernel, cols, shift)
}

// seedRuns is the seed itself: run "unhard" (seed columns 0, 2) and run
// "hard" (columns 1, 3).
func seedRuns() []compare.Run {
	return []compare.Run{
		{Label: "unhard", Dir: "results/unhard", Summary: seedSummary("5.4.0-rc7", [2]int{0, 2}, 0)},
		{Label: "hard", Dir: "results/hard", Summary: seedSummary("5.4.0-rc7-hardened", [2]int{1, 3}, 0)},
	}
}
