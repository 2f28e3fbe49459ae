package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Spec is the scenario as a run recorded it: the JSON of scenario.Spec
// after Load (defaults filled, variants not applied), kept byte for byte.
// scenario owns its schema and results reads none of it but Plan's
// fields; the whole is for `rtload check`, which runs it again
// (scenario.LoadAsRun), and for compare, which diffs it leaf by leaf
// (Leaves). nil when a summary records no scenario (another tool's file).
type Spec []byte

// MarshalJSON writes the recorded JSON as it is ("null" when there is none).
func (s Spec) MarshalJSON() ([]byte, error) {
	if len(s) == 0 {
		return []byte("null"), nil
	}
	return s, nil
}

// UnmarshalJSON keeps the JSON value, compacted (json.Compact: however
// the file was indented, the same scenario gives the same bytes); "null"
// keeps nothing.
func (s *Spec) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*s = buf.Bytes()
	return nil
}

// Leaves lists every leaf of the scenario as path → value, the paths as
// --set writes them: "traffic[0].size" → "64B", "readers[0].cpu" → "1";
// an empty list is "[]". Values are the JSON scalars as text (strings
// unquoted, numbers as Go's shortest 'g' form). nil when there is no
// scenario or its JSON is not an object.
func (s Spec) Leaves() map[string]string {
	var v map[string]any
	if len(s) == 0 || json.Unmarshal(s, &v) != nil {
		return nil
	}
	out := map[string]string{}
	flatten(out, "", v)
	return out
}

// flatten writes every leaf of v into dst under path.
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
			flatten(dst, path+"["+strconv.Itoa(i)+"]", e)
		}
	case nil:
		dst[path] = "null"
	case string:
		dst[path] = x
	case float64:
		dst[path] = strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		dst[path] = strconv.FormatBool(x)
	default:
		dst[path] = fmt.Sprint(x)
	}
}

// Plan is what the readers of results ask of the scenario as run, typed:
// read from Spec's fields of the same names (PlanOf), so that no reader
// decodes the scenario's JSON itself.
type Plan struct {
	// Known is false when the summary records no scenario, or one whose
	// fields do not read: then every other field is zero and says nothing.
	Known bool
	// Duration is each trial's measured time; 0 for a soak, which runs
	// until stopped (duration).
	Duration time.Duration
	// Warmup runs unmeasured before each trial (warmup).
	Warmup time.Duration
	// Interval is how often a soak wrote interval records and checkpoints
	// (interval; 0: none).
	Interval time.Duration
	// Slice is a soak's turn per variant when several alternate: each
	// trial is then one slice (slice; 0: none).
	Slice time.Duration
	// Rounds is the rounds planned; 0 for rounds: auto (Summary.Auto says
	// how many ran).
	Rounds int
	// Processes is how many processes ran the plan (processes; 1 without
	// --processes).
	Processes int
	// Variants names the scenario's variants, in order; empty when it has
	// none.
	Variants []string
}

// Soak reports whether the plan is a soak (duration 0: until stopped).
func (p Plan) Soak() bool { return p.Known && p.Duration == 0 }

// Sliced reports whether the plan is a soak whose variants alternate in
// slices, each trial one slice.
func (p Plan) Sliced() bool { return p.Soak() && p.Slice > 0 }

// PlanOf reads the Plan of a recorded scenario: durations as Go duration
// strings ("10s") or ns, rounds as a count or "auto". A scenario whose
// JSON does not read gives the zero Plan (Known false).
func PlanOf(spec Spec) Plan {
	var f struct {
		Duration, Warmup, Interval, Slice json.RawMessage
		Rounds                            json.RawMessage
		Processes                         int
		Variants                          []struct{ Name string }
	}
	if len(spec) == 0 || json.Unmarshal(spec, &f) != nil {
		return Plan{}
	}
	p := Plan{Processes: max(f.Processes, 1)}
	var ok [5]bool
	p.Duration, ok[0] = DurationOf(f.Duration)
	p.Warmup, ok[1] = DurationOf(f.Warmup)
	p.Interval, ok[2] = DurationOf(f.Interval)
	p.Slice, ok[3] = DurationOf(f.Slice)
	p.Rounds, ok[4] = roundsOf(f.Rounds)
	for _, v := range f.Variants {
		p.Variants = append(p.Variants, v.Name)
	}
	p.Known = ok[0] && ok[1] && ok[2] && ok[3] && ok[4]
	if !p.Known {
		return Plan{}
	}
	return p
}

// DurationOf reads a duration as summary.json's spec records it: a Go
// duration string ("3ms"), "0", a number of ns, or absent or null (0); ok
// is false for anything else.
func DurationOf(raw json.RawMessage) (time.Duration, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "0" {
			return 0, true
		}
		d, err := time.ParseDuration(s)
		return d, err == nil
	}
	var ns int64
	err := json.Unmarshal(raw, &ns)
	return time.Duration(ns), err == nil
}

// roundsOf reads recorded rounds: a count, "auto" (0), or absent (1).
func roundsOf(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 1, true
	}
	if bytes.Equal(raw, []byte(`"auto"`)) {
		return 0, true
	}
	var n int
	err := json.Unmarshal(raw, &n)
	return n, err == nil && n >= 1
}

// SetSpec records data, the JSON of the scenario as run (a JSON object),
// as s.Spec (compacted, as a summary reads it back), and reads its Plan.
func (s *Summary) SetSpec(data []byte) error {
	var buf bytes.Buffer
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' || json.Compact(&buf, t) != nil {
		return errors.New("summary spec: not a JSON object")
	}
	s.Spec = buf.Bytes()
	s.Plan = PlanOf(s.Spec)
	return nil
}
