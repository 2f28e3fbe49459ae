package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rtload/rtload/bench/interleave"
	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/stats"
	"github.com/rtload/rtload/verdict"
)

// checkData is one check as the bench directory holds it.
type checkData struct {
	Name string
	Step Step
	Ran  bool            // the step is on record
	Doc  *verdict.Report // nil: no readable JSON (Why says why)
	Why  string
}

// class is the check's outcome: slower, not slower, undecided, cannot
// judge, or failed (no verdict: timed out, no JSON, another exit code).
func (c checkData) class() string {
	if c.Doc == nil {
		return "failed"
	}
	switch {
	case c.Doc.ExitCode == 1 && c.Doc.Verdict == verdict.Slower:
		return string(verdict.Slower)
	case c.Doc.ExitCode == 0 && c.Doc.Verdict == verdict.NotSlower:
		return string(verdict.NotSlower)
	case c.Doc.ExitCode == 125 && c.Doc.Verdict == verdict.Undecided:
		return string(verdict.Undecided)
	case c.Doc.ExitCode == 125 && c.Doc.Verdict == verdict.CannotJudge:
		return string(verdict.CannotJudge)
	}
	return "failed"
}

// tallyOf counts a series' outcomes.
type tallyOf struct {
	Ran, Slower, NotSlower, Undecided, CannotJudge, Failed int
}

func count(cs []checkData) tallyOf {
	var t tallyOf
	for _, c := range cs {
		if !c.Ran {
			continue
		}
		t.Ran++
		switch c.class() {
		case string(verdict.Slower):
			t.Slower++
		case string(verdict.NotSlower):
			t.NotSlower++
		case string(verdict.Undecided):
			t.Undecided++
		case string(verdict.CannotJudge):
			t.CannotJudge++
		default:
			t.Failed++
		}
	}
	return t
}

func (t tallyOf) String() string {
	return fmt.Sprintf("%d slower (exit 1), %d not slower (exit 0), %d undecided (125), %d cannot judge (125), %d failed, of %d checks",
		t.Slower, t.NotSlower, t.Undecided, t.CannotJudge, t.Failed, t.Ran)
}

// verdicts are the checks that gave a verdict (slower, not slower, undecided).
func (t tallyOf) verdicts() int { return t.Slower + t.NotSlower + t.Undecided }

// falseAlarms is an A/A series' rate of "slower" among the checks that
// gave a verdict, with its exact 95% interval (Clopper–Pearson).
func (t tallyOf) falseAlarms() proportion { return binomial(t.Slower, t.verdicts(), 0.95) }

// power is a power series' rate of "slower" among the checks that gave a
// verdict, with its exact 95% interval (Clopper–Pearson).
func (t tallyOf) power() proportion { return binomial(t.Slower, t.verdicts(), 0.95) }

// data is a bench directory read back.
type data struct {
	dir    string
	p      Plan
	steps  map[string]Step
	order  []string
	sizes  []trueSize
	sizeEr error
	medium *pick
	large  *pick
	il     *interleave.Figures
	ilMD   string
	series []series
	checks map[string][]checkData
}

