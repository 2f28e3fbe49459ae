package engine

import (
	"context"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// TestAfterRound: the hook runs after every complete round (each variant
// of it ran) and ends the run, as finished, when it says so.
func TestAfterRound(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, trials := load(t, `
name: e2e-rounds
duration: 100ms
rounds: 5
readers:
  - {name: timer, cpu: 1, period: 10ms}
variants:
  - {name: a, set: {readers[0].period: 10ms}}
  - {name: b, set: {readers[0].period: 5ms}}
`)
	var seen []int
	opt := Options{OutDir: t.TempDir(), AfterRound: func(s *results.Summary) bool {
		seen = append(seen, len(s.Trials))
		return len(seen) < 2
	}}
	sum, err := Run(context.Background(), spec, trials, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Called after trials 2 and 4 (rounds 1 and 2 complete), then stopped.
	if len(seen) != 2 || seen[0] != 2 || seen[1] != 4 || len(sum.Trials) != 4 || sum.Stopped {
		t.Errorf("hook saw %v trials, summary has %d (stopped %v), want [2 4] and 4", seen, len(sum.Trials), sum.Stopped)
	}
	// Round 1 (the second) runs ABBA's B A: it ends with a.
	if sum.Trials[2].Variant != "b" || sum.Trials[3].Variant != "a" || sum.Trials[3].Round != 1 {
		t.Errorf("round 1: %s then %s (round %d), want b then a, round 1", sum.Trials[2].Variant, sum.Trials[3].Variant, sum.Trials[3].Round)
	}
}
