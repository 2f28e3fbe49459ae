package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/sysinfo"
	"github.com/rtload/rtload/verdict"
)

// Options are how a session runs its plan: what the command's flags
// give beside the scenario's overrides.
type Options struct {
	// Out is the results directory (--out): a new path, or an empty
	// directory of the user's; "" for rtload-results/<scenario>-<time>.
	Out           string
	AllowDegraded bool
	NoWakeupLog   bool
	TaskPerf      bool
	// Quiet: no progress bar, and the children's phase logs discarded.
	Quiet bool
	// MetricsAddr (--metrics-addr) serves Prometheus metrics; "" none.
	MetricsAddr string
	// AfterProcess is engine.Options.AfterProcess: check's stop rule,
	// looked at after each process; nil for a run.
	AfterProcess func(*results.Summary, time.Duration) bool
	// FirstProcessLimit, when > 0, stops a multi-process run whose first
	// process is still running after it (check's --budget; AfterProcess
	// bounds the later ones), its cause BudgetSpent.
	FirstProcessLimit time.Duration
	// Plan is where the plan is printed (io.Discard: not at all); Log
	// is the session's stderr.
	Plan, Log io.Writer
}

// Outcome is what a run left: its summary (nil when nothing was
// measured), the results directory, the run's own error (a failed or
// stopped run), the error saving summary.json and, then, what it still
// holds.
type Outcome struct {
	Sum     *results.Summary
	Path    string
	RunErr  error
	SaveErr error
	Kept    string
}

// session is one Execute: its plan and options, and what each phase
// leaves for the next.
type session struct {
	plan  *Plan
	opt   Options
	watch *Watch
	env   sysinfo.Facts
	unmet []string
	srv   *exporter.Server
	out   *outDir
	sv    *saver
	o     Outcome
}

// Execute runs plan with opt into a new results directory (opt.Out, or
// rtload-results/<scenario>-<time>), saving summary.json after every
// trial and at the end, with the plan printed to opt.Plan; w's signals
// stop it. Its phases, in order: preflight, listen, the out directory,
// the saver, processes, save and interop, closing. It returns an error
// only when the run could not start (a refusal, a refused directory or
// metrics address, a signal before anything was created); a run that
// fails or is stopped returns its Outcome with RunErr set. A directory
// created for a run that measured nothing is removed again.
func Execute(w *Watch, plan *Plan, opt Options) (Outcome, error) {
	s := &session{plan: plan, opt: opt, watch: w}
	if err := s.preflight(); err != nil {
		return s.o, err
	}
	if err := s.listen(); err != nil {
		return s.o, err
	}
	if s.srv != nil {
		defer s.srv.Close()
	}
	if err := w.stopped(); err != nil {
		return s.o, fmt.Errorf("%w before the run started: nothing was measured or created", err)
	}
	if err := s.openOut(); err != nil {
		return s.o, err
	}
	defer s.out.close()
	printPlan(opt.Plan, plan.Spec, len(plan.Trials), plan.Auto, opt.AfterProcess != nil)
	sv, err := newSaver(s.out.dir, plan.Spec, s.env, opt.Log)
	if err != nil {
		s.out.removeIfEmpty()
		return s.o, err
	}
	s.sv = sv
	w.attach(sv)
	sum, runErr := s.run()
	s.o.RunErr = runErr
	if sum == nil || (runErr != nil && len(sum.Trials) == 0) {
		s.out.removeIfEmpty()
		return s.o, nil
	}
	s.save(sum)
	s.closing()
	return s.o, nil
}

// preflight makes every refusal before anything is printed or created:
// a run that cannot fit ulimit -v (it would die part way with a runtime
// dump), cpu: auto and the requirements, unmet requirements and missing
// privileges in one refusal (not one layer at a time; engine.Run checks
// the privileges again); then it names what will disturb the readers,
// with its fix, before anything is paid for (a long baseline above all).
func (s *session) preflight() error {
	trials, errw := s.plan.Trials, s.opt.Log
	if err := engine.CheckAddressSpace(trials, engine.Options{}); err != nil {
		return err
	}
	s.env = sysinfo.Gather()
	unmet, err := FitMachine(errw, s.plan.Spec, trials, &s.env, s.opt.AllowDegraded)
	var reqErr *engine.RequirementsError
	if err != nil && !errors.As(err, &reqErr) {
		return err
	}
	if err := errors.Join(err, engine.Preflight(trials, s.opt.AllowDegraded)); err != nil {
		return err
	}
	s.unmet = unmet
	for _, w := range engine.Disturbances(trials) {
		fmt.Fprintf(errw, "warning: %s\n", termsafe.Escape(w))
	}
	return nil
}

// listen opens the metrics endpoint (--metrics-addr), if asked for.
func (s *session) listen() error {
	if s.opt.MetricsAddr == "" {
		return nil
	}
	srv, err := exporter.Listen(s.opt.MetricsAddr, false)
	if err != nil {
		return UsageError{fmt.Errorf("--metrics-addr: %w", err)}
	}
	s.srv = srv
	return nil
}