// readDir reads a bench directory.
func readDir(dir string) (*data, error) {
	b, err := os.ReadFile(filepath.Join(dir, planFile))
	if err != nil {
		return nil, fmt.Errorf("%s: not a bench directory: %w", dir, err)
	}
	d := &data{dir: dir, checks: map[string][]checkData{}}
	if err := json.Unmarshal(b, &d.p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, planFile), err)
	}
	if d.steps, d.order, err = readSteps(dir); err != nil {
		return nil, err
	}
	if _, ok := d.steps["truesize"]; ok {
		d.sizes, d.sizeEr = trueSizes(filepath.Join(dir, "truesize"), d.p.Ladder)
		if d.sizeEr == nil {
			d.medium, d.large, d.sizeEr = pickChanges(d.sizes, d.p.MediumChange, d.p.LargeChange)
		}
	} else if d.p.MediumChange != "" && d.p.LargeChange != "" {
		d.medium, d.large, _ = pickChanges([]trueSize{{Change: d.p.MediumChange}, {Change: d.p.LargeChange}}, d.p.MediumChange, d.p.LargeChange)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "interleave.json")); err == nil {
		var f interleave.Figures
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "interleave.json"), err)
		}
		d.il = &f
	}
	if b, err := os.ReadFile(filepath.Join(dir, "interleave.md")); err == nil {
		d.ilMD = string(b)
	}
	d.series = d.p.series(d.medium, d.large)
	for _, s := range d.series {
		for i := 1; i <= s.N; i++ {
			c := checkData{Name: checkName(s.Key, i)}
			c.Step, c.Ran = d.steps[c.Name]
			if c.Ran {
				c.Doc, err = readCheck(filepath.Join(dir, c.Step.Out))
				if err != nil {
					c.Why = c.Step.why(dir, err)
				}
			}
			d.checks[s.Key] = append(d.checks[s.Key], c)
		}
	}
	return d, nil
}

