package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// fakeChildren is a Launcher that returns n trials per child, the
// process and index base it was given recorded in each.
func fakeChildren(trials int, fail int, launched *[]Child) Launcher {
	return func(ctx context.Context, c Child) (*results.Summary, int, error) {
		*launched = append(*launched, c)
		s := &results.Summary{Version: results.SummaryVersion, Scenario: "child", Clock: results.ClockInfo{Kind: "tsc", Hz: float64(1e9 + c.Process)}}
		for i := range trials {
			s.Trials = append(s.Trials, results.Trial{Index: c.IndexBase + i, Round: i})
		}
		if c.Process == fail {
			return s, 100 + c.Process, errors.New("boom")
		}
		return s, 100 + c.Process, nil
	}
}

func TestRunProcesses(t *testing.T) {
	spec := &scenario.Spec{Name: "multi", File: "m.yaml", Processes: 3}
	trials := []scenario.Trial{{Index: 0}, {Index: 1}}
	var launched []Child
	var checkpoints int
	sum, err := RunProcesses(context.Background(), spec, trials, Options{OnCheckpoint: func(*results.Summary) error { checkpoints++; return nil }}, 42, fakeChildren(2, -1, &launched))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Trials) != 6 || len(sum.Processes) != 3 || sum.Scenario != "multi" || sum.File != "m.yaml" || checkpoints != 2 {
		t.Fatalf("%d trials, %d processes, scenario %q, %d checkpoints", len(sum.Trials), len(sum.Processes), sum.Scenario, checkpoints)
	}
	for i, tr := range sum.Trials {
		if tr.Process != i/2 || tr.Index != i {
			t.Errorf("trial %d: process %d index %d", i, tr.Process, tr.Index)
		}
	}
	seeds := map[uint64]bool{}
	for p, c := range launched {
		if c.Process != p || c.Processes != 3 || c.IndexBase != 2*p || c.Setup.Seed == 0 || c.EnvPadBytes < 0 || c.EnvPadBytes >= MaxEnvPad {
			t.Errorf("child %d: %+v", p, c)
		}
		seeds[c.Setup.Seed] = true
		if info := sum.Processes[p]; info.PID != 100+p || info.SetupSeed != c.Setup.Seed || info.Trials != 2 || info.Clock.Hz != float64(1e9+p) {
			t.Errorf("process info %d: %+v", p, info)
		}
	}
	if len(seeds) != 3 {
		t.Errorf("setup seeds not drawn apart: %v", seeds)
	}
	// The same seed draws the same setups.
	var again []Child
	if _, err := RunProcesses(context.Background(), spec, trials, Options{}, 42, fakeChildren(2, -1, &again)); err != nil || again[1] != launched[1] {
		t.Errorf("seed 42 again: %+v, want %+v (%v)", again[1], launched[1], err)
	}

	// AfterProcess stops it, as finished.
	launched = nil
	stopAt := 2
	sum, err = RunProcesses(context.Background(), spec, trials, Options{AfterProcess: func(s *results.Summary, _ time.Duration) bool {
		return len(s.Processes) < stopAt
	}}, 1, fakeChildren(2, -1, &launched))
	if err != nil || len(launched) != 2 || len(sum.Processes) != 2 || sum.Stopped {
		t.Errorf("AfterProcess: %d launched, %v, stopped %v", len(launched), err, sum.Stopped)
	}

	// A failing child ends the run with its error, its trials kept.
	launched = nil
	sum, err = RunProcesses(context.Background(), spec, trials, Options{}, 1, fakeChildren(2, 1, &launched))
	if err == nil || len(launched) != 2 || len(sum.Trials) != 4 || sum.Processes[1].Error != "boom" {
		t.Errorf("failing child: err %v, %d launched, %d trials", err, len(launched), len(sum.Trials))
	}

	// A cancelled run is stopped.
	ctx, cancel := context.WithCancel(context.Background())
	launched = nil
	sum, err = RunProcesses(ctx, spec, trials, Options{AfterProcess: func(*results.Summary, time.Duration) bool { cancel(); return true }}, 1, fakeChildren(2, -1, &launched))
	if !errors.Is(err, ErrStopped) || !sum.Stopped || len(launched) != 1 {
		t.Errorf("cancelled: err %v stopped %v, %d launched", err, sum.Stopped, len(launched))
	}
}

