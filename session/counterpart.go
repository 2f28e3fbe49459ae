package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// A counterpart of a scenario is one that differs from it only in what
// it requires of the machine: its name, description and requires: block.
// The shipped pairs are the two sides of a boot A/B: laight-450-hardened
// and laight-450-unhardened (hardened_usercopy=on / off), and
// cook-hackbench-init-off, -init-on-alloc and -init-on-free. A baseline
// made on one boot is checked on the other by running its own scenario
// (every --set override it ran with) under the counterpart's
// requirements: rtload check BASE --as COUNTERPART.

// counterpartFields are the top-level fields in which counterparts may
// differ.
var counterpartFields = []string{"name", "description", "requires"}

// specLeaves is spec's JSON leaves (results.Spec.Leaves) without the
// counterpart fields.
func specLeaves(spec results.Spec) map[string]string {
	l := spec.Leaves()
	for p := range l {
		for _, f := range counterpartFields {
			if p == f || strings.HasPrefix(p, f+".") || strings.HasPrefix(p, f+"[") {
				delete(l, p)
			}
		}
	}
	return l
}

// leafDiff lists the paths in which a and b differ, sorted, as
// "path: a → b".
func leafDiff(a, b map[string]string) []string {
	var out []string
	for p, va := range a {
		if vb, ok := b[p]; !ok || vb != va {
			out = append(out, fmt.Sprintf("%s: %s → %s", p, va, orUnset(vb, ok)))
		}
	}
	for p, vb := range b {
		if _, ok := a[p]; !ok {
			out = append(out, fmt.Sprintf("%s: (unset) → %s", p, vb))
		}
	}
	slices.Sort(out)
	return termsafe.Copy(out)
}

// specJSON is spec as a summary records it.
func specJSON(spec *scenario.Spec) (results.Spec, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", spec.Name, err)
	}
	return results.Spec(data), nil
}

// builtinOf is the built-in scenario a summary ran (its File is
// "built-in:NAME.yaml"), loaded fresh; nil when it ran a file or the
// built-in is not in this binary.
func builtinOf(s *results.Summary) *scenario.Spec {
	name, ok := strings.CutPrefix(s.File, "built-in:")
	if !ok {
		return nil
	}
	data, err := configs.Read(name)
	if err != nil {
		return nil
	}
	spec, err := scenario.Load(s.File, data)
	if err != nil {
		return nil
	}
	return spec
}

