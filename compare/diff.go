package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// none stands for a value a run does not record.
const none = "(none)"

// envWarn are the `rtload env` facts (Summary.Env keys) whose difference
// makes runs hard to compare; envInfo those expected to differ (comparing
// kernels is the point).
var (
	envWarn = []string{"cpu_model", "cpus", "clocksource", "cmdline", "cpufreq_governor", "virtualization"}
	envInfo = []string{"kernel", "kernel_version"}
)

// specIgnore are Spec paths expected to differ or reported elsewhere:
// the scenario name (Summary.Scenario is compared), its prose, and the
// number of processes: a sample size, which every verdict states as its
// n ("A 3 processes × 5 rounds, B 4 processes × 5 rounds"), not what a
// trial measures (rtload check asks for up to 200 and its budget stops
// it).
var specIgnore = []string{"name", "description", "processes"}

// Differences lists, field by field, how runs differ: warnings for what
// matters (scenario, CPU model and count, clocksource, kernel command
// line, cpufreq governor, virtualization, clock kind and unit, a clock
// frequency differing by more than 0.1%, degraded mode, and every leaf of
// the scenario as run except its name, description and processes) and
// info for what is expected to differ (kernel release and build). Values
// are in run order.
func Differences(all []Run) (warnings, info []Difference) {
	warnings, info = []Difference{}, []Difference{}
	// Runs read from another tool's histogram file have nothing to compare.
	var runs []Run
	for _, r := range all {
		if !r.Foreign {
			runs = append(runs, r)
		}
	}
	if len(runs) < 2 {
		return warnings, info
	}
	field := func(dst *[]Difference, name string, get func(r Run) string) {
		vals := make([]string, len(runs))
		for i, r := range runs {
			vals[i] = get(r)
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				*dst = append(*dst, Difference{Field: name, Values: vals})
				return
			}
		}
	}
	field(&warnings, "scenario", func(r Run) string { return orNone(r.Summary.Scenario) })
	for _, k := range envWarn {
		field(&warnings, k, func(r Run) string { return envString(r.Summary.Env, k) })
	}
	field(&warnings, "clock kind", func(r Run) string { return orNone(r.Summary.Clock.Kind) })
	field(&warnings, "clock unit", func(r Run) string { return orNone(r.Summary.Clock.Unit) })
	// Hz: calibration differs a little between runs; 0.1% is a different clock.
	hz0 := runs[0].Summary.Clock.Hz
	for _, r := range runs[1:] {
		hz := r.Summary.Clock.Hz
		if math.Abs(hz-hz0) > 1e-3*math.Max(math.Abs(hz0), math.Abs(hz)) {
			field(&warnings, "clock hz", func(r Run) string { return strconv.FormatFloat(r.Summary.Clock.Hz, 'f', 0, 64) })
			break
		}
	}
	field(&warnings, "degraded", func(r Run) string {
		if !r.Summary.Degraded {
			return "false"
		}
		if len(r.Summary.DegradedReasons) == 0 {
			return "true"
		}
		return "true (" + strings.Join(r.Summary.DegradedReasons, "; ") + ")"
	})
	flat := make([]map[string]string, len(runs))
	var paths []string
	for i, r := range runs {
		flat[i] = map[string]string{}
		flatten(flat[i], "", normalise(r.Summary.Spec))
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
		field(&warnings, "spec "+p, func(r Run) string {
			for i := range runs {
				if runs[i].Label == r.Label {
					if v, ok := flat[i][p]; ok {
						return v
					}
				}
			}
			return none
		})
	}
	for _, k := range envInfo {
		field(&info, k, func(r Run) string { return envString(r.Summary.Env, k) })
	}
	return warnings, info
}

// normalise round-trips v through JSON so a Spec built in code (a struct)
// and one decoded from summary.json (a map) flatten the same way.
func normalise(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// flatten writes every leaf of v as path → value: "traffic[0].size" → "64B".
func flatten(dst map[string]string, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(dst, p, e)
		}
	case []any:
		if len(x) == 0 {
			dst[path] = "[]"
		}
		for i, e := range x {
			flatten(dst, fmt.Sprintf("%s[%d]", path, i), e)
		}
	default:
		dst[path] = scalar(x)
	}
}

// envString is Env[key] (Summary.Env decoded as a JSON object) as text.
func envString(env any, key string) string {
	m, ok := env.(map[string]any)
	if !ok {
		if m, ok = normalise(env).(map[string]any); !ok {
			return none
		}
	}
	v, ok := m[key]
	if !ok {
		return none
	}
	return scalar(v)
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
