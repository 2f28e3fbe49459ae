package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// Options control a run. They hold only what the caller sets; the state a
// run builds up (clock, namespace, summary so far, run-wide logs) lives in
// the run.
type Options struct {
	// AllowDegraded runs without a missing privilege (SCHED_OTHER instead of
	// FIFO, unpinned, memory unlocked) and marks results degraded.
	AllowDegraded bool
	// Unmet are the scenario's requirements this machine does not meet
	// (Requirements, as Unmet.String()), when --allow-degraded runs it
	// anyway: Run marks the summary degraded with one reason each,
	// "requirement not met: …".
	Unmet []string
	// OutDir is the results directory (must exist); per-wakeup logs go there.
	OutDir string
	// Results, when set, is OutDir already open (store.CreateDir): every
	// file goes through it. Otherwise Run opens OutDir with store.OpenDir.
	Results *store.Dir
	// Log receives one line per trial phase; nil discards.
	Log io.Writer
	// Progress, when set, is called about 5 times a second during a trial
	// with the trial index, the number of trials and the fraction done.
	Progress func(trial, trials int, frac float64)
	// NoWakeupLog skips the per-wakeup CSV files.
	NoWakeupLog bool
	// TaskPerfCounters attaches perf_event_open software counters
	// (context-switches, cpu-migrations, page-faults, task-clock) and
	// cycles/instructions where the PMU allows to each reader thread, as
	// before, instead of reading the same quantities from procfs. Task-bound
	// events run perf_event_task_sched_in on every switch onto the reader,
	// inside every wakeup latency (+4–6 µs at p50 measured, bench/GAPS.md):
	// results say so in counters_source.
	TaskPerfCounters bool
	// OnInterval, when set, receives every interval record (soak runs) on
	// the writer goroutine: keep it short.
	OnInterval func(results.Interval)
	// OnCheckpoint, when set, receives the summary so far (InProgress set)
	// after every finished trial but the last, and during a soak trial
	// about every 10 s with the trial as measured so far, so that
	// summary.json can be rewritten and finished trials survive a kill or
	// a failure. It may be called from the trial's writer goroutine. An
	// error (the checkpoint could not be written) ends the run with it, as
	// any results file that cannot be written does.
	OnCheckpoint func(*results.Summary) error
	// GCHeadroom is how far a soak run's heap may grow before its writer
	// collects garbage (bytes); 0 means SoakHeapHeadroom.
	GCHeadroom uint64
	// Exporter, when set, receives every interval (Prometheus endpoint);
	// Kernel labels its run_info.
	Exporter *exporter.Server
	Kernel   string
	// AfterRound, when set, is called after every complete round (each
	// variant of it ran) with the summary so far, on Run's goroutine;
	// returning false ends the run there, as finished (rounds: auto, whose
	// rule lives in compare/auto (Stop); it may fill Summary.Auto).
	AfterRound func(*results.Summary) bool
	// Process is this process's number in a multi-process run (rtload
	// run --processes: a child, 0-based) and Processes their count (0 or
	// 1: a single-process run). Every trial records Process; with
	// Processes > 1 the per-wakeup logs, intervals and spikes files carry
	// the process in their names ("wakeups-p03-…", "spikes-p03.jsonl").
	Process, Processes int
	// Setup randomises the process's setup (socket creation order, receive
	// buffer offsets); the zero Setup randomises nothing.
	Setup Setup
	// AfterProcess, when set, is called by RunProcesses after every child
	// that ran to its end with the merged summary so far and the time
	// since the first started; returning false ends the run there, as
	// finished (rtload check's stop rule: verdict.Check.After).
	AfterProcess func(sum *results.Summary, elapsed time.Duration) bool
	// Replacements, when set, is called by RunProcesses after every child
	// that ran to its end, with the merged summary so far, and says how
	// many fresh processes to run beyond spec.Processes: one in the place
	// of each the machine disturbed, within the run's cap (rtload run
	// --processes: verdict.Replacer). The count only grows.
	Replacements func(sum *results.Summary) int
}

