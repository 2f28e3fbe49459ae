package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	s, err := LoadFile("testdata/laight-450.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Index, Round    int
		Variant, Method string
	}
	var got []row
	for _, tr := range trials {
		got = append(got, row{tr.Index, tr.Round, tr.Variant, tr.Spec.Readers[0].Method.String()})
		if diff := cmp.Diff(s.Variants, tr.Spec.Variants); diff != "" {
			t.Errorf("trial %d variants (-want +got):\n%s", tr.Index, diff)
		}
		if err := tr.Spec.Validate(Host{NumCPU: 2}); err != nil {
			t.Errorf("trial %d: %v", tr.Index, err)
		}
	}
	want := []row{
		{0, 0, "recvfrom", "recvfrom"},
		{1, 0, "recvmsg", "recvmsg"},
		// ABBA: the odd round runs the variants in reverse order.
		{2, 1, "recvmsg", "recvmsg"},
		{3, 1, "recvfrom", "recvfrom"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trials (-want +got):\n%s", diff)
	}
	// A variant value keeps the position of its variant key.
	if p := trials[1].Spec.Pos("readers[0].method"); p != (Pos{34, 30}) {
		t.Errorf("trial 1 Pos(readers[0].method) = %v", p)
	}

	// Deep copies: changing one trial changes neither s nor another trial.
	trials[0].Spec.Readers[0].Endpoints[0] = "changed"
	trials[0].Spec.Endpoints[0].Count = 1
	trials[0].Spec.Noise[0].Threads = 99
	if s.Readers[0].Endpoints[0] != "socks" || trials[2].Spec.Readers[0].Endpoints[0] != "socks" {
		t.Errorf("reader endpoints shared")
	}
	if s.Endpoints[0].Count != 450 || s.Noise[0].Threads != 5 {
		t.Errorf("sections shared")
	}
	if s.Readers[0].Method != MethodRecvFrom {
		t.Errorf("Expand changed s: method %q", s.Readers[0].Method)
	}
}

func TestExpandNoVariants(t *testing.T) {
	s, err := Load("x.yaml", []byte("rounds: 3\nreaders: [{}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 3 {
		t.Fatalf("%d trials, want 3", len(trials))
	}
	for i, tr := range trials {
		if tr.Variant != "base" || tr.Round != i || tr.Index != i {
			t.Errorf("trial %d = %+v", i, tr)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"rounds zero", "rounds: 0\nreaders: [{}]\n", "x.yaml:1:9: rounds: 0 out of range (allowed: 1–1000)"},
		{"bad variant", "readers: [{}]\nvariants: [{name: a, set: {readers[2].cpu: 1}}]\n", "x.yaml:2:44: variants[0]: readers[2]: index 2 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Expand()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Expand = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestClone(t *testing.T) {
	s, err := LoadFile("testdata/fuzz/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if diff := cmp.Diff(s, c, cmp.AllowUnexported(Spec{})); diff != "" {
		t.Fatalf("Clone differs (-orig +clone):\n%s", diff)
	}
	// Mutate every reference in the clone; the original must not move.
	c.Endpoints[0].Count = 7
	*c.Traffic[0].CPU = 1
	c.Readers[0].Endpoints[0] = "zz"
	c.Noise[0].CPUs[0] = 9
	c.Traffic[1].CPUs[0] = 0
	c.HousekeepingCPUs[0] = 1
	c.Requires.Config[0], c.Requires.Cmdline[0], c.Requires.Features[0] = "CONFIG_X=n", "x", FeatureCycles
	c.Variants[0].Set["duration"] = "1s"
	c.pos["duration"] = Pos{99, 1}
	c.defaulted["x"] = true
	if s.Endpoints[0].Count != 4 || *s.Traffic[0].CPU != 0 || s.Readers[0].Endpoints[0] != "a" ||
		s.Noise[0].CPUs[0] != 0 || s.Traffic[1].CPUs[0] != 1 || s.HousekeepingCPUs[0] != 0 ||
		s.Requires.Config[0] != "CONFIG_HARDENED_USERCOPY=y" || s.Requires.Cmdline[0] != "init_on_alloc=0" || s.Requires.Features[0] != FeatureTun || s.Variants[0].Set["duration"] != "" || s.pos["duration"] == (Pos{99, 1}) || s.defaulted["x"] {
		t.Errorf("Clone shares state with the original: %+v", s)
	}
}

// TestMeasuredTime: every trial's duration and warm-up, an interleaved
// group's warm-up once.
func TestMeasuredTime(t *testing.T) {
	tr := func(i, group int, il Duration) Trial {
		return Trial{Index: i, Group: group, Interleave: il, Spec: Spec{Duration: Duration(time.Second), Warmup: Duration(500 * time.Millisecond)}}
	}
	for _, tc := range []struct {
		name   string
		trials []Trial
		want   time.Duration
	}{
		{"none", nil, 0},
		{"two alone", []Trial{tr(0, 0, 0), tr(1, 0, 0)}, 3 * time.Second},
		{"two rounds of an interleaved pair", []Trial{tr(0, 0, 100), tr(1, 0, 100), tr(2, 2, 100), tr(3, 2, 100)}, 5 * time.Second},
	} {
		if got := MeasuredTime(tc.trials); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
