package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rd is a reader on cpu (CPUAuto for auto), named name.
func rd(name string, cpu CPU) Reader { return Reader{Name: name, CPU: cpu} }

// TestChooseCPUs is the cpu: auto rule: allowed set and readers in, one
// CPU per auto reader out.
func TestChooseCPUs(t *testing.T) {
	tests := []struct {
		name         string
		allowed      []int
		housekeeping []int
		readers      []Reader
		want         []int  // the CPU of each auto reader, in order
		wantErr      string // substring; "" = no error
	}{
		// taskset -c 0, or a one-CPU container: the only CPU there is.
		{"one allowed CPU", []int{0}, nil, []Reader{rd("a", CPUAuto)}, []int{0}, ""},
		// The lowest CPU keeps the machinery; the reader takes the highest.
		{"two CPUs: the highest", []int{0, 1}, nil, []Reader{rd("a", CPUAuto)}, []int{1}, ""},
		{"a container's cpuset", []int{4, 5, 6, 7}, nil, []Reader{rd("a", CPUAuto)}, []int{7}, ""},
		{"unsorted with repeats", []int{3, 1, 3, 2}, nil, []Reader{rd("a", CPUAuto)}, []int{3}, ""},
		// A fixed reader's CPU is skipped.
		{"beside a fixed reader", []int{0, 1, 2, 3}, nil, []Reader{rd("f", 3), rd("a", CPUAuto)}, []int{2}, ""},
		{"two auto readers", []int{0, 1, 2, 3}, nil, []Reader{rd("a", CPUAuto), rd("b", CPUAuto)}, []int{3, 2}, ""},
		// Given housekeeping CPUs are kept free instead of the lowest one.
		{"housekeeping given", []int{0, 1, 2, 3}, []int{3}, []Reader{rd("a", CPUAuto)}, []int{2}, ""},
		{"housekeeping given, lowest free", []int{0, 1}, []int{1}, []Reader{rd("a", CPUAuto)}, []int{0}, ""},
		// Only the housekeeping CPU is left: it is shared, not refused.
		{"only the reserved CPU left", []int{0, 1}, nil, []Reader{rd("f", 1), rd("a", CPUAuto)}, []int{0}, ""},
		{"every CPU has a reader", []int{0, 1}, nil, []Reader{rd("f", 0), rd("g", 1), rd("a", CPUAuto)}, nil,
			"readers[2].cpu: auto: every allowed CPU (0,1) already has a reader"},
		{"one CPU, taken by a fixed reader", []int{0}, nil, []Reader{rd("f", 0), rd("a", CPUAuto)}, nil,
			"auto: every allowed CPU (0) already has a reader"},
		{"a large machine's set is listed in part", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, nil,
			[]Reader{rd("a", 0), rd("b", 1), rd("c", 2), rd("d", 3), rd("e", 4), rd("f", 5), rd("g", 6), rd("h", 7), rd("i", 8), rd("j", 9),
				rd("k", 10), rd("l", 11), rd("m", 12), rd("n", 13), rd("o", 14), rd("p", 15), rd("q", 16), rd("r", 17), rd("z", CPUAuto)},
			nil, "every allowed CPU (0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,… (18 CPUs)) already has a reader"},
		{"allowed unknown", nil, nil, []Reader{rd("a", CPUAuto)}, nil, "auto: the CPUs this process may use are unknown"},
		// No auto reader: nothing to choose, whatever the set.
		{"fixed readers only", nil, nil, []Reader{rd("f", 5)}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, e := ChooseCPUs(tt.allowed, tt.housekeeping, tt.readers)
			if tt.wantErr != "" {
				if e == nil || !strings.Contains(e.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", e, tt.wantErr)
				}
				return
			}
			if e != nil {
				t.Fatal(e)
			}
			var cpus []int
			for _, c := range got {
				cpus = append(cpus, c.CPU)
				if c.Why == "" || tt.readers[c.Index].Name != c.Reader {
					t.Errorf("choice %+v: no reason, or the wrong reader", c)
				}
			}
			if diff := cmp.Diff(tt.want, cpus); diff != "" {
				t.Errorf("CPUs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCPUText decodes cpu: auto and numbers from YAML and --set, and
// keeps summary.json's number for a fixed CPU.
func TestCPUText(t *testing.T) {
	s := mustLoad(t, "readers: [{cpu: auto}, {cpu: 3}]\n")
	if s.Readers[0].CPU != CPUAuto || s.Readers[1].CPU != 3 {
		t.Fatalf("cpus %v %v", s.Readers[0].CPU, s.Readers[1].CPU)
	}
	if err := s.Apply([]string{"readers[1].cpu=auto", "readers[0].cpu= 2"}); err != nil {
		t.Fatal(err)
	}
	if s.Readers[0].CPU != 2 || s.Readers[1].CPU != CPUAuto {
		t.Fatalf("after --set: %v %v", s.Readers[0].CPU, s.Readers[1].CPU)
	}
	b, err := json.Marshal(s.Readers)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cpu":2,`) || !strings.Contains(string(b), `"cpu":"auto"`) {
		t.Errorf("JSON %s: want a number for a fixed CPU and \"auto\" for auto", b)
	}
	var back []Reader
	if err := json.Unmarshal(b, &back); err != nil || back[0].CPU != 2 || back[1].CPU != CPUAuto {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	for _, bad := range []string{"readers: [{cpu: any}]\n", "readers: [{cpu: 1.5}]\n"} {
		if _, err := Load("x.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "expected a CPU number or auto") ||
			!strings.Contains(err.Error(), "(allowed: auto, or a CPU number ≥ 0)") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestResolveCPUs resolves auto in the spec and in a trial whose variant
// sets it, records the choice, and leaves fixed CPUs alone.
func TestResolveCPUs(t *testing.T) {
	s := mustLoad(t, "readers: [{name: a, cpu: auto}, {name: f, cpu: 0}]\n"+
		"variants: [{name: x}, {name: y, set: {readers[1].cpu: auto}}]\n")
	allowed := []int{0, 1, 2}
	if err := s.Validate(Host{NumCPU: 3, Allowed: allowed}); err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	choices, err := s.ResolveCPUs(allowed)
	if err != nil {
		t.Fatal(err)
	}
	if len(choices) != 1 || choices[0].CPU != 2 || s.Readers[0].CPU != 2 || !s.Readers[0].AutoCPU || s.Readers[1].AutoCPU {
		t.Errorf("spec: choices %+v, readers %+v", choices, s.Readers)
	}
	if _, err := trials[1].Spec.ResolveCPUs(allowed); err != nil {
		t.Fatal(err)
	}
	// Reader a takes 2 (highest), reader f (auto in variant y) takes 1:
	// CPU 0 stays housekeeping's.
	if r := trials[1].Spec.Readers; r[0].CPU != 2 || r[1].CPU != 1 || !r[1].AutoCPU {
		t.Errorf("trial y: %+v", r)
	}
	// A resolved spec validates and has nothing left to resolve.
	if err := s.Validate(Host{NumCPU: 3, Allowed: allowed}); err != nil {
		t.Errorf("resolved spec: %v", err)
	}
	if again, err := s.ResolveCPUs(allowed); err != nil || len(again) != 0 {
		t.Errorf("second ResolveCPUs: %v %v", again, err)
	}
	// An impossible choice names the reader's line.
	full := mustLoad(t, "readers: [{cpu: 0}, {cpu: auto}]\n")
	if _, err := full.ResolveCPUs([]int{0}); err == nil || !strings.Contains(err.Error(), "x.yaml:1:27: readers[1].cpu: auto: every allowed CPU (0) already has a reader") {
		t.Errorf("ResolveCPUs on a full set: %v", err)
	}
}
