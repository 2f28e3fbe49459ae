package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func workers(s *Spec) any { return s.Noise[0].WorkerThreads() }

// TestRederive checks that a default that follows another field follows
// it through Apply and variants, and that a given value is never replaced.
func TestRederive(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		sets []string
		got  func(*Spec) any
		want any
	}{
		{"soak: interval and log chunk", "readers: [{}]\n", []string{"duration=0"},
			func(s *Spec) any { return []any{s.Interval, s.LogChunk} }, []any{Duration(10 * time.Second), Size(16 << 20)}},
		{"soak: a given interval is kept", "interval: 0\nlog_chunk: 0\nreaders: [{}]\n", []string{"duration=0"},
			func(s *Spec) any { return []any{s.Interval, s.LogChunk} }, []any{Duration(0), Size(0)}},
		{"soak in the file", "duration: 0\nreaders: [{}]\n", nil,
			func(s *Spec) any { return s.Interval }, Duration(10 * time.Second)},
		{"a finite duration again drops the soak defaults", "duration: 0\nreaders: [{}]\n", []string{"duration=5s"},
			func(s *Spec) any { return []any{s.Interval, s.LogChunk} }, []any{Duration(0), Size(0)}},
		{"priority follows policy back", "readers: [{policy: other}]\n", []string{"readers[0].policy=rr"},
			func(s *Spec) any { return s.Readers[0].Priority }, 80},
		{"a given priority is kept", "readers: [{policy: rr, priority: 5}]\n", []string{"readers[0].policy=fifo"},
			func(s *Spec) any { return s.Readers[0].Priority }, 5},
		{"probe kind brings its parameters", "probes: [{kind: tap_send}]\n", []string{"probes[0].kind=file_write"},
			func(s *Spec) any {
				p := s.Probes[0]
				return []any{p.Packets, len(p.Size), p.Block, p.Blocks, p.Duration}
			}, []any{0, 0, Size(256), 2000, Duration(10 * time.Second)}},
		{"noise kind brings its parameters", "readers: [{}]\nnoise: [{kind: memory, threads: 1}]\n", []string{"noise[0].kind=messaging"},
			func(s *Spec) any { n := s.Noise[0]; return []any{n.Size, n.Groups, n.FDs, n.Loops} }, []any{Size(100), 1, 4, 100}},
		{"a tap endpoint makes the namespace private", "endpoints: [{count: 1}]\nreaders: [{}]\n", []string{"endpoints[0].kind=tap", "endpoints[0].address="},
			func(s *Spec) any { return []any{s.Network.Namespace, s.Endpoints[0].MTU} }, []any{NamespacePrivate, 1500}},
		{"repeat gives rounds", "repeat: 3\nreaders: [{}]\n", nil, func(s *Spec) any { return int(s.Rounds) }, 3},
		// One formula for a noise entry's threads: engine once used two,
		// 2 × groups × max(fds, 4) and 2 × groups × (fds or 4), which
		// disagree for fds: 2.
		{"threads of spin", "readers: [{}]\nnoise: [{kind: spin, threads: 3}]\n", nil, workers, 3},
		{"threads of messaging", "readers: [{}]\nnoise: [{kind: messaging}]\n", nil, workers, 8},
		{"threads of messaging, fds 2", "readers: [{}]\nnoise: [{kind: messaging, fds: 2}]\n", nil, workers, 4},
		{"threads of messaging from spin", "readers: [{}]\nnoise: [{threads: 1}]\n", []string{"noise[0].kind=messaging", "noise[0].groups=3", "noise[0].fds=5"}, workers, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustLoad(t, tt.yaml)
			if err := s.Apply(tt.sets); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.got(s)); diff != "" {
				t.Errorf("after Apply(%q) (-want +got):\n%s", tt.sets, diff)
			}
			// A variant with the same overrides gives the same trial.
			v := "variants: [{name: v, set: {"
			for i, kv := range tt.sets {
				k, val, _ := strings.Cut(kv, "=")
				if i > 0 {
					v += ", "
				}
				v += "\"" + k + "\": \"" + val + "\""
			}
			trials, err := mustLoad(t, tt.yaml+v+"}}]\n").Expand()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.got(&trials[0].Spec)); diff != "" {
				t.Errorf("variant trial (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorkerThreads: a Noise built in code gets the same count as one
// from Load (TestRederive has those rows).
func TestWorkerThreads(t *testing.T) {
	if got := (Noise{Kind: NoiseMessaging, FDs: 2}).WorkerThreads(); got != 4 {
		t.Errorf("messaging, fds 2: %d threads, want 4", got)
	}
}

// TestControlsDefault checks readers[].controls' default: 64 for a reader
// with endpoints, none for a timer-only reader, and an explicit 0 kept.
func TestControlsDefault(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want int
	}{
		{"endpoints: [{name: e, count: 1}]\nreaders: [{endpoints: [e]}]\n", defaultControls},
		{"endpoints: [{name: e, count: 1}]\nreaders: [{endpoints: [e], controls: 0}]\n", 0},
		{"endpoints: [{name: e, count: 1}]\nreaders: [{endpoints: [e], controls: 7}]\n", 7},
		{"readers: [{}]\n", 0},
	} {
		s, err := Load("x.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := s.Readers[0].Controls; got != tc.want {
			t.Errorf("%q: controls %d, want %d", tc.yaml, got, tc.want)
		}
	}
}