// asCounterpart is the scenario `check BASE --as AS` runs: the baseline's
// own, as its summary recorded it (every --set override kept), with AS's
// name, description and requires:. AS must be a counterpart of the
// baseline's scenario (differ from it only in those) when that scenario
// is a built-in this binary has; a usage error says what else differs
// otherwise. The lines it prints to w say what was kept and taken.
func asCounterpart(w io.Writer, baseDir string, base *results.Summary, as string) (*scenario.Spec, error) {
	if len(base.Spec) == 0 {
		return nil, UsageError{fmt.Errorf("--as %s: baseline %s records no scenario: name one (rtload check DIR SCENARIO)", as, baseDir)}
	}
	cp, err := ReadSpec(as)
	if err != nil {
		return nil, err
	}
	cpJSON, err := specJSON(cp)
	if err != nil {
		return nil, err
	}
	if own := builtinOf(base); own != nil {
		ownJSON, err := specJSON(own)
		if err != nil {
			return nil, err
		}
		if d := leafDiff(specLeaves(ownJSON), specLeaves(cpJSON)); len(d) > 0 {
			return nil, UsageError{fmt.Errorf("--as %s: not a counterpart of the baseline's scenario %s: besides name, description and requires: it differs in\n  - %s\n"+
				"(a counterpart differs only in what it requires of the machine); to check against another scenario, name it: rtload check %s %s",
				as, termsafe.Escape(base.Scenario), strings.Join(d[:min(len(d), 8)], "\n  - "), baseDir, as)}
		}
		if kept := leafDiff(specLeaves(ownJSON), specLeaves(base.Spec)); len(kept) > 0 {
			fmt.Fprintf(w, "check: --as %s keeps the baseline's overrides of %s: %s\n", cp.Name, termsafe.Escape(base.Scenario), strings.Join(kept, ", "))
		}
	} else {
		fmt.Fprintf(w, "check: the baseline ran %s, which is not a built-in: --as %s takes only its name, description and requires:, every other field as the baseline ran it\n",
			termsafe.Escape(base.File), cp.Name)
	}
	var doc, from map[string]any
	if err := json.Unmarshal(base.Spec, &doc); err != nil {
		return nil, fmt.Errorf("baseline %s: its scenario: %w", baseDir, err)
	}
	if err := json.Unmarshal(cpJSON, &from); err != nil {
		return nil, err
	}
	for _, f := range counterpartFields {
		if v, ok := from[f]; ok {
			doc[f] = v
		} else {
			delete(doc, f)
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "check: running the baseline's scenario as %s: its requires: in place of %s's\n", cp.Name, termsafe.Escape(base.Scenario))
	return scenario.LoadAsRun(filepath.Join(baseDir, results.SummaryFile)+" (spec, as "+cp.Name+")", data)
}

// counterparts are the built-in scenarios that are counterparts of the
// baseline's (s) and whose requirements this machine (f) meets: what
// --as can name on this boot. Empty when the baseline ran no built-in.
func counterparts(s *results.Summary, f *sysinfo.Facts) []string {
	var out, free []string
	for _, spec := range counterpartSpecs(s) {
		f.ReadKernelConfig(spec.Requires.ConfigNames())
		switch {
		case len(engine.Requirements(spec.Requires, f)) > 0:
		case spec.Requires.Empty():
			free = append(free, spec.Name)
		default:
			out = append(out, spec.Name)
		}
	}
	if len(out) == 0 {
		return free // one that requires nothing: only when no side fits this boot
	}
	return out
}

// counterpartSpecs are the built-in counterparts of the built-in scenario
// s ran, by name; none when s ran a file.
func counterpartSpecs(s *results.Summary) []*scenario.Spec {
	own := builtinOf(s)
	if own == nil {
		return nil
	}
	ownJSON, err := specJSON(own)
	if err != nil {
		return nil
	}
	want := specLeaves(ownJSON)
	var out []*scenario.Spec
	for _, e := range configs.List() {
		if e.Name == own.Name {
			continue
		}
		data, err := configs.Read(e.Name)
		if err != nil {
			continue
		}
		spec, err := scenario.Load("built-in:"+e.Name+".yaml", data)
		if err != nil {
			continue
		}
		if j, err := specJSON(spec); err == nil && len(leafDiff(want, specLeaves(j))) == 0 {
			out = append(out, spec)
		}
	}
	return out
}

// requirementFix is a check's refusal of a scenario whose requirements
// this boot does not meet (err, an *engine.RequirementsError): a usage
// error (exit 2, nothing run) naming the flag that runs the other side
// of the A/B (--as), or the ways out when there is none.
func requirementFix(err error, baseDir string, base *results.Summary, as string) error {
	var re *engine.RequirementsError
	if !errors.As(err, &re) {
		return err
	}
	facts := sysinfo.Gather()
	fix := "boot as the scenario requires (above), or name the scenario to run on this boot: rtload check " + baseDir + " SCENARIO"
	if as != "" {
		fix = "boot as " + as + " requires (above), or drop --as"
	}
	switch cps := counterparts(base, &facts); {
	case len(cps) == 1:
		fix = fmt.Sprintf("this boot is the other side of the A/B: rtload check %s --as %s (the baseline's scenario and overrides under %s's requirements, which this boot meets)", baseDir, cps[0], cps[0])
	case len(cps) > 1:
		fix = fmt.Sprintf("this boot is another side of the A/B: rtload check %s --as NAME, NAME one of %s (their requirements are met on this boot)", baseDir, strings.Join(cps, ", "))
	}
	return UsageError{fmt.Errorf("check: %w\nnothing was run (exit 2): %s", err, fix)}
}
