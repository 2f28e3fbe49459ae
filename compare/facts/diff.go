package facts

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
)

// envFact is one `rtload env` fact (a field of Summary.Env) as compare
// names it (its JSON name) and prints it ("(none)" when the run records
// none).
type envFact struct {
	name string
	get  func(e *results.Env) string
}

// The facts compare and its metadata header read.
var (
	factKernel         = envFact{"kernel", func(e *results.Env) string { return e.Kernel }}
	factKernelVersion  = envFact{"kernel_version", func(e *results.Env) string { return e.KernelVersion }}
	factCPUModel       = envFact{"cpu_model", func(e *results.Env) string { return e.CPUModel }}
	factCPUs           = envFact{"cpus", func(e *results.Env) string { return count(e.CPUs) }}
	factClocksource    = envFact{"clocksource", func(e *results.Env) string { return e.Clocksource }}
	factCmdline        = envFact{"cmdline", func(e *results.Env) string { return e.Cmdline }}
	factGovernor       = envFact{"cpufreq_governor", func(e *results.Env) string { return e.Governor }}
	factVirtualization = envFact{"virtualization", func(e *results.Env) string { return e.Virtualization }}
	factMicrocode      = envFact{"microcode", func(e *results.Env) string { return e.Microcode }}
	factIdleDriver     = envFact{"cpuidle_driver", func(e *results.Env) string { return e.CPUIdleDriver }}
	factIdleGovernor   = envFact{"cpuidle_governor", func(e *results.Env) string { return e.CPUIdleGovernor }}
)

// envWarn are the facts whose difference makes runs hard to compare;
// envInfo those expected to differ (comparing kernels is the point).
var (
	envWarn = []envFact{factCPUModel, factCPUs, factClocksource, factCmdline, factGovernor, factVirtualization}
	envInfo = []envFact{factKernel, factKernelVersion}
)

// of is the fact's value in run r.
func (f envFact) of(r compare.Run) string { return compare.OrNone(f.get(&r.Summary.Env)) }

// count prints a count, "" for 0 (not recorded).
func count(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// specIgnore are Spec paths expected to differ or reported elsewhere:
// the scenario name (Summary.Scenario is compared), its prose, and the
// number of processes: a sample size, which every verdict states as its
// n ("A 3 processes × 5 rounds, B 4 processes × 5 rounds"), not what a
// trial measures (rtload check asks for up to 200 and its budget stops
// it).
var specIgnore = []string{"name", "description", "processes"}

// Differences lists, field by field, how runs differ: warnings for what
// matters (scenario, CPU model and count, clocksource, kernel command
// line, cpufreq governor, virtualization, clock kind, unit and TSC read,
// a clock frequency differing by more than 0.1%, degraded mode, the
// seccomp filters the readers ran under as read back, and every leaf of
// the scenario as run except its name, description and processes) and
// info for what is expected to differ (kernel release and build). Values
// are in run order.
func Differences(all []compare.Run) (warnings, info []compare.Difference) {
	warnings, info = []compare.Difference{}, []compare.Difference{}
	// Runs read from another tool's histogram file have nothing to compare.
	var runs []compare.Run
	for _, r := range all {
		if !r.Foreign {
			runs = append(runs, r)
		}
	}
	if len(runs) < 2 {
		return warnings, info
	}
	field := func(dst *[]compare.Difference, name string, get func(r compare.Run) string) {
		vals := make([]string, len(runs))
		for i, r := range runs {
			vals[i] = get(r)
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				*dst = append(*dst, compare.Difference{Field: name, Values: vals})
				return
			}
		}
	}
	field(&warnings, "scenario", func(r compare.Run) string { return compare.OrNone(r.Summary.Scenario) })
	for _, f := range envWarn {
		field(&warnings, f.name, f.of)
	}
	field(&warnings, "clock kind", func(r compare.Run) string { return compare.OrNone(r.Summary.Clock.Kind) })
	field(&warnings, "clock unit", func(r compare.Run) string { return r.Summary.Clock.TickUnit() })
	// A TSC read with RDTSCP and one read LFENCE;RDTSC;LFENCE (a VM that
	// hides RDTSCP) carry a different read cost in every call.
	// Only between TSC clocks: another kind is "clock kind" already.
	if !slices.ContainsFunc(runs, func(r compare.Run) bool { return r.Summary.Clock.Kind != "tsc" }) {
		field(&warnings, "clock read", func(r compare.Run) string { return tscRead(r.Summary.Clock) })
	}
	// Hz: calibration differs a little between runs; 0.1% is a different clock.
	hz0 := runs[0].Summary.Clock.Hz
	for _, r := range runs[1:] {
		hz := r.Summary.Clock.Hz
		if math.Abs(hz-hz0) > 1e-3*math.Max(math.Abs(hz0), math.Abs(hz)) {
			field(&warnings, "clock hz", func(r compare.Run) string { return strconv.FormatFloat(r.Summary.Clock.Hz, 'f', 0, 64) })
			break
		}
	}
	field(&warnings, "degraded", func(r compare.Run) string {
		if !r.Summary.Degraded {
			return "false"
		}
		if len(r.Summary.DegradedReasons) == 0 {
			return "true"
		}
		return "true (" + strings.Join(r.Summary.DegradedReasons, "; ") + ")"
	})
	field(&warnings, "seccomp (read back)", func(r compare.Run) string { return seccompFact(r.Summary) })
	flat := make([]map[string]string, len(runs))
	var paths []string
	for i, r := range runs {
		flat[i] = r.Summary.Spec.Leaves()
		for p := range flat[i] {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		if slices.Contains(specIgnore, p) {
			continue
		}
		field(&warnings, "spec "+p, func(r compare.Run) string {
			for i := range runs {
				if runs[i].Label == r.Label {
					if v, ok := flat[i][p]; ok {
						return v
					}
				}
			}
			return compare.None
		})
	}
	for _, f := range envInfo {
		field(&info, f.name, f.of)
	}
	return warnings, info
}

// seccompFact is the seccomp filters s's readers ran under, as read back
// (results.Reader.Seccomp): each distinct "variant/reader: filter" of its
// timed trials, in run order, "; "-joined; "none" when no reader had one.
func seccompFact(s *results.Summary) string {
	var seen []string
	has := false
	for _, t := range s.Trials {
		for _, rd := range t.Readers {
			has = has || rd.Seccomp != nil
			l := rd.Name + ": " + rd.Seccomp.String()
			if t.Variant != "" {
				l = t.Variant + "/" + l
			}
			if !slices.Contains(seen, l) {
				seen = append(seen, l)
			}
		}
	}
	if !has {
		return "none"
	}
	return strings.Join(seen, "; ")
}

// tscRead is the instruction a tsc clock read (results.ClockInfo.Read;
// files written before it read RDTSCP), "" for other clocks.
func tscRead(c results.ClockInfo) string {
	switch {
	case c.Kind != "tsc":
		return ""
	case c.Read == "":
		return results.ReadRDTSCP
	}
	return c.Read
}
