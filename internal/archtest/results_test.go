package archtest

import (
	"slices"
	"strings"
	"testing"
)

// kernelPkgs are the packages that touch the kernel, the machine or the
// run (module paths relative to the module root, or full import paths).
// Readers and renderers of results may depend on none of them, directly
// or through another package. profile is pure (explain and compare
// attribute from written profiles through it); its kernel half is
// profile/sampler.
var kernelPkgs = []string{
	"golang.org/x/sys/unix", "github.com/vishvananda/netlink", "github.com/vishvananda/netns",
	"rt", "net/udp", "net/tap", "net/netns", "probe", "noise", "workload", "sysinfo", "profile/sampler", "engine", "exporter",
	"scenario", "cmd/rtload",
}

// deps returns every package rel depends on (go list's Deps), as paths
// relative to the module root for the module's own packages.
func deps(mod map[string]pkg, modPath, rel string) []string {
	var all []string
	for _, d := range mod[rel].Deps {
		all = append(all, strings.TrimPrefix(strings.TrimPrefix(d, modPath), "/"))
	}
	return all
}

// TestResultsBoundaries checks the floors of the results contract (STYLE.md
// "Package layout"): results/safeio, the safe file layer under the
// contract, imports only stdlib leaves; results imports it and record;
// results/store, the contract's files read and written, results, safeio
// and record;
// results/wakelog, the wakeup logs on the contract, results, safeio and
// record;
// interop results, safeio and record; report results and record, never a file or the schema's
// producers; compare/view, the views of a comparison, compare, results,
// stats and report, never a file; compare/facts compare, results,
// explain and profile; compare/auto compare, results and stats;
// compare/load compare, the contract and its readers (store, safeio, wakelog,
// interop), explain and record; compare none of them; verdict compare, its
// view and facts, results, stats and report; readers of results
// (compare and its subpackages, explain, plot, verdict) and the contract
// itself depend on no kernel package, no scenario and no engine, however
// indirectly; and engine writes results, never through report.
func TestResultsBoundaries(t *testing.T) {
	mod, modPath, std := load(t)
	direct := []struct {
		pkg   string
		allow []string
	}{
		// filekind and termsafe are pure stdlib leaves: the words for a
		// file's type, and escaping text from results for the terminal.
		{"results/safeio", []string{"internal/filekind", "internal/termsafe"}},
		{"results", []string{"results/safeio", "record", "internal/filekind", "internal/termsafe", "github.com/HdrHistogram/hdrhistogram-go"}},
		// The contract's files read and written: never the contract
		// importing them back.
		{"results/store", []string{"results", "results/safeio", "record", "internal/termsafe"}},
		{"results/wakelog", []string{"results", "results/safeio", "record", "internal/termsafe"}},
		{"interop", []string{"results", "results/safeio", "record", "github.com/HdrHistogram/hdrhistogram-go"}},
		{"report", []string{"results", "record", "internal/termsafe"}},
		{"internal/termsafe", nil},
		// The gates sit on the model of a comparison (with its views, the
		// runs' facts and the runs read: compare/load) and the statistics:
		// never on a run, the kernel or the command.
		{"verdict", []string{"compare", "compare/view", "compare/facts", "compare/load", "results", "stats", "report", "internal/termsafe"}},
		// The views render the model of a comparison: they never compute
		// it (compare) nor judge it (verdict).
		{"compare/view", []string{"compare", "results", "stats", "report", "internal/termsafe"}},
		// What runs are beside their numbers: the runs' summaries and
		// their profiles, never a view.
		{"compare/facts", []string{"compare", "results", "explain", "profile"}},
		// rounds: auto's rule reads the headline metrics, as a look does.
		{"compare/auto", []string{"compare", "results", "stats"}},
		// Runs are read here, through the contract: compare computes on
		// them and reads no file.
		{"compare/load", []string{"compare", "results", "results/store", "results/safeio", "results/wakelog", "interop", "explain", "record"}},
	}
	for _, rule := range direct {
		p, ok := mod[rule.pkg]
		if !ok {
			t.Errorf("package %s missing from go list", rule.pkg)
			continue
		}
		for _, imp := range p.Imports {
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, modPath), "/")
			if !std[imp] && !slices.Contains(rule.allow, rel) && !slices.Contains(rule.allow, imp) {
				t.Errorf("%s imports %s (allowed: stdlib, %s)", rule.pkg, imp, strings.Join(rule.allow, ", "))
			}
		}
	}
	// report and compare/view render, and compare computes on runs
	// compare/load read: no os file I/O besides what fmt and io need.
	for _, pkg := range []string{"report", "compare/view", "compare"} {
		p, ok := mod[pkg]
		if !ok {
			continue
		}
		for _, imp := range []string{"os", "io/fs", "path/filepath", "syscall"} {
			if slices.Contains(p.Imports, imp) {
				t.Errorf("%s imports %s: file I/O belongs to results", pkg, imp)
			}
		}
	}
	// compare is the model: its views and the runs' facts sit on it,
	// never under it.
	if p, ok := mod["compare"]; ok {
		for _, up := range []string{"compare/view", "compare/facts", "compare/auto", "compare/load"} {
			if slices.Contains(p.Imports, modPath+"/"+up) {
				t.Errorf("compare imports %s: the model sits under it", up)
			}
		}
	}
	for _, pkg := range []string{"results/safeio", "results", "results/store", "results/wakelog", "interop", "report", "compare", "compare/view", "compare/facts", "compare/auto", "compare/load", "explain", "plot", "verdict"} {
		if _, ok := mod[pkg]; !ok {
			t.Errorf("package %s missing from go list", pkg)
			continue
		}
		for _, d := range deps(mod, modPath, pkg) {
			if slices.Contains(kernelPkgs, d) {
				t.Errorf("%s depends on %s (readers of results never reach the kernel, the scenario or the engine)", pkg, d)
			}
		}
	}
	if p, ok := mod["engine"]; ok {
		if slices.Contains(p.Imports, modPath+"/report") {
			t.Errorf("engine imports report: it writes results through package results")
		}
	}
}