// SoakWakeupLogLimit caps a soak run's per-wakeup log (bytes on disk, per
// reader) unless the scenario sets log_limit (scenario.SoakLogLimit, its
// default for duration 0).
const SoakWakeupLogLimit = int64(scenario.SoakLogLimit)

// SoakHeapHeadroom is how far the heap may grow during a soak trial before
// a garbage collection runs (bytes).
const SoakHeapHeadroom uint64 = 256 << 20

// ErrStopped is returned (wrapped) when ctx ended the run early; the
// summary is complete for what ran. The error wraps ctx's cause too
// (context.Cause), so a caller can tell what stopped it.
var ErrStopped = errors.New("run stopped")

// Run executes trials in order and returns the summary of what ran. When
// ctx is cancelled it stops the current trial cleanly, marks the summary
// Stopped and returns it with an error wrapping ErrStopped. Kernel objects
// are closed on every path.
func Run(ctx context.Context, spec *scenario.Spec, trials []scenario.Trial, opt Options) (*results.Summary, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if err := Preflight(trials, opt.AllowDegraded); err != nil {
		return nil, err
	}
	if err := checkNoiseMemory(trials, hostMem()); err != nil {
		return nil, err
	}
	if err := CheckAddressSpace(trials, opt); err != nil {
		return nil, err
	}
	if err := checkLayouts(trials); err != nil {
		return nil, err
	}
	r, trials, err := newRun(spec, trials, opt)
	if err != nil {
		return nil, err
	}
	defer r.close()
	if note := TracingOff(); note != "" {
		fmt.Fprintf(opt.Log, "note: %s\n", note)
	}
	next, sliced := trialSource(spec, trials)
	r.sliced = sliced
	return r.runTrials(ctx, next)
}

// run is the state one Run shares across its trials. Only the goroutine
// calling Run changes it, between trials; a trial's writer goroutine reads
// sum in checkpoint while the trial runs.
type run struct {
	opt   Options // Log and Results filled in
	clock *rt.Clock
	// ns is the run's private network namespace, nil unless a trial needs
	// network.namespace: private.
	ns *netns.NS
	// sum is the summary so far: finished trials and degraded reasons.
	sum     *results.Summary
	ntrials int
	// base is the Index of the run's first trial: 0, or in a child of a
	// multi-process run its Child.IndexBase (ChildTrials). Progress and
	// the log count trials from it: "trials 1–2/4", never "37–38/4".
	base int
	// intervals and spikes are the run-wide interval and spike logs,
	// opened by the first trial needing each (intervalLog, spikeLog).
	intervals, spikes *safeio.JSONL
	// profiles holds the profiled trials' samples (profile.go); nil
	// without profiled trials.
	profiles *profileSet
	// ownDir is the results directory Run opened (Options.Results unset);
	// oldProcs the GOMAXPROCS to restore (0 = unchanged).
	ownDir   *store.Dir
	oldProcs int
	// allowed are the CPUs this process may use, read before any trial
	// confined its own threads (the housekeeping default's base).
	allowed []int
	// clocksource is the kernel clocksource at the first trial's start:
	// a later trial starting on another one is invalid.
	clocksource string
	// sliced: a soak whose variants alternate in slices (trialSource);
	// the number of trials is not known, and no progress is reported.
	sliced bool
	// rssBase is the process's RSS at the run's first interval record
	// (bytes; 0 until then): a soak's intervals are marked past it plus
	// the GC headroom and RSSSlack (selfWatch, on the writer goroutines of
	// successive trials).
	rssBase int64
}

