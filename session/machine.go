package session

import (
	"fmt"
	"io"
	"strings"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// fitMachine fits a validated scenario to this machine before anything is
// built: it resolves every `cpu: auto` of the spec and of each trial from
// the CPUs this process may use (f.AllowedCPUs), and checks the
// scenario's requirements against f. Unless allowDegraded, an unmet
// requirement stops here with an *engine.RequirementsError naming every
// one (exit 3). On success it prints each CPU chosen and each requirement
// given up to w, and returns the unmet requirements for
// engine.Options.Unmet.
func FitMachine(w io.Writer, spec *scenario.Spec, trials []scenario.Trial, f *sysinfo.Facts, allowDegraded bool) ([]string, error) {
	choices, err := spec.ResolveCPUs(f.AllowedCPUs)
	if err != nil {
		return nil, err
	}
	for i := range trials {
		if _, err := trials[i].Spec.ResolveCPUs(f.AllowedCPUs); err != nil {
			return nil, fmt.Errorf("trial %d (%s): %w", i+1, trials[i].Variant, err)
		}
	}
	f.ReadKernelConfig(spec.Requires.ConfigNames())
	unmet := engine.Requirements(spec.Requires, f)
	if len(unmet) > 0 && !allowDegraded {
		return nil, &engine.RequirementsError{Scenario: spec.File, Unmet: unmet}
	}
	for _, c := range choices {
		fmt.Fprintf(w, "readers[%d] (%s): cpu auto → %d: %s\n", c.Index, c.Reader, c.CPU, c.Why)
	}
	if r := spec.Requires; !r.Empty() && len(unmet) == 0 {
		fmt.Fprintln(w, "requirements met on this machine:", requiresText(r))
	}
	var out []string
	for _, u := range unmet {
		fmt.Fprintf(w, "requirement not met (--allow-degraded: the results are marked degraded): %s\n", u)
		out = append(out, u.String())
	}
	return out, nil
}

// requiresText lists a requires block in one line: "kernel >= 5.3,
// init_on_alloc=0, feature tun".
func requiresText(r scenario.Requires) string {
	var parts []string
	if r.Kernel != "" {
		parts = append(parts, "kernel "+string(r.Kernel))
	}
	for _, c := range r.Config {
		parts = append(parts, string(c))
	}
	for _, p := range r.Cmdline {
		parts = append(parts, string(p))
	}
	for _, f := range r.Features {
		parts = append(parts, "feature "+f.String())
	}
	if r.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpus %d", r.CPUs))
	}
	return strings.Join(parts, ", ")
}