// why says why a step left no verdict: timed out, interrupted, could not
// run, or the last line of its stderr.
func (s Step) why(dir string, err error) string {
	switch {
	case s.TimedOut:
		return fmt.Sprintf("timed out after %v", time.Duration(s.TimeoutNs))
	case s.Interrupted:
		return "interrupted"
	case s.Error != "":
		return s.Error
	}
	b, _ := os.ReadFile(filepath.Join(dir, s.Err))
	if l := lastLine(string(b)); l != "" {
		return fmt.Sprintf("exit %d: %s", s.ExitCode, l)
	}
	return fmt.Sprintf("exit %d: %v", s.ExitCode, err)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// renderDir renders dir's Markdown into md (- for stdout).
func renderDir(dir, md string) error {
	d, err := readDir(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	d.render(&b)
	if md == "-" {
		_, err := os.Stdout.Write(b.Bytes())
		return err
	}
	return os.WriteFile(md, b.Bytes(), 0o644)
}

// mdBuf is the document being written.
type mdBuf = bytes.Buffer

func (d *data) render(b *mdBuf) {
	title := "Verdicts measured (issue 24): A/A, power, interleaved"
	if d.p.Quick {
		title += " — quick: not a measurement"
	}
	if d.p.Label != "" {
		title += ", " + d.p.Label
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	if d.p.Quick {
		fmt.Fprintf(b, "**quick: not a measurement.** `make bench-verdicts VERDICTS_QUICK=1` (-quick) runs every step with tiny counts, "+
			"%s trials and a %v check budget, to show that the harness works end to end; the figures below say nothing about rtload's verdicts, "+
			"and the Done-when column reads \"quick\" for that reason. The measurement is `make bench-verdicts` on a quiet machine.\n\n",
			flagValue(d.p.RunFlags, "--duration", "default"), d.p.budget())
	}
	d.header(b)
	d.summary(b)
	d.trueSizeSection(b)
	d.baselineSection(b)
	for i, s := range d.series {
		d.seriesSection(b, i+3, s)
	}
	d.mdcSection(b, len(d.series)+3)
	d.interleaveSection(b, len(d.series)+4)
	d.stepsSection(b, len(d.series)+5)
}

// flagValue is the value after name in flags (def: absent).
func flagValue(flags []string, name, def string) string {
	for i := 0; i+1 < len(flags); i++ {
		if flags[i] == name {
			return flags[i+1]
		}
	}
	return def
}

func (d *data) header(b *mdBuf) {
	var first, last time.Time
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, n := range d.order {
		s := d.steps[n]
		if first.IsZero() || s.Start.Before(first) {
			first = s.Start
		}
		if s.End.After(last) {
			last = s.End
		}
		lo, hi = math.Min(lo, math.Min(s.Load1Before, s.Load1After)), math.Max(hi, math.Max(s.Load1Before, s.Load1After))
	}
	fmt.Fprintf(b, "Written by `make bench-verdicts` (`bin/verdicts %s`) from the bench directory `%s`, rtload `%s`, on %s.\n",
		strings.TrimPrefix(d.p.Command, "verdicts "), d.dir, d.p.Version, d.p.Host)
	if len(d.order) > 0 {
		fmt.Fprintf(b, "The steps ran %s – %s UTC: **%v of wall time in all**; the 1-minute load average around them was %.1f–%.1f.",
			first.UTC().Format("2006-01-02 15:04"), last.UTC().Format("15:04"), last.Sub(first).Round(time.Minute), lo, hi)
		if hi > 1.5 {
			fmt.Fprintf(b, " **The machine was busy** (a load above 1.5 on a machine whose reader owns a CPU): the figures are the machine's as much as rtload's.")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Every figure below comes from the raw outputs kept in that directory (steps.jsonl: every command, its exit code, time and load; "+
		"every check's JSON; every run's results); `bin/verdicts bench -from %s -md FILE` (`make bench-bin` builds it) renders this file again without running anything.\n", d.dir)
	if len(d.p.RunFlags) > 0 {
		fmt.Fprintf(b, "\nEvery run and power check got `%s`: **not the defaults**.\n", strings.Join(d.p.RunFlags, " "))
	}
	fmt.Fprintf(b, "\nChecks ran at %s: budget %v, %d looks (check's own defaults are %v and %d).\n", d.checkSettings(), d.p.budget(), cmp0(d.p.Looks, d.p.DefaultLooks), d.p.DefaultBudget, d.p.DefaultLooks)
}

func (d *data) checkSettings() string {
	if d.p.Budget == 0 && d.p.Looks == 0 {
		return "the default settings"
	}
	return "**other than the default settings**"
}

// done is a Done-when verdict cell: met / NOT met / why it cannot say.
func (d *data) done(ok bool, why string) string {
	switch {
	case d.p.Quick:
		return "quick"
	case why != "":
		return why
	case ok:
		return "met"
	}
	return "**NOT met**"
}

func (d *data) summary(b *mdBuf) {
	b.WriteString("\n## Done when (issue 24), as measured here\n\n| line | target | measured | time | |\n|---|---|---|---|---|\n")
	for _, s := range d.series {
		cs := d.checks[s.Key]
		t := count(cs)
		took := stepTook(d.steps, names(cs)...)
		switch {
		case s.Change == nil:
			target, verdict := "context: what a check against this baseline says", "context"
			if s.Key == "aa" {
				target = "at most 1 of 20 checks slower (exit 1), at default settings"
				verdict = d.done(t.Slower <= 1, d.aaWhy(t, s.N))
			}
			fmt.Fprintf(b, "| %s (%s) | %s | %s; false alarms %s | %v | %s |\n", s.Title, d.baseWords(s.Base), target, t, t.falseAlarms(), took.Round(time.Second), verdict)
		default:
			want, of := 8, 10
			target := "found slower in at least 8 of 10 checks, within the default budget"
			if s.Key == "large" {
				want, target = 10, "found slower in 10 of 10 checks, within the default budget"
			}
			why := ""
			switch {
			case !s.Change.InRange:
				why = "does not apply: the change's true size is not where the line asks"
			case t.Ran < of || s.N < of:
				why = fmt.Sprintf("not measured: %d of %d checks", t.Ran, of)
			case d.p.Budget != 0 || d.p.Looks != 0:
				why = "not at the default budget"
			}
			fmt.Fprintf(b, "| %s: %s (true size %s) | %s | found %s; %s | %v | %s |\n", s.Title, d.changeWords(s.Change), sizeWords(s.Change.Size), target,
				t.power(), t, took.Round(time.Second), d.done(t.Slower >= want, why))
		}
	}
	if len(d.series) > 0 {
		fmt.Fprintf(b, "| smallest detectable change | printed by check, and measured | %s | | info |\n", d.mdcSummary())
	}
	if d.il != nil {
		if f := d.il.Seed; f != nil {
			ok := f.HalfWidthPct != nil && *f.HalfWidthPct <= 2 && time.Duration(f.WindowNs) <= 2*time.Minute
			fmt.Fprintf(b, "| interleaved: seed 000's recvmsg/recvfrom per-call ratio | 95%% CI half-width ≤ 2%% within 2 minutes | %s over a %v window, %d block pairs | %v | %s |\n",
				ilWords(*f), time.Duration(f.WindowNs).Round(time.Second), f.Pairs, time.Duration(f.WallNs).Round(time.Second), d.done(ok, ""))
		}
		if len(d.il.AA) > 0 {
			hold, wall := 0, time.Duration(0)
			for _, f := range d.il.AA {
				if f.HoldsOne {
					hold++
				}
				wall += time.Duration(f.WallNs)
			}
			why := ""
			if len(d.il.AA) < 20 {
				why = fmt.Sprintf("not measured: %d of 20 runs", len(d.il.AA))
			}
			fmt.Fprintf(b, "| interleaved A/A (recvfrom against recvfrom) | 1 inside the 95%% CI in at least 19 of 20 runs | %d of %d hold 1 | %v | %s |\n",
				hold, len(d.il.AA), wall.Round(time.Second), d.done(hold*20 >= 19*len(d.il.AA), why))
		}
	} else if d.p.has("interleave") {
		fmt.Fprintf(b, "| interleaved | | not measured: %s | | |\n", d.stepState("interleave"))
	}
	b.WriteString("\nRates (false alarms, found) are \"slower\" among the checks that gave a verdict (slower, not slower, undecided), with their exact 95% " +
		"Clopper–Pearson interval: 20 checks bound a false-alarm rate only loosely (0 of 20 is still [0%, 16.8%]).\n")
	b.WriteString("\nTime is each line's wall time (for checks: their steps' time together). A check's \"cannot judge\" is rtload saying that a run " +
		"was not the run asked for (a starved reader, traffic behind its schedule, a changed clocksource): no verdict, so a series with more than 2 of them measured too little.\n")
	if d.p.has("aa") {
		b.WriteString("All the checks of a series share one baseline: its own error (how far its processes happened to lie from the truth) is common to all of " +
			"them, so 20 checks measure the false-alarm rate given this baseline, and a second baseline could give another count; the rule's rate over baselines " +
			"is simulated in `go test -v -run Sim ./stats`.\n")
	}
}

func names(cs []checkData) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// aaWhy says why the A/A line cannot say met or not met.
func (d *data) aaWhy(t tallyOf, planned int) string {
	switch {
	case t.Slower > 1:
		return "" // not met whatever else
	case planned < 20 || t.Ran < 20:
		return fmt.Sprintf("not measured: %d of 20 checks", t.Ran)
	case t.verdicts() < 18:
		return fmt.Sprintf("not measured: %d of 20 checks gave no verdict", t.Ran-t.verdicts())
	case d.p.Budget != 0 || d.p.Looks != 0:
		return "not at the default settings"
	}
	return ""
}

func (d *data) baseWords(base string) string {
	if base == "base-default" {
		return "default baseline: `rtload run`, 1 process, as make run runs it"
	}
	n, why := d.baseN()
	return fmt.Sprintf("baseline of %d processes, %s", n, why)
}

// baseN is the recommended baseline's processes, from its command.
func (d *data) baseN() (int, string) {
	b := &bench{p: d.p, dir: d.dir}
	n, why := b.baseProcesses()
	if s, ok := d.steps["base"]; ok {
		if v := flagValue(s.Argv, "--processes", ""); v != "" {
			fmt.Sscan(v, &n)
		}
	}
	return n, why
}

func (d *data) changeWords(p *pick) string {
	if p == nil {
		return "not picked"
	}
	return fmt.Sprintf("the %s variant runs %s", baseVariant, p.Size.Change)
}

func sizeWords(t trueSize) string {
	if t.Blocks.ChangePct == nil || t.Blocks.LoPct == nil || t.Blocks.HiPct == nil {
		return "not measured"
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", *t.Blocks.ChangePct, *t.Blocks.LoPct, *t.Blocks.HiPct)
}

func ilWords(f interleave.Figure) string {
	if f.ChangePct == nil || f.LoPct == nil || f.HiPct == nil || f.HalfWidthPct == nil {
		return "no interval"
	}
	return fmt.Sprintf("%+.2f%% [%+.2f%%, %+.2f%%], ±%.2f%%", *f.ChangePct, *f.LoPct, *f.HiPct, *f.HalfWidthPct)
}

// stepState says what became of a step.
func (d *data) stepState(name string) string {
	s, ok := d.steps[name]
	switch {
	case !ok:
		return "not run"
	case s.ExitCode != 0:
		return s.why(d.dir, errNoStep)
	}
	return fmt.Sprintf("exit 0 in %v", s.Took().Round(time.Second))
}

// stepLine is a step's command, time and load, for a section's first
// lines.
func (d *data) stepLine(name string) string {
	s, ok := d.steps[name]
	if !ok {
		return fmt.Sprintf("`%s`: not run.\n", name)
	}
	st := fmt.Sprintf("exit %d", s.ExitCode)
	if s.ExitCode != 0 {
		st = s.why(d.dir, errNoStep)
	}
	return fmt.Sprintf("`%s` (%s, %v, load %.1f → %.1f).\n", strings.Join(d.rel(s.Argv), " "), st, s.Took().Round(time.Second), s.Load1Before, s.Load1After)
}

// rel shows argv with the bench directory as DIR.
func (d *data) rel(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if r, ok := strings.CutPrefix(a, d.dir); ok && (r == "" || r[0] == '/') {
			a = "DIR" + r
		}
		out[i] = a
	}
	return out
}

func (d *data) trueSizeSection(b *mdBuf) {
	if !d.p.has("truesize") && d.sizes == nil {
		return
	}
	b.WriteString("\n## 1. True sizes of the power changes (measured first)\n\n")
	b.WriteString("Each change is another receive method in the default scenario's " + baseVariant + " variant: on the same reader thread and sockets, so " +
		"it runs interleaved with " + baseVariant + " in ABBA blocks (the scenario's `interleave: auto`) and its true size is the paired ratio of " +
		"their mean per-call cost over every block pair (stats.Paired; the machine's slow noise, common to adjacent blocks, cancels). The " +
		"same run paired by process (each process's mean log ratio one unit) holds what a process adds to one variant, which no block pair sees.\n\n")
	b.WriteString(d.stepLine("truesize"))
	if d.sizeEr != nil && d.sizes == nil {
		fmt.Fprintf(b, "\nNo true sizes: %v.\n", d.sizeEr)
		return
	}
	b.WriteString("\n| change (in the recvfrom variant) | in-process: change [95% CI] | block pairs | interval over | paired by process [95% CI] | notes |\n|---|---|---:|---|---|---|\n")
	for _, t := range d.sizes {
		proc := "– (1 process)"
		if iv := t.Processes; iv != nil && iv.PointPct != nil && iv.LowPct != nil && iv.HighPct != nil {
			proc = fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%], n = %s", *iv.PointPct, *iv.LowPct, *iv.HighPct, iv.N)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", t.Change, sizeWords(t), t.Blocks.Pairs, mdCell(t.Blocks.N+"; "+t.Blocks.Method), proc, mdCell(strings.Join(t.Blocks.Notes, "; ")))
	}
	fmt.Fprintf(b, "\nPicked (in-process point): the +8–15%% change is the one in +%.0f–%.0f%% nearest its middle (else the nearest to the range), "+
		"the +25%% change the other one nearest +25%% (within ±%.0f points counts as +25%%).\n", mediumLoPct, mediumHiPct, largeTolPct)
	for _, x := range []struct {
		what string
		p    *pick
	}{{"+8–15%", d.medium}, {"+25%", d.large}} {
		if x.p == nil {
			fmt.Fprintf(b, "- %s: none (%v)\n", x.what, d.sizeEr)
			continue
		}
		how := "picked"
		if x.p.Forced {
			how = "named on the command line"
		}
		in := "inside the target"
		if !x.p.InRange {
			in = "**outside the target**: the power line for it does not apply"
		}
		fmt.Fprintf(b, "- %s: **%s** (%s), true size %s, %s.\n", x.what, x.p.Size.Change, how, sizeWords(x.p.Size), in)
	}
}

func (d *data) baselineSection(b *mdBuf) {
	if !d.p.checks() {
		return
	}
	b.WriteString("\n## 2. Baselines\n\n")
	n, why := d.baseN()
	fmt.Fprintf(b, "The default baseline is `rtload run` as `make run` runs it (the default scenario, one process). The recommended one has %d processes (%s).\n\n", n, why)
	for _, name := range []string{"base-default", "base"} {
		if _, ok := d.steps[name]; !ok {
			continue
		}
		fmt.Fprintf(b, "- %s: %s", name, d.stepLine(name))
		out, _ := os.ReadFile(filepath.Join(d.dir, name+".out"))
		var sz []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "sizing:") {
				sz = append(sz, l)
			}
		}
		if len(sz) > 0 {
			fmt.Fprintf(b, "\n  ```\n  %s\n  ```\n", strings.Join(sz, "\n  "))
		}
		if s, err := store.ReadSummary(filepath.Join(d.dir, name)); err == nil {
			if reasons := verdict.Unjudgeable(name, s); len(reasons) > 0 {
				fmt.Fprintf(b, "\n  **This baseline cannot be judged against**: every check of it says \"cannot judge\" at once: %s.\n", mdCell(strings.Join(reasons, "; ")))
			}
		}
	}
	if _, err := store.ReadSummary(filepath.Join(d.dir, "base")); err == nil {
		b.WriteString("\nWhere the noise of the recommended baseline is (its processes × rounds; `verdicts pilot`):\n\n")
		if err := pilot(b, []string{filepath.Join(d.dir, "base")}); err != nil {
			fmt.Fprintf(b, "(no variance components: %v)\n", err)
		}
	}
}

func (d *data) seriesSection(b *mdBuf, n int, s series) {
	cs := d.checks[s.Key]
	fmt.Fprintf(b, "\n## %d. %s", n, s.Title)
	if s.Change != nil {
		fmt.Fprintf(b, ": %s, true size %s", d.changeWords(s.Change), sizeWords(s.Change.Size))
	}
	fmt.Fprintf(b, "\n\n%d × `rtload check` against the %s, ", s.N, d.baseWords(s.Base))
	if s.Scenario != "" {
		fmt.Fprintf(b, "each running `DIR/%s` (the default scenario with the change; flags as the baseline's), ", s.Scenario)
	} else {
		b.WriteString("each running the baseline's own scenario as recorded, ")
	}
	fmt.Fprintf(b, "one of each series per round. First check: `%s`.\n\n", d.firstArgv(cs))
	t := count(cs)
	took := stepTook(d.steps, names(cs)...)
	fmt.Fprintf(b, "**%s**; %v in all", t, took.Round(time.Second))
	if t.Ran > 0 {
		fmt.Fprintf(b, ", %v per check on average", (took / time.Duration(t.Ran)).Round(time.Second))
	}
	b.WriteString(".")
	if t.verdicts() > 0 {
		what := "False-alarm rate"
		if s.Change != nil {
			what = "Found slower"
		}
		fmt.Fprintf(b, " %s: %s (of the checks that gave a verdict; exact 95%% Clopper–Pearson interval).", what, t.falseAlarms())
	}
	b.WriteString("\n\n")
	if t.Ran == 0 {
		return
	}
	b.WriteString(tallyHeader)
	for _, c := range cs {
		if !c.Ran {
			continue
		}
		if c.Doc == nil {
			fmt.Fprintf(b, "| %s | %d | failed | - | - | - | %v | %s |\n", filepath.Base(c.Name), c.Step.ExitCode, c.Step.Took().Round(time.Second), mdCell(c.Why))
			continue
		}
		b.WriteString(tallyRow(filepath.Base(c.Name), c.Doc, c.Step.Took().Round(time.Second).String()))
	}
}

func (d *data) firstArgv(cs []checkData) string {
	for _, c := range cs {
		if c.Ran {
			return strings.Join(d.rel(c.Step.Argv), " ")
		}
	}
	return "none ran"
}

// mdcOf is the smallest detectable change each check printed for one
// metric (at its last look), and the interval figures behind it.
type mdcOf struct {
	Column string
	MDC    []float64 // %
	SE     []float64 // log scale
	Level  []float64
	Point  []float64 // log of the point change
}

// mdcs collects a series' printed smallest detectable changes by metric
// (column), in column order.
func mdcs(cs []checkData) []*mdcOf {
	var out []*mdcOf
	for _, c := range cs {
		if c.Doc == nil || c.class() == "failed" {
			continue
		}
		for _, m := range c.Doc.Gate.Metrics {
			i := slices.IndexFunc(out, func(x *mdcOf) bool { return x.Column == m.Column })
			if i < 0 {
				out = append(out, &mdcOf{Column: m.Column})
				i = len(out) - 1
			}
			x := out[i]
			if m.MinDetectablePct != nil {
				x.MDC = append(x.MDC, *m.MinDetectablePct)
			}
			if iv := m.Interval; iv != nil && iv.SELog != nil && iv.PointPct != nil {
				x.SE, x.Level = append(x.SE, *iv.SELog), append(x.Level, iv.Level)
				x.Point = append(x.Point, math.Log1p(*iv.PointPct/100))
			}
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func spread(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f%% (%+.1f%% … %+.1f%%, %d checks)", median(xs), slices.Min(xs), slices.Max(xs), len(xs))
}

// measuredMDC is the smallest change the spread of a series' A/A points
// would find with 80% power: stats.MinDetectable with the standard error
// the points' standard deviation (the checks' real scatter, drift
// between checks in it), their degrees of freedom and the checks' median
// per-metric level. The baseline's own error, common to every check, is
// not in the scatter: it shows as the points' mean instead.
func measuredMDC(x *mdcOf, thr float64) (mdc, sd, mean float64, ok bool) {
	if len(x.Point) < 3 {
		return 0, 0, 0, false
	}
	var m, v float64
	for _, p := range x.Point {
		m += p
	}
	m /= float64(len(x.Point))
	for _, p := range x.Point {
		v += (p - m) * (p - m)
	}
	sd = math.Sqrt(v / float64(len(x.Point)-1))
	c := stats.Change{SELog: sd, DF: float64(len(x.Point) - 1), Level: median(x.Level)}
	return stats.MinDetectable(c, thr, stats.DefaultPower) * 100, sd, math.Expm1(m) * 100, true
}

func (d *data) threshold() float64 {
	for _, s := range d.series {
		for _, c := range d.checks[s.Key] {
			if c.Doc != nil && c.Doc.Gate.ThresholdPct > 0 {
				return c.Doc.Gate.ThresholdPct / 100
			}
		}
	}
	return compare.DefaultThreshold
}

// mdcSummary is the summary table's smallest-detectable cell: the A/A
// series' printed median and its measured figure.
func (d *data) mdcSummary() string {
	var parts []string
	for _, s := range d.series {
		if s.Key != "aa" {
			continue
		}
		for _, x := range mdcs(d.checks[s.Key]) {
			p := fmt.Sprintf("%s printed %s", x.Column, spread(x.MDC))
			if mdc, _, _, ok := measuredMDC(x, d.threshold()); ok {
				p += fmt.Sprintf(", measured %+.1f%%", mdc)
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "no A/A check gave one"
	}
	return strings.Join(parts, "; ")
}

func (d *data) mdcSection(b *mdBuf, n int) {
	if len(d.series) == 0 {
		return
	}
	thr := d.threshold()
	fmt.Fprintf(b, "\n## %d. Smallest detectable change: printed and measured\n\n", n)
	fmt.Fprintf(b, "Printed: what each check's verdict line gave at its last look (stats.MinDetectable: the change its noise would find slower "+
		"beyond +%.0f%% with 80%% power, at the look's Pocock level), as median (range). SE: the median standard error of the log change. "+
		"Measured, for the A/A series: the same formula with the standard error replaced by the standard deviation of the checks' own change points "+
		"(their real scatter from check to check, the machine's drift between checks included); the points' mean is the baseline's own error "+
		"(and the drift since it was made), which every check of the series shares.\n\n", thr*100)
	b.WriteString("| series | metric | printed smallest detectable | SE (log) | A/A points: mean, SD (log) | measured smallest detectable |\n|---|---|---|---:|---|---|\n")
	for _, s := range d.series {
		for _, x := range mdcs(d.checks[s.Key]) {
			meas, pts := "–", "–"
			if s.Change == nil {
				if mdc, sd, mean, ok := measuredMDC(x, thr); ok {
					meas, pts = fmt.Sprintf("%+.1f%%", mdc), fmt.Sprintf("%+.1f%%, %.3f (%d checks)", mean, sd, len(x.Point))
				}
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.3f | %s | %s |\n", s.Key, x.Column, spread(x.MDC), median(x.SE), pts, meas)
		}
	}
	for _, s := range d.series {
		if s.Change == nil || !s.Change.InRange {
			continue
		}
		fmt.Fprintf(b, "\nThe %s change (true %s) was found slower in %d of %d checks; ", s.Key, sizeWords(s.Change.Size), count(d.checks[s.Key]).Slower, count(d.checks[s.Key]).Ran)
		for _, x := range mdcs(d.checks[s.Key]) {
			if strings.HasPrefix(x.Column, baseVariant+"/") {
				fmt.Fprintf(b, "its checks printed a smallest detectable change of %s for the %s column, ", spread(x.MDC), baseVariant)
			}
		}
		b.WriteString("so a true size above the printed figure should be found in at least 80% of checks if the figure is right.\n")
	}
}

func (d *data) interleaveSection(b *mdBuf, n int) {
	if !d.p.has("interleave") {
		return
	}
	fmt.Fprintf(b, "\n## %d. Interleaved variants (bench/cmd/interleave)\n\n", n)
	b.WriteString(d.stepLine("interleave"))
	if d.ilMD == "" {
		return
	}
	// Its document, headings demoted under this one, its title left out.
	for _, l := range strings.Split(strings.TrimSpace(d.ilMD), "\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			continue
		case strings.HasPrefix(l, "#"):
			l = "##" + l
		}
		b.WriteString(l + "\n")
	}
}

func (d *data) stepsSection(b *mdBuf, n int) {
	fmt.Fprintf(b, "\n## %d. Every step\n\n| step | start (UTC) | took | exit | load before → after | command |\n|---|---|---:|---|---|---|\n", n)
	for _, name := range d.order {
		s := d.steps[name]
		st := fmt.Sprint(s.ExitCode)
		if s.note() != "" {
			st += s.note()
		}
		fmt.Fprintf(b, "| %s | %s | %v | %s | %.1f → %.1f | `%s` |\n", name, s.Start.UTC().Format("15:04:05"), s.Took().Round(time.Second), mdCell(st),
			s.Load1Before, s.Load1After, mdCell(strings.Join(d.rel(s.Argv), " ")))
	}
	if log, err := os.ReadFile(filepath.Join(d.dir, "cleanup.log")); err == nil {
		fmt.Fprintf(b, "\n`rtload cleanup` ran %d times (after the bench, and after every step that did not end on its own); what it said is in DIR/cleanup.log.\n",
			bytes.Count(log, []byte("\nafter "))+btoi(bytes.HasPrefix(log, []byte("after "))))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
