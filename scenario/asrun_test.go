package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// asRun is s as summary.json records it, loaded back with LoadAsRun.
func asRun(t *testing.T, s *Spec) *Spec {
	t.Helper()
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadAsRun("summary.json (spec)", js)
	if err != nil {
		t.Fatalf("LoadAsRun: %v\n%s", err, js)
	}
	return back
}

// trialsJSON is every trial's spec of s as JSON, for comparing two specs
// by what they run.
func trialsJSON(t *testing.T, s *Spec) []any {
	t.Helper()
	if err := s.Validate(Host{NumCPU: 4}); err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, tr := range trials {
		b, _ := json.Marshal(tr.Spec)
		var v any
		_ = json.Unmarshal(b, &v)
		out = append(out, map[string]any{"variant": tr.Variant, "round": tr.Round, "spec": v})
	}
	return out
}

// TestLoadAsRunBuiltins: every built-in scenario, written as summary.json
// writes it and loaded back, runs the same trials.
func TestLoadAsRunBuiltins(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load(f, data)
			if err != nil {
				t.Fatal(err)
			}
			want := trialsJSON(t, s)
			if diff := cmp.Diff(want, trialsJSON(t, asRun(t, s))); diff != "" {
				t.Errorf("trials differ after a round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadAsRunRederives: fields the JSON spells out but the defaults gave
// are derived again, by variants and by Apply, as in the run.
func TestLoadAsRunRederives(t *testing.T) {
	src := `
endpoints: [{name: s, count: 4}]
traffic: [{endpoint: s, interval: 20ms}]
readers: [{name: rt, endpoints: [s], cpu: 1}]
probes: [{name: hb, kind: messaging}]
variants:
  - {name: fifo, set: {readers[0].policy: fifo}}
  - {name: other, set: {readers[0].policy: other}}
`
	s, err := Load("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	back := asRun(t, s)
	// Without re-deriving, variant "other" would keep priority 80 and be
	// refused (priority must be 0 for policy other).
	if diff := cmp.Diff(trialsJSON(t, s), trialsJSON(t, back)); diff != "" {
		t.Errorf("trials differ (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		set  string
		get  func(s *Spec) any
		want any
	}{
		{"a soak duration brings the soak interval", "duration=0", func(s *Spec) any { return s.Interval }, defaultSoakInterval},
		{"policy other brings priority 0", "readers[0].policy=other", func(s *Spec) any { return s.Readers[0].Priority }, 0},
		{"a probe kind brings its parameters", "probes[0].kind=file_write", func(s *Spec) any { return s.Probes[0].Block }, defaultProbeBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := asRun(t, s)
			if err := c.Apply([]string{tc.set}); err != nil {
				t.Fatal(err)
			}
			if got := tc.get(c); got != tc.want {
				t.Errorf("after --set %s: %v, want %v", tc.set, got, tc.want)
			}
		})
	}
	// A value that is not the default stays given.
	c := asRun(t, s)
	c.Readers[0].Priority = 42
	c = asRun(t, c)
	if err := c.Apply([]string{"readers[0].period=20ms"}); err != nil || c.Readers[0].Priority != 42 {
		t.Errorf("priority %d (err %v), want the given 42", c.Readers[0].Priority, err)
	}
}

func TestLoadAsRunErrors(t *testing.T) {
	_, err := LoadAsRun("d/summary.json (spec)", []byte(`{"name": "x", "readers": [{"cpu": "one"}]}`))
	if err == nil || !strings.Contains(err.Error(), `d/summary.json (spec):1:`) || !strings.Contains(err.Error(), "readers[0].cpu") {
		t.Errorf("err %v, want the file, position and field", err)
	}
}