// TestRunProcessesReplacements: Replacements adds children in the place
// of disturbed ones, numbered on; a count that falls never removes one.
func TestRunProcessesReplacements(t *testing.T) {
	spec := &scenario.Spec{Name: "multi", Processes: 3}
	trials := []scenario.Trial{{Index: 0}, {Index: 1}}
	var launched []Child
	counts := []int{0, 1, 1, 0, 0} // after each child: process 2 was disturbed
	sum, err := RunProcesses(context.Background(), spec, trials, Options{Replacements: func(s *results.Summary) int {
		return counts[len(s.Processes)-1]
	}}, 1, fakeChildren(2, -1, &launched))
	if err != nil || len(launched) != 4 || len(sum.Processes) != 4 || len(sum.Trials) != 8 {
		t.Fatalf("err %v, %d launched, %d processes, %d trials: want 4 (3 and one in the place of a disturbed one)", err, len(launched), len(sum.Processes), len(sum.Trials))
	}
	if c := launched[3]; c.Process != 3 || c.IndexBase != 6 {
		t.Errorf("the replacement: %+v", c)
	}
}

func TestSetup(t *testing.T) {
	if (Setup{}).SocketOrder(0, 5) != nil || (Setup{}).BufOffset(0) != 0 {
		t.Error("the zero Setup randomises")
	}
	s := Setup{Seed: 7}
	o := s.SocketOrder(0, 450)
	seen := make([]bool, 450)
	for _, i := range o {
		seen[i] = true
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("order misses socket %d", i)
		}
	}
	if o2 := s.SocketOrder(0, 450); o2[0] != o[0] || o2[449] != o[449] {
		t.Error("the same seed draws another order")
	}
	for i := range 20 {
		if off := s.BufOffset(i); off%64 != 0 || off < 0 || off >= 4096 {
			t.Errorf("offset %d", off)
		}
	}
	if (Options{Processes: 3, Process: 2}).processFile(results.SpikesFile) != "spikes-p02.jsonl" || (Options{}).processFile(results.SpikesFile) != results.SpikesFile {
		t.Error("processFile")
	}
	if (Options{Processes: 3, Process: 2}).logPrefix() != "p02-" || (Options{}).logPrefix() != "" {
		t.Error("logPrefix")
	}
}

// hangup is a stop cause that a caller matches with errors.As (a
// signal's exit code).
type hangup struct{}

func (hangup) Error() string { return "signal SIGHUP" }

// TestRunProcessesStopCause (issue 34 row 5): a run stopped while a child
// runs keeps ctx's cause matchable whatever the child returned, its
// trials and Stopped set: the child stopped too (its error wrapping
// ErrStopped), or failed as the run was stopped (killed by the same
// hangup); a child stopped alone (ctx not done) ends the run as
// stopped.
func TestRunProcessesStopCause(t *testing.T) {
	spec := &scenario.Spec{Name: "multi", Processes: 3}
	trials := []scenario.Trial{{Index: 0}}
	for _, tc := range []struct {
		name    string
		err     error // the child's
		cancel  bool  // ctx cancelled with hangup{} while the child runs
		trials  int
		wantHUP bool
	}{
		{"child stopped with the run", fmt.Errorf("%w: signal SIGINT or SIGTERM (exit 130)", ErrStopped), true, 1, true},
		{"child killed as the run stopped", errors.New("killed by SIGHUP"), true, 0, true},
		{"child stopped alone", fmt.Errorf("%w: %w", ErrStopped, hangup{}), false, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			launched := 0
			sum, err := RunProcesses(ctx, spec, trials, Options{}, 1, func(ctx context.Context, c Child) (*results.Summary, int, error) {
				launched++
				if tc.cancel {
					cancel(hangup{})
				}
				var s *results.Summary
				if tc.trials > 0 {
					s = &results.Summary{Version: results.SummaryVersion, Stopped: true, Trials: []results.Trial{{Index: c.IndexBase}}}
				}
				return s, 100, tc.err
			})
			if !errors.Is(err, ErrStopped) || errors.As(err, new(hangup)) != tc.wantHUP {
				t.Errorf("err %v: want ErrStopped with the cause hangup matchable", err)
			}
			if launched != 1 {
				t.Errorf("%d children launched after the stop, want 1", launched)
			}
			if tc.trials > 0 && (sum == nil || !sum.Stopped || len(sum.Trials) != tc.trials) {
				t.Errorf("summary %+v: want %d trial(s), stopped", sum, tc.trials)
			}
		})
	}
}
