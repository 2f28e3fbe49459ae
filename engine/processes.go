package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// Child is one process of a multi-process run as the caller launches it:
// a fresh rtload (re-executed from /proc/self/exe) running the whole plan
// with Setup and its environment padded by EnvPadBytes, writing its files
// into the run's results directory and returning its summary.
type Child struct {
	Process, Processes int
	// IndexBase numbers the child's trials: its trial i is trial
	// IndexBase + i of the run (unique per-wakeup log names).
	IndexBase   int
	Setup       Setup
	EnvPadBytes int
}

// Launcher runs one child to its end and returns its summary (nil when it
// measured nothing) and its error; ctx ending asks it to stop as Ctrl-C
// does (it still returns what it measured).
type Launcher func(ctx context.Context, c Child) (sum *results.Summary, pid int, err error)

// MaxEnvPad bounds a child's environment padding (bytes), as hyperfine
// varies its environment size to move the stack.
const MaxEnvPad = 4096

// RunProcesses runs spec's plan (trials) in spec.Processes fresh child
// processes one after the other, each launched by launch with its setup
// drawn from seed (Setup seeds and environment padding; a seed of 0 draws
// one from the clock), and merges their trials into one summary
// (Trial.Process set, Summary.Processes describing each). After every
// child but the last opt.OnCheckpoint receives the merged summary so far,
// and opt.Replacements may add children in the place of disturbed ones.
// It stops at the first child that fails or when ctx ends, returning what
// ran (Stopped set when ctx ended).
func RunProcesses(ctx context.Context, spec *scenario.Spec, trials []scenario.Trial, opt Options, seed uint64, launch Launcher) (*results.Summary, error) {
	if opt.Log == nil {
		opt.Log = discard{}
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := spec.Processes
	var sum *results.Summary
	first := time.Now()
	for p := 0; p < n; p++ {
		if ctx.Err() != nil {
			break
		}
		c := Child{Process: p, Processes: n, IndexBase: p * len(trials), Setup: Setup{Seed: rng.Uint64() | 1}, EnvPadBytes: rng.IntN(MaxEnvPad)}
		fmt.Fprintf(opt.Log, "process %d/%d: %d trials (setup seed %#x, environment padded by %d bytes)\n", p+1, n, len(trials), c.Setup.Seed, c.EnvPadBytes)
		start := time.Now()
		part, pid, err := launch(ctx, c)
		info := results.ProcessInfo{Process: p, PID: pid, SetupSeed: c.Setup.Seed, EnvPadBytes: c.EnvPadBytes, Start: start, End: time.Now()}
		if err != nil {
			info.Error = err.Error()
		}
		sum = mergeProcess(sum, part, info)
		if sum != nil {
			sum.Scenario, sum.File = spec.Name, spec.File
		}
		if err != nil {
			if sum != nil {
				sum.End = time.Now()
			}
			if ctx.Err() != nil {
				// The run is being stopped: the child stopped too, or failed
				// as it was (killed by the same hangup before its handlers
				// were in place). A stopped run with ctx's cause; the
				// child's end is in its ProcessInfo.
				if sum != nil && !sum.Stopped {
					now := time.Now()
					sum.Stopped, sum.StoppedAt = true, &now
				}
				if errors.Is(err, ErrStopped) {
					return sum, fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx))
				}
				return sum, fmt.Errorf("%w: %w (process %d of %d: %v)", ErrStopped, context.Cause(ctx), p+1, n, err)
			}
			return sum, fmt.Errorf("process %d of %d: %w", p+1, n, err)
		}
		if opt.Replacements != nil && sum != nil && ctx.Err() == nil {
			n = max(n, spec.Processes+opt.Replacements(sum))
		}
		if opt.AfterProcess != nil && sum != nil && ctx.Err() == nil && !opt.AfterProcess(sum, time.Since(first)) {
			break
		}
		if p < n-1 && opt.OnCheckpoint != nil && sum != nil && ctx.Err() == nil {
			s := *sum
			s.Trials = slices.Clone(sum.Trials)
			s.InProgress, s.End = true, time.Now()
			if err := opt.OnCheckpoint(&s); err != nil {
				// As in one process: a checkpoint that cannot be written ends the run.
				sum.End = time.Now()
				return sum, fmt.Errorf("process %d of %d: checkpoint: %w", p+1, n, err)
			}
		}
	}
	if sum != nil {
		sum.End = time.Now()
		if ctx.Err() != nil && !sum.Stopped {
			now := time.Now()
			sum.Stopped, sum.StoppedAt = true, &now
		}
	}
	if ctx.Err() != nil {
		return sum, fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx)) // the cause stays matchable (a signal's exit code)
	}
	return sum, nil
}

// mergeProcess adds child part (process info.Process) to sum: its trials
// with Process set, its degraded reasons, its stop; the first child's
// clock and start become the run's.
func mergeProcess(sum, part *results.Summary, info results.ProcessInfo) *results.Summary {
	if part == nil {
		if sum != nil {
			sum.Processes = append(sum.Processes, info)
		}
		return sum
	}
	info.Clock, info.Trials = part.Clock, len(part.Trials)
	if sum == nil {
		s := *part
		s.Trials, s.ProfiledTrials, s.Processes = nil, nil, nil
		s.DegradedReasons = slices.Clone(part.DegradedReasons)
		sum = &s
	}
	for _, t := range part.Trials {
		t.Process = info.Process
		sum.Trials = append(sum.Trials, t)
	}
	for _, d := range part.DegradedReasons {
		sum.DegradedReasons = appendUnique(sum.DegradedReasons, d)
	}
	sum.Degraded = sum.Degraded || part.Degraded
	if part.Stopped {
		sum.Stopped, sum.StoppedAt = true, part.StoppedAt
	}
	sum.InProgress = false
	sum.Processes = append(sum.Processes, info)
	return sum
}

// ChildTrials renumbers trials for child c: trial i becomes IndexBase + i
// (an interleaved group's Group with it).
func ChildTrials(trials []scenario.Trial, c Child) []scenario.Trial {
	out := slices.Clone(trials)
	for i := range out {
		out[i].Index = c.IndexBase + i
		if out[i].Interleave > 0 {
			out[i].Group += c.IndexBase // the Index of its group's first trial, renumbered too
		}
	}
	return out
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
