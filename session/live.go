package session

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rtload/rtload/compare/auto"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// autoRounds is a rounds: auto run's engine.Options.AfterRound: after
// every round it applies rule (auto.Round, which records the
// decision in the summary) and prints a line saying where the interval
// stands.
func autoRounds(w io.Writer, rule auto.Rule, start time.Time) func(*results.Summary) bool {
	return func(s *results.Summary) bool {
		stop := auto.Round(s, rule, time.Since(start))
		a := s.Auto
		line := fmt.Sprintf("rounds: auto: %d round(s)", a.Rounds)
		if a.HalfWidthPct != nil {
			what := a.Metric + " difference"
			if len(a.Columns) < 2 {
				what = a.Metric + " (its mean: one variant)"
			}
			line += fmt.Sprintf(", 95%% CI of the %s ±%.2f%% of the baseline (target ±%s%%)", what, *a.HalfWidthPct, strconv.FormatFloat(a.PrecisionPct, 'g', -1, 64))
		}
		if stop {
			line += ": stop, " + a.Reason
		}
		fmt.Fprintln(w, line)
		return !stop
	}
}

// progress sets up the progress bar on a terminal (or the phase log) and
// returns the bar, nil when none.
func progress(opt *engine.Options, quiet bool, spec *scenario.Spec, trials []scenario.Trial, errw io.Writer) *progressbar.ProgressBar {
	if quiet {
		return nil
	}
	// The log names other processes' threads (their comm is anyone's to
	// choose): escaped for the terminal.
	if spec.Processes > 1 {
		opt.Log = termsafe.Writer(errw) // the children's phase logs
		return nil
	}
	if spec.Interval != 0 || !term.IsTerminal(int(os.Stderr.Fd())) {
		opt.Log = termsafe.Writer(errw)
		return nil
	}
	bar := progressbar.NewOptions(1000, progressbar.OptionSetWriter(errw), progressbar.OptionSetWidth(30),
		progressbar.OptionSetDescription("running"), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
	opt.Progress = func(trial, n int, frac float64) {
		bar.Describe(fmt.Sprintf("trial %d/%d %s", trial+1, n, trials[trial].Variant))
		_ = bar.Set(int(1000 * (float64(trial) + frac) / float64(n)))
	}
	return bar
}

// LiveLine prints one line per interval record: the current interval and
// the worst wakeup latency so far (rewritten in place on a terminal).
type LiveLine struct {
	w       io.Writer
	tty     bool
	worst   int64
	worstAt time.Time
	printed bool
}

func NewLiveLine(w io.Writer, tty bool) *LiveLine { return &LiveLine{w: w, tty: tty} }

func (l *LiveLine) Update(iv results.Interval) {
	if iv.WakeupLatency.MaxNs > l.worst {
		l.worst, l.worstAt = iv.WakeupLatency.MaxNs, iv.Time
	}
	proc := fmt.Sprintf("rss %.1fMiB fds %d", float64(iv.RSSBytes)/(1<<20), iv.FDs)
	if iv.ProcessUnknown != "" {
		proc = "rss ? fds ? (" + iv.ProcessUnknown + ")"
	}
	line := fmt.Sprintf("%s %s/%s #%d: wakeup p99 %sµs max %sµs (worst %sµs at %s) | call p99 %d ticks | msgs %d lost %d | spikes %d | %s",
		iv.Time.Format("15:04:05"), iv.Variant, iv.Reader, iv.Seq,
		report.Microseconds(iv.WakeupLatency.Ns(results.P99)), report.Microseconds(iv.WakeupLatency.Ns(results.Max)),
		report.Microseconds(float64(l.worst)), l.worstAt.Format("15:04:05"), iv.PerCallTicks.P99Ticks, iv.Messages, iv.Lost, iv.Spikes, proc)
	if iv.Mark != "" {
		line += " | MARKED: " + iv.Mark
	}
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(l.w, line)
	}
	l.printed = true
}

func (l *LiveLine) Done() {
	if l.tty && l.printed {
		fmt.Fprintln(l.w)
	}
}