// newRun opens what every trial of the run shares: the results directory
// (unless the caller passed it), the clock, the profile set, enough Ps for
// every locked thread, and the private namespace. It returns the trials to
// run (profiled ones left out when profiling is refused and degraded runs
// are allowed). On error it has closed what it opened.
func newRun(spec *scenario.Spec, trials []scenario.Trial, opt Options) (*run, []scenario.Trial, error) {
	r := &run{opt: opt, ntrials: len(trials), allowed: sysinfo.AllowedCPUs()}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	if r.opt.Results == nil && r.opt.OutDir != "" {
		d, err := store.OpenDir(r.opt.OutDir)
		if err != nil {
			return nil, nil, err
		}
		r.ownDir, r.opt.Results = d, d
	}
	clock, err := rt.NewClock(clockKind(spec.Clock))
	if err != nil {
		return nil, nil, fmt.Errorf("clock: %w", err)
	}
	r.clock = clock
	ci := clock.Info()
	profs, trials, profDegraded, err := newProfileSet(trials, ci.Hz, opt.AllowDegraded)
	if err != nil {
		return nil, nil, err
	}
	r.profiles, r.ntrials = profs, len(trials)
	if len(trials) > 0 {
		r.base = trials[0].Index
	}
	if opt.Exporter != nil {
		opt.Exporter.SetRunInfo(spec.Name, fmt.Sprintf("%s %.0f Hz", ci.Kind, ci.Hz), opt.Kernel)
	}
	r.sum = &results.Summary{Version: results.SummaryVersion, Scenario: spec.Name, File: spec.File, Start: time.Now(),
		Clock: ci}
	if profDegraded != "" {
		r.sum.Degraded, r.sum.DegradedReasons = true, []string{profDegraded}
	}
	for _, u := range opt.Unmet {
		r.sum.Degraded = true
		r.sum.DegradedReasons = appendUnique(r.sum.DegradedReasons, "requirement not met: "+u)
	}
	if need := gomaxprocsBudget(trials, runtime.NumCPU()); runtime.GOMAXPROCS(0) < need {
		r.oldProcs = runtime.GOMAXPROCS(need)
	}
	if needsNamespace(trials) {
		if r.ns, err = openNamespace(r.opt.Log); err != nil {
			return nil, nil, err
		}
	}
	ok = true
	return r, trials, nil
}

// close releases what newRun and the trials opened for the whole run, in
// reverse order: namespace, GOMAXPROCS, run-wide logs, results directory.
func (r *run) close() {
	if r.ns != nil {
		r.ns.Close()
	}
	if r.oldProcs > 0 {
		runtime.GOMAXPROCS(r.oldProcs)
	}
	r.intervals.Close()
	r.spikes.Close()
	if r.ownDir != nil {
		r.ownDir.Close()
	}
}

// runTrials runs the trials next gives, in order, until there are no
// more, one fails or ctx ends, and returns the summary of what ran.
func (r *run) runTrials(ctx context.Context, next func(i int) (scenario.Trial, bool)) (*results.Summary, error) {
	sum := r.sum
	for i := 0; ; i++ {
		tr, ok := next(i)
		if !ok || ctx.Err() != nil {
			break
		}
		members := groupOf(tr, next, i)
		switch {
		case r.sliced:
			fmt.Fprintf(r.opt.Log, "slice %d: variant %s, for %v (+%v warm-up)\n", i+1, tr.Variant, time.Duration(tr.Spec.Duration), time.Duration(tr.Spec.Warmup))
		case members != nil:
			fmt.Fprint(r.opt.Log, groupLine(members, r.base, r.ntrials))
		default:
			fmt.Fprintf(r.opt.Log, "trial %d/%d: variant %s, round %d\n", i+1, r.ntrials, tr.Variant, tr.Round+1)
		}
		ress, degraded, err := newTrial(r, tr, members).exec(ctx)
		for _, res := range ress {
			switch {
			case res != nil && tr.Profiled:
				sum.ProfiledTrials = append(sum.ProfiledTrials, *res)
				if perr := r.profiles.writeInto(sum, r.opt.Results); perr != nil && err == nil {
					err = perr
				}
			case res != nil:
				sum.Trials = append(sum.Trials, *res)
			}
		}
		if len(members) > 1 { // the group ran as one: go on after its last trial
			i += len(members) - 1
			tr = members[len(members)-1]
		}
		for _, d := range degraded {
			sum.Degraded = true
			sum.DegradedReasons = appendUnique(sum.DegradedReasons, d)
		}
		if err != nil {
			sum.End = time.Now()
			return sum, fmt.Errorf("trial %d (%s, round %d): %w", i+1, tr.Variant, tr.Round+1, err)
		}
		_, more := next(i + 1)
		if r.opt.AfterRound != nil && !r.sliced && ctx.Err() == nil && roundEnds(tr, next, i) && !r.opt.AfterRound(sum) {
			break
		}
		if more && ctx.Err() == nil {
			if err := r.finished(); err != nil {
				sum.End = time.Now()
				return sum, fmt.Errorf("after trial %d (%s, round %d): %w", i+1, tr.Variant, tr.Round+1, err)
			}
		}
	}
	sum.End = time.Now()
	if ctx.Err() != nil {
		now := time.Now()
		sum.Stopped, sum.StoppedAt = true, &now
		return sum, fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx)) // the cause stays matchable (a signal's exit code)
	}
	return sum, nil
}