// run runs the plan: in this process, or in fresh processes one after
// the other; with the progress bar or phase log and the live line.
func (s *session) run() (*results.Summary, error) {
	spec, trials, errw := s.plan.Spec, s.plan.Trials, s.opt.Log
	ctx := s.watch.context()
	if limit := s.opt.FirstProcessLimit; limit > 0 {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		timer := time.AfterFunc(limit, func() { stop(BudgetSpent{limit}) })
		defer timer.Stop()
		after := s.opt.AfterProcess
		s.opt.AfterProcess = func(sum *results.Summary, elapsed time.Duration) bool {
			timer.Stop() // the first process has ended
			return after == nil || after(sum, elapsed)
		}
	}
	opt := engine.Options{AllowDegraded: s.opt.AllowDegraded, OutDir: s.out.path, Results: s.out.dir, NoWakeupLog: s.opt.NoWakeupLog, Unmet: s.unmet,
		TaskPerfCounters: s.opt.TaskPerf}
	bar := progress(&opt, s.opt.Quiet, spec, trials, errw)
	live := NewLiveLine(errw, term.IsTerminal(int(os.Stderr.Fd())))
	s.wire(&opt, live)
	var sum *results.Summary
	var err error
	if spec.Processes > 1 {
		sum, err = runProcesses(ctx, spec, trials, opt, s.opt, errw)
	} else {
		sum, err = engine.Run(ctx, spec, trials, opt)
	}
	if sum != nil && sum.Auto != nil && sum.Auto.Reason == "" && sum.Stopped {
		sum.Auto.Reason = "interrupted"
	}
	live.Done()
	if bar != nil {
		_ = bar.Finish()
	}
	return sum, err
}

// wire connects the run's callbacks to opt: the live line, the saver's
// checkpoints, the metrics endpoint, rounds: auto and, after each
// process, check's look or a baseline's replacements and sizing.
func (s *session) wire(opt *engine.Options, live *LiveLine) {
	spec, errw, sv := s.plan.Spec, s.opt.Log, s.sv
	opt.OnInterval = live.Update
	opt.OnCheckpoint = sv.checkpoint
	if s.srv != nil {
		s.srv.SetRunInfo(spec.Name, "", s.env.Kernel) // the clock is filled in by the engine once chosen
		opt.Exporter = s.srv
		opt.Kernel = s.env.Kernel
		fmt.Fprintf(errw, "metrics: http://%s/metrics\n", s.srv.Addr())
	}
	if s.plan.Auto != nil {
		opt.AfterRound = autoRounds(errw, *s.plan.Auto, time.Now())
	}
	if after := s.opt.AfterProcess; after != nil {
		// check looks at the candidate after each process: with the
		// scenario and the machine summary.json will record (the engine's
		// merged summary has neither), or its compare would say the runs
		// differ in every spec field and fact.
		opt.AfterProcess = func(sum *results.Summary, elapsed time.Duration) bool {
			sum.Spec, sum.Plan, sum.Env = sv.run.Spec, sv.run.Plan, sv.run.Env
			return after(sum, elapsed)
		}
	} else if spec.Processes > 1 {
		// A baseline: a fresh process in the place of each the machine
		// disturbed (at most a third), and what a check against it will
		// see, said after its first clean process, before the rest is paid
		// for.
		opt.Replacements = verdict.Replacer(spec.Processes, errw)
		said := false
		opt.AfterProcess = func(sum *results.Summary, elapsed time.Duration) bool {
			if d := verdict.SizeRun(compare.Run{Label: "run", Summary: sum}, spec.Processes, elapsed/time.Duration(len(sum.Processes)), verdict.Options{}); d != nil && !said {
				said = true
				fmt.Fprintln(errw, d.Line(fmt.Sprintf("sizing after process %d of %d", len(sum.Processes), spec.Processes)))
			}
			return true
		}
	}
}

// save writes summary.json first (the command prints the report whatever
// the save gives, from the summary in memory), then, when it was saved,
// the same histograms in formats other tools read: HdrHistogram interval
// logs and cyclictest's -h layout.
func (s *session) save(sum *results.Summary) {
	s.o.Sum = sum
	s.o.SaveErr = s.sv.final(sum)
	if s.o.SaveErr != nil {
		s.o.Kept = s.sv.kept(s.out.path)
		return
	}
	if _, err := interop.WriteInterop(s.out.dir.Dir, sum); err != nil {
		fmt.Fprintf(s.opt.Log, "rtload: interop files: %v\n", err)
	}
}

// closing says what the results directory holds.
func (s *session) closing() {
	if names := writtenFiles(s.out.path); names != "" {
		fmt.Fprintf(s.opt.Log, "rtload: wrote %s: %s\n", termsafe.Escape(s.out.path), names)
	}
}
