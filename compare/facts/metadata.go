package facts

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/results"
)

// metadataKernel and metadataMach are the `rtload env` facts the metadata
// header compares, in the order it lists them; kernel_config,
// vulnerabilities and the command line's parameters come between them
// (see Metadata).
var (
	metadataKernel = []envFact{factKernel, factKernelVersion}
	metadataMach   = []envFact{factClocksource, factMicrocode, factCPUModel, factCPUs, factGovernor,
		factVirtualization, factIdleDriver, factIdleGovernor}
)

// Metadata lists, as mmtests' compare header does, only the facts about
// the machine and kernel in which the runs differ, one Difference per
// fact, values in run order ("(none)" where a run does not record it):
// kernel release and build, each kernel command-line parameter
// ("cmdline init_on_free"; the kernel's part, before "--"), each kernel
// config option the runs recorded (hardening, preemption, HZ, debug
// options: "CONFIG_INIT_ON_FREE_DEFAULT_ON"), each CPU vulnerability's
// mitigation ("mitigation spectre_v2"), clocksource, microcode, CPU model
// and count, cpufreq governor, virtualization, the cpuidle driver and
// governor (C-states) and the cpu_dma_latency the trials held. Runs read
// from other tools' files are left out; with fewer than two rtload runs
// the list is empty.
func Metadata(all []compare.Run) []compare.Difference {
	out := []compare.Difference{}
	var runs []compare.Run
	for _, r := range all {
		if !r.Foreign {
			runs = append(runs, r)
		}
	}
	if len(runs) < 2 {
		return out
	}
	add := func(field string, get func(r compare.Run) string) {
		vals := make([]string, len(runs))
		for i, r := range runs {
			vals[i] = get(r)
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				out = append(out, compare.Difference{Field: field, Values: vals})
				return
			}
		}
	}
	for _, f := range metadataKernel {
		add(f.name, f.of)
	}
	params := make([]map[string]string, len(runs))
	var keys []string
	for i, r := range runs {
		params[i] = map[string]string{}
		for _, p := range cmdlineParams(r.Summary.Env.Cmdline) {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				v = "(flag)"
			}
			params[i][k] = v
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		add("cmdline "+k, func(r compare.Run) string { return lookup(params[indexOf(runs, r)], k) })
	}
	for _, m := range []struct {
		get    func(e *results.Env) map[string]string
		prefix string
	}{
		{func(e *results.Env) map[string]string { return e.KernelConfig }, ""},
		{func(e *results.Env) map[string]string { return e.Vulnerabilities }, "mitigation "},
	} {
		maps := make([]map[string]string, len(runs))
		var names []string
		for i, r := range runs {
			maps[i] = m.get(&r.Summary.Env)
			for k := range maps[i] {
				if !slices.Contains(names, k) {
					names = append(names, k)
				}
			}
		}
		slices.Sort(names)
		for _, k := range names {
			add(m.prefix+k, func(r compare.Run) string { return lookup(maps[indexOf(runs, r)], k) })
		}
	}
	for _, f := range metadataMach {
		add(f.name, f.of)
	}
	add("cpu_dma_latency", func(r compare.Run) string { return dmaLatency(r) })
	return out
}

func indexOf(runs []compare.Run, r compare.Run) int {
	for i := range runs {
		if runs[i].Label == r.Label {
			return i
		}
	}
	return 0
}

func lookup(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return compare.None
}

// cmdlineParams splits the kernel's part of a command line (before a bare
// "--") into its parameters; a quoted value keeps its spaces.
func cmdlineParams(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	flush := func() bool {
		if !in {
			return false
		}
		tok := strings.ReplaceAll(cur.String(), `"`, "")
		cur.Reset()
		in = false
		if tok == "--" {
			return true
		}
		out = append(out, tok)
		return false
	}
	for _, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
			in = true
			cur.WriteRune(c)
		case (c == ' ' || c == '\t' || c == '\n') && !quoted:
			if flush() {
				return out
			}
		default:
			in = true
			cur.WriteRune(c)
		}
	}
	flush()
	return out
}

// dmaLatency is the cpu_dma_latency the run's trials held: "0 µs", "not
// held" for −1, several values comma-separated in ascending order.
func dmaLatency(r compare.Run) string {
	var vals []int
	for _, t := range r.Summary.Trials {
		if !slices.Contains(vals, t.CPUDMALatencyUs) {
			vals = append(vals, t.CPUDMALatencyUs)
		}
	}
	if len(vals) == 0 {
		return compare.None
	}
	slices.Sort(vals)
	parts := make([]string, len(vals))
	for i, v := range vals {
		if v < 0 {
			parts[i] = "not held"
		} else {
			parts[i] = strconv.Itoa(v) + " µs"
		}
	}
	return strings.Join(parts, ", ")
}