// groupOf is the interleaved group trial i (tr) begins, its consecutive
// trials of tr's Group (nil when tr runs alone).
func groupOf(tr scenario.Trial, next func(i int) (scenario.Trial, bool), i int) []scenario.Trial {
	if tr.Interleave <= 0 {
		return nil
	}
	members := []scenario.Trial{tr}
	for {
		n, ok := next(i + len(members))
		if !ok || n.Interleave <= 0 || n.Group != tr.Group {
			break
		}
		members = append(members, n)
	}
	if len(members) < 2 {
		return nil
	}
	return members
}

// roundEnds reports whether trial i (tr) is the last of its round.
func roundEnds(tr scenario.Trial, next func(i int) (scenario.Trial, bool), i int) bool {
	n, ok := next(i + 1)
	return !ok || n.Round != tr.Round
}

// trialSource is how a run walks its trials: trials in order, or, in a
// soak (duration 0) whose several variants alternate in slices (slice >
// 0), the first round's trials again and again, A B A B …, until the run
// is stopped (sliced). Slice i is variant i mod n in its round i / n, its
// index i; it measures slice − warm-up after its warm-up, so a slice lasts
// slice (and the start and tail every trial has).
func trialSource(spec *scenario.Spec, trials []scenario.Trial) (next func(i int) (scenario.Trial, bool), sliced bool) {
	if spec.Duration != 0 || len(spec.Variants) < 2 || spec.Slice <= 0 {
		return func(i int) (scenario.Trial, bool) {
			if i >= len(trials) {
				return scenario.Trial{}, false
			}
			return trials[i], true
		}, false
	}
	var round []scenario.Trial
	for _, tr := range trials {
		if tr.Round == 0 && !tr.Profiled {
			round = append(round, tr)
		}
	}
	return func(i int) (scenario.Trial, bool) {
		if len(round) == 0 {
			return scenario.Trial{}, false
		}
		tr := round[i%len(round)]
		tr.Index, tr.Round = i, i/len(round)
		if tr.Spec.Duration == 0 {
			tr.Spec.Duration = tr.Spec.Slice - tr.Spec.Warmup
		}
		return tr, true
	}, true
}

// checkpointer is what a trial's writer calls with the trial so far: the
// run's checkpoint, or nil without Options.OnCheckpoint.
func (r *run) checkpointer() func(results.Trial) error {
	if r.opt.OnCheckpoint == nil {
		return nil
	}
	return r.checkpoint
}

