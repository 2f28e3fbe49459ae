package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// sessionFree are the scenario paths a session may change against the
// sessions before it in one baseline: how many units it measures, never
// what they measure.
var sessionFree = []string{"processes", "rounds", "repeat"}

// openAppend opens the sessions directory of run --append BASE and
// checks that this run of spec on this machine (env) is another session
// of the same baseline (sessionMismatch). A refusal is a usage error
// (exit 2) naming what differs and the fix; nothing is created for it.
func openAppend(base string, spec *scenario.Spec, env sysinfo.Facts) (*store.Sessions, error) {
	s, err := store.OpenSessions(base)
	if err != nil {
		return nil, UsageError{fmt.Errorf("--append: %w", err)}
	}
	if len(s.Dirs) == 0 {
		return s, nil
	}
	first, err := store.ReadSummary(s.Dirs[0])
	if err != nil {
		s.Close()
		return nil, UsageError{fmt.Errorf("--append %s: its first session: %w", base, err)}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		s.Close()
		return nil, err
	}
	if why := sessionMismatch(first, results.Spec(data), env.Env); len(why) > 0 {
		s.Close()
		return nil, UsageError{fmt.Errorf("--append %s: this run is not another session of that baseline (%s holds %s, first run %s):\n  - %s\n"+
			"a session must run the same scenario (only %s may differ) on the same machine, kernel and command line; "+
			"what a boot changes (its boot id, its time, the machine's state) may differ. Give another --append directory for this one",
			termsafe.Escape(base), termsafe.Escape(base), plural(len(s.Dirs), "session"), first.Start.Format("2006-01-02 15:04"),
			strings.Join(why, "\n  - "), strings.Join(sessionFree, ", "))}
	}
	return s, nil
}

// sessionMismatch lists how a new session (its scenario's JSON spec, on
// a machine of env) differs from first, the baseline's first session,
// in what must match: every scenario field but sessionFree; the kernel
// release and build, the command line, the CPU model, the CPU count and
// the architecture. Empty when it may join.
func sessionMismatch(first *results.Summary, spec results.Spec, env results.Env) []string {
	var why []string
	was, now := first.Spec.Leaves(), spec.Leaves()
	var paths []string
	for p := range was {
		paths = append(paths, p)
	}
	for p := range now {
		if _, ok := was[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	free := func(p string) bool {
		for _, f := range sessionFree {
			if p == f || strings.HasPrefix(p, f+".") || strings.HasPrefix(p, f+"[") {
				return true
			}
		}
		return false
	}
	for _, p := range paths {
		a, okA := was[p]
		b, okB := now[p]
		if free(p) || (okA && okB && a == b) {
			continue
		}
		why = append(why, fmt.Sprintf("scenario %s: %s, this run %s", p, orUnset(a, okA), orUnset(b, okB)))
	}
	e := first.Env
	for _, c := range []struct{ what, a, b string }{
		{"kernel", e.Kernel, env.Kernel},
		{"kernel build", e.KernelVersion, env.KernelVersion},
		{"command line", e.Cmdline, env.Cmdline},
		{"cpu model", e.CPUModel, env.CPUModel},
		{"cpus", fmt.Sprint(e.CPUs), fmt.Sprint(env.CPUs)},
		{"arch", e.Arch, env.Arch},
	} {
		if c.a != c.b {
			why = append(why, fmt.Sprintf("%s: %q, this boot %q", c.what, c.a, c.b))
		}
	}
	return termsafe.Copy(why)
}

func orUnset(v string, ok bool) string {
	if !ok {
		return "(unset)"
	}
	return v
}

// endAppend records the session in dir (the run's Outcome o) in the
// sessions directory s, or removes dir when the run left it empty (and
// s itself when this run made it: Discard), and says which session it
// was.
func endAppend(errw io.Writer, s *store.Sessions, dir string, o Outcome) error {
	if o.Sum == nil {
		s.RemoveSessionDir(dir)
		s.Discard()
		return nil
	}
	if err := s.Add(dir, o.Sum); err != nil {
		return fmt.Errorf("--append: the session's results are in %s, but %w", dir, err)
	}
	n, boots := len(s.Index.Sessions), s.Index.Boots()
	of := ""
	if boots < n {
		of = fmt.Sprintf("; %d sessions from %s: sessions of one boot share its boot effect, which only other boots measure", n, plural(boots, "boot"))
	}
	fmt.Fprintf(errw, "rtload: session %d of %s%s: %s\n", n, termsafe.Escape(s.Path()), of, termsafe.Escape(dir))
	return nil
}

// Run executes plan with opt (Execute); with appendTo (run --append
// BASE) as a new session of the sessions directory BASE: its next
// session's directory the run's, recorded there after the run (or
// removed when the run left it empty). An error recording it is joined
// with the run's own.
func Run(w *Watch, plan *Plan, opt Options, appendTo string) (Outcome, error) {
	if appendTo == "" {
		return Execute(w, plan, opt)
	}
	if opt.Out != "" {
		return Outcome{}, UsageError{errors.New("--append and --out: give one (--append BASE writes the session into BASE/sNNN)")}
	}
	sess, err := openAppend(appendTo, plan.Spec, sysinfo.Gather())
	if err != nil {
		return Outcome{}, err
	}
	defer sess.Close()
	if opt.Out, err = sess.Next(); err != nil {
		return Outcome{}, err
	}
	o, err := Execute(w, plan, opt)
	if aerr := endAppend(opt.Log, sess, opt.Out, o); aerr != nil {
		return o, errors.Join(err, o.RunErr, aerr)
	}
	return o, err
}