// checkpoint hands the summary so far, with t as its last trial, to
// Options.OnCheckpoint. It runs on a trial's writer goroutine; sum.Trials
// only grows between trials, on Run's goroutine, so reading it here is
// safe.
func (r *run) checkpoint(t results.Trial) error {
	s := *r.sum
	s.Trials = append(slices.Clone(r.sum.Trials), t)
	s.InProgress = true
	s.End = time.Now()
	if err := r.opt.OnCheckpoint(&s); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// finished checkpoints the trials done so far, before the next one.
func (r *run) finished() error {
	if r.opt.OnCheckpoint == nil {
		return nil
	}
	s := *r.sum
	s.Trials = slices.Clone(r.sum.Trials)
	s.InProgress, s.End = true, time.Now()
	if err := r.opt.OnCheckpoint(&s); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// intervalLog is the run's intervals.jsonl, created by the first trial
// asking for it (nil without a results directory).
func (r *run) intervalLog() (*safeio.JSONL, error) {
	if r.intervals == nil && r.opt.Results != nil {
		l, err := r.opt.Results.CreateJSONL(r.opt.processFile(results.IntervalsFile), 0)
		if err != nil {
			return nil, err
		}
		r.intervals = l
	}
	return r.intervals, nil
}

// spikeLog is the run's spikes.jsonl (capped at results.SpikesLimit),
// created by the first trial asking for it (nil without a results
// directory).
func (r *run) spikeLog() (*safeio.JSONL, error) {
	if r.spikes == nil && r.opt.Results != nil {
		l, err := r.opt.Results.CreateJSONL(r.opt.processFile(results.SpikesFile), results.SpikesLimit)
		if err != nil {
			return nil, err
		}
		r.spikes = l
	}
	return r.spikes, nil
}

// checkLayouts refuses a trial whose per-call bucket layout results cannot
// hold, before anything is built.
func checkLayouts(trials []scenario.Trial) error {
	for _, tr := range trials {
		rep := tr.Spec.Report
		if err := results.CheckLayout(rep.BucketWidth, rep.BucketOrigin, rep.Overflow, -1); err != nil {
			return fmt.Errorf("scenario report layout: %w", err)
		}
	}
	return nil
}

// gomaxprocsBudget is the GOMAXPROCS a run needs on a machine of ncpu CPUs:
// every locked thread of its largest trial (readers sleep in raw syscalls
// and keep their P) gets a P of its own, so the Go scheduler never
// multiplexes them and the kernel alone schedules rtload's threads. Per
// trial: ncpu + 4 spare, one per reader and per sender, each noise
// source's worker threads plus one (messaging's round runner; a spare
// otherwise), and one per probe plus, for a messaging probe, its
// 2 × groups × fds hackbench workers, which block in read/write by the
// hundred and so never queue for the runtime's scheduler slots.
func gomaxprocsBudget(trials []scenario.Trial, ncpu int) int {
	need := ncpu + 4
	for _, tr := range trials {
		n := ncpu + 4 + len(tr.Spec.Readers) + len(tr.Spec.Traffic)
		for _, nz := range tr.Spec.Noise {
			n += nz.WorkerThreads() + 1
		}
		for _, p := range tr.Spec.Probes {
			n++
			if p.Kind == scenario.ProbeMessaging {
				n += 2 * p.Groups * p.FDs
			}
		}
		need = max(need, n)
	}
	return need
}

// needsNamespace reports whether any trial runs in a private namespace.
func needsNamespace(trials []scenario.Trial) bool {
	for _, tr := range trials {
		if tr.Spec.Network.Namespace == scenario.NamespacePrivate {
			return true
		}
	}
	return false
}

// openNamespace creates the run's private namespace, first sweeping the
// leftovers of dead runs (a SIGKILLed run cannot clean up after itself);
// it says on log what it removed and which namespace it made.
func openNamespace(log io.Writer) (*netns.NS, error) {
	if removed, err := netns.Sweep(); err != nil {
		fmt.Fprintf(log, "warning: sweeping leftover namespaces: %v\n", err)
	} else {
		for _, e := range removed {
			fmt.Fprintf(log, "removed namespace %s left by a dead run: %s\n", e.Name, e.Why)
		}
	}
	ns, err := netns.New(netns.NewRunID())
	if err != nil {
		return nil, fmt.Errorf("private network namespace: %w", err)
	}
	fmt.Fprintf(log, "network namespace %s\n", ns.Name())
	return ns, nil
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}
