package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestLoadSeed decodes the seed scenario and checks every field, defaults
// included.
func TestLoadSeed(t *testing.T) {
	s, err := LoadFile(filepath.Join("testdata", "laight-450.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Name:        "laight-450",
		Description: "450 UDP sockets, 1 msg/socket/20ms, SCHED_FIFO reader on CPU 1 draining every 10ms, 5 spin threads; recvfrom vs recvmsg (seed 000)",
		Duration:    Duration(10 * time.Second),
		Warmup:      Duration(500 * time.Millisecond),
		Clock:       ClockAuto,
		Rounds:      2,
		Processes:   1,
		Network:     Network{Namespace: NamespaceHost},
		Endpoints:   []Endpoint{{Name: "socks", Kind: EndpointUDP, Count: 450, Address: "127.0.0.1", RcvBuf: 256 << 10}},
		Traffic: []Traffic{{Endpoint: "socks", Interval: Duration(20 * time.Millisecond), Size: 64, Spread: SpreadEven,
			Policy: PolicyFIFO, Priority: 70, RateTolerance: 0.5, MaxSendLag: Duration(20 * time.Millisecond)}},
		Readers: []Reader{{Name: "rt", Endpoints: []string{"socks"}, CPU: 1, Policy: PolicyFIFO, Priority: 80,
			Period: Duration(10 * time.Millisecond), Method: MethodRecvFrom, Batch: 8, Overrun: OverrunSkip, Controls: 64, Seccomp: Seccomp{Profile: SeccompNone}}},
		Noise: []Noise{{Kind: NoiseSpin, Threads: 5, Policy: PolicyOther}},
		Variants: []Variant{
			{Name: "recvfrom", Set: map[string]string{"readers[0].method": "recvfrom"}},
			{Name: "recvmsg", Set: map[string]string{"readers[0].method": "recvmsg"}},
		},
		Report: Report{BucketWidth: 128, BucketOrigin: 64, Overflow: 8256},
		File:   filepath.Join("testdata", "laight-450.yaml"),
	}
	if diff := cmp.Diff(want, s, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".pos" || p.Last().String() == ".defaulted"
	}, cmp.Ignore()), cmp.AllowUnexported(Spec{})); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
	if err := s.Validate(Host{NumCPU: 2}); err != nil {
		t.Errorf("Validate: %v", err)
	}
	for path, want := range map[string]Pos{
		"readers[0].priority":               {23, 15},
		"endpoints[0].count":                {9, 12},
		"variants[1].set":                   {34, 10},
		"variants[1].set.readers[0].method": {34, 30},
		"readers[0]":                        {19, 5},
		"readers[0].batch":                  {19, 5}, // defaulted: its section
		"report.overflow":                   {38, 13},
	} {
		if got := s.Pos(path); got != want {
			t.Errorf("Pos(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestLoadDefaults checks every default Load fills in for an almost empty
// document.
func TestLoadDefaults(t *testing.T) {
	s, err := Load("dir/my-test.yml", []byte("endpoints: [{count: 1}]\ntraffic: [{endpoint: ep0, rate: 1}]\nreaders: [{}, {policy: other}]\nnoise: [{threads: 1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Name: "my-test", Duration: Duration(10 * time.Second), Clock: ClockAuto, Rounds: 1, Processes: 1, Network: Network{Namespace: NamespaceHost},
		Endpoints: []Endpoint{{Name: "ep0", Kind: EndpointUDP, Count: 1, Address: "127.0.0.1"}},
		// A sender among unpinned spin noise runs at SCHED_FIFO, 10 below
		// the lowest real-time reader; its lag bound is its period (1/rate).
		Traffic: []Traffic{{Endpoint: "ep0", Rate: 1, Size: 64, Spread: SpreadEven, Policy: PolicyFIFO, Priority: 70,
			RateTolerance: 0.5, MaxSendLag: Duration(time.Second)}},
		Readers: []Reader{
			{Name: "reader0", Policy: PolicyFIFO, Priority: 80, Period: Duration(10 * time.Millisecond), Method: MethodRecvFrom, Batch: 8, Overrun: OverrunSkip, Seccomp: Seccomp{Profile: SeccompNone}},
			{Name: "reader1", Policy: PolicyOther, Priority: 0, Period: Duration(10 * time.Millisecond), Method: MethodRecvFrom, Batch: 8, Overrun: OverrunSkip, Seccomp: Seccomp{Profile: SeccompNone}},
		},
		Noise:  []Noise{{Kind: NoiseSpin, Threads: 1, Policy: PolicyOther}},
		Report: Report{BucketWidth: 128, BucketOrigin: 64, Overflow: 8256},
		File:   "dir/my-test.yml",
	}
	if diff := cmp.Diff(want, s, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".pos" || p.Last().String() == ".defaulted"
	}, cmp.Ignore()), cmp.AllowUnexported(Spec{})); diff != "" {
		t.Errorf("defaults mismatch (-want +got):\n%s", diff)
	}
	if err := s.Validate(Host{NumCPU: 1}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // substring of err.Error()
	}{
		{"empty document", "", "x.yaml: empty document"},
		{"comments only", "# nothing\n", "x.yaml: empty document"},
		{"null document", "~\n", "x.yaml:1:1: empty document"},
		// An explicit null on a scalar is not its default: refused, with
		// the default and the allowed values (null.go).
		{"null priority", "readers:\n  - priority: ~\n", "x.yaml:2:15: readers[0].priority: null is not a value: omit the key for its default, 80 (fifo/rr) (allowed: 1–99 for fifo/rr, 0 for other)"},
		{"null priority spelled out", "readers: [{priority: null}]\n", "x.yaml:1:22: readers[0].priority: null is not a value"},
		{"empty priority", "readers:\n  - priority:\n", "x.yaml:2:14: readers[0].priority: null is not a value"},
		{"null policy", "readers: [{policy: ~}]\n", "readers[0].policy: null is not a value: omit the key for its default, fifo (allowed: fifo, rr, other)"},
		{"null duration", "duration: ~\nreaders: [{}]\n", "x.yaml:1:11: duration: null is not a value: omit the key for its default, 10s (allowed: 0–24h0m0s)"},
		{"null through an alias", "readers: [{priority: &p ~}, {priority: *p}]\n", "readers[1].priority: null is not a value"},
		{"multiple documents", "readers: [{}]\n---\nreaders: [{}]\n", "x.yaml:2:1: multiple documents"},
		{"syntax error wrapped with file", "readers:\n  - name: x\n   cpu: 1\n", "x.yaml:1: yaml: line 1: did not find expected '-' indicator"},
		{"top-level sequence", "- a\n", "x.yaml:1:1: expected a mapping, got a sequence (allowed: name, description, duration"},
		{"unknown top-level field", "readers: [{}]\ndurration: 1s\n", "x.yaml:2:1: durration: unknown field \"durration\" (allowed: name, description, duration, interval, log_chunk, log_limit, warmup, clock, rounds, repeat, processes, cpu_dma_latency, allow_rt_noise, housekeeping_cpus, slice, interleave, requires, network, endpoints, traffic, readers, noise, probes, variants, report, profile)"},
		{"unknown nested field lists its section's keys", "readers:\n  - prority: 3\n", "x.yaml:2:5: readers[0].prority: unknown field \"prority\" (allowed: name, endpoints, cpu, policy, priority, period, method, batch, overrun, max_backlog, threshold, breaktrace, counters, controls, seccomp)"},
		{"unknown field under report", "report: {width: 1}\n", "x.yaml:1:10: report.width: unknown field \"width\" (allowed: bucket_width, bucket_origin, overflow)"},
		{"file is not decoded", "File: x\n", "unknown field \"File\""},
		{"duplicate key", "rounds: 1\nrounds: 2\n", "x.yaml:2:1: rounds: duplicate key \"rounds\" (first on line 1)"},
		{"duplicate key in variant set", "variants: [{set: {a: 1, a: 2}}]\n", "variants[0].set.a: duplicate key \"a\""},
		{"count not an integer", "endpoints:\n  - count: abc\n", "x.yaml:2:12: endpoints[0].count: expected an integer, got \"abc\""},
		{"count a sequence", "endpoints:\n  - count: [1]\n", "endpoints[0].count: expected an integer, got a sequence"},
		{"count a float", "endpoints: [{count: 1.5}]\n", "expected an integer, got \"1.5\""},
		{"readers a mapping", "readers: {name: x}\n", "readers: expected a sequence of mappings, got a mapping"},
		{"reader a scalar", "readers: [x]\n", "readers[0]: expected a mapping, got \"x\""},
		{"endpoints list of scalars", "readers: [{endpoints: [[a]]}]\n", "readers[0].endpoints[0]: expected a string, got a sequence"},
		{"reader endpoints a scalar", "readers: [{endpoints: a}]\n", "readers[0].endpoints: expected a sequence of strings, got \"a\""},
		{"cpus of strings", "noise: [{cpus: [a]}]\n", "noise[0].cpus[0]: expected an integer, got \"a\""},
		{"duration without unit", "duration: 10\n", "x.yaml:1:11: duration: invalid duration \"10\" (allowed: Go duration such as 500ms, 10s, 1m30s)"},
		{"duration garbage", "readers: [{period: soon}]\n", "readers[0].period: invalid duration \"soon\""},
		{"negative size", "endpoints: [{rcvbuf: -1}]\n", "endpoints[0].rcvbuf: negative size \"-1\" (allowed: bytes with optional unit"},
		{"size garbage", "traffic: [{size: 64 bytes}]\n", "traffic[0].size: invalid size \"64 bytes\""},
		{"size overflow", "traffic: [{size: 20000000000TiB}]\n", "too large"},
		{"rate nan", "traffic: [{rate: .nan}]\n", "traffic[0].rate: expected a finite number"},
		{"rate inf", "traffic: [{rate: inf}]\n", "traffic[0].rate: expected a finite number"},
		{"negative uint", "report: {overflow: -1}\n", "report.overflow: expected a non-negative integer, got \"-1\""},
		{"int overflow", "rounds: 99999999999999999999\n", "rounds: expected an integer"},
		{"cpu pointer wrong", "traffic: [{cpu: x}]\n", "traffic[0].cpu: expected an integer, got \"x\""},
		{"set value a mapping", "variants: [{set: {a: {b: c}}}]\n", "variants[0].set.a: expected a value, got a mapping"},
		{"set key not scalar", "variants: [{set: {[a]: b}}]\n", "variants[0].set: mapping key must be a string"},
		{"bad flow mapping keeps the parser's error", "variants: [{set: {readers[0].cpu: [}}]\n", "x.yaml: yaml: did not find expected ',' or '}'"},
		{"unknown indexed flow key shown as written", "report: {bucket[0]: 1}\n", "report.bucket[0]: unknown field \"bucket[0]\""},
		{"all problems listed", "rounds: x\nclock: [a]\n", "scenario x.yaml: 2 problems\nx.yaml:1:9: rounds:"},
		{"merge a scalar", "readers:\n  - <<: 3\n", "x.yaml:2:9: readers[0].<<: merge key: expected a mapping or a sequence of mappings, got \"3\" (allowed: <<: *anchor, or <<: [*a, *b], naming mappings)"},
		{"merge a list of scalars", "readers:\n  - <<: [a]\n", "readers[0].<<: merge key: expected a mapping or a sequence of mappings, got \"a\""},
		{"unknown field from the merged mapping, at its place", "readers:\n  - &r {cpu: 1}\n  - {<<: [*r, {colour: red}]}\n",
			"x.yaml:3:16: readers[1].colour: unknown field \"colour\""},
		{"duplicate own key still refused", "readers:\n  - &r {cpu: 1}\n  - {<<: *r, cpu: 0, cpu: 1}\n", "duplicate key \"cpu\""},
		// A mapping that merges itself stops at the depth bound; one that
		// merges itself four times a level (4^16 visits) at the node budget.
		{"self merge", "readers:\n  - &r {cpu: 1, <<: *r}\n", "x.yaml:2:21: readers[0].<<: merge keys nested more than 16 deep"},
		{"self merge fan-out", "readers:\n  - &r {cpu: 1, <<: [*r, *r, *r, *r]}\n", "alias *r expands the document past 131072 nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", s)
			}
			if s != nil {
				t.Errorf("Load returned a spec with an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant substring\n%s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false")
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "x.yaml" {
				t.Errorf("errors.As *Error = %v, File %q", e, e.File)
			}
		})
	}
}

func TestLoadAccepts(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(*Spec) bool
	}{
		{"null section is none", "readers: [{}]\nnoise:\n", func(s *Spec) bool { return len(s.Noise) == 0 }},
		{"null cpu stays unpinned", "traffic: [{cpu: null}]\n", func(s *Spec) bool { return s.Traffic[0].CPU == nil }},
		{"cpu zero is pinned", "traffic: [{cpu: 0}]\n", func(s *Spec) bool { return s.Traffic[0].CPU != nil && *s.Traffic[0].CPU == 0 }},
		{"explicit zero duration kept for Validate", "duration: 0\n", func(s *Spec) bool { return s.Duration == 0 }},
		{"quoted integer", "rounds: \"3\"\n", func(s *Spec) bool { return s.Rounds == 3 }},
		{"aliases", "endpoints: [&e {count: 2}, *e]\n", func(s *Spec) bool {
			return len(s.Endpoints) == 2 && s.Endpoints[1].Count == 2 && s.Endpoints[1].Name == "ep1"
		}},
		{"set list value joined", "variants: [{set: {readers[0].endpoints: [a, b]}}]\n", func(s *Spec) bool { return s.Variants[0].Set["readers[0].endpoints"] == "a,b" }},
		{"set null value empty", "variants: [{set: {traffic[0].cpu: ~}}]\n", func(s *Spec) bool { v, ok := s.Variants[0].Set["traffic[0].cpu"]; return ok && v == "" }},
		{"explicit priority kept", "readers: [{policy: other, priority: 5}]\n", func(s *Spec) bool { return s.Readers[0].Priority == 5 }},
		{"name from yaml wins", "name: n\n", func(s *Spec) bool { return s.Name == "n" }},

		// YAML merge keys: own keys override merged ones, earlier merges
		// override later ones, in sections and in variant sets.
		{"merge a reader", "readers:\n  - &r {cpu: 1, period: 1ms, method: recvmsg}\n  - <<: *r\n    name: b\n", func(s *Spec) bool {
			r := s.Readers[1]
			return r.Name == "b" && r.CPU == 1 && r.Period == Duration(time.Millisecond) && r.Method == MethodRecvMsg
		}},
		{"own key wins", "readers:\n  - &r {cpu: 1, period: 1ms}\n  - {<<: *r, cpu: 0}\n", func(s *Spec) bool {
			return s.Readers[1].CPU == 0 && s.Readers[1].Period == Duration(time.Millisecond)
		}},
		{"own key wins when written first", "readers:\n  - &r {cpu: 1}\n  - {cpu: 0, <<: *r}\n", func(s *Spec) bool { return s.Readers[1].CPU == 0 }},
		{"earlier merge wins", "readers:\n  - &a {cpu: 1}\n  - &b {cpu: 0, period: 2ms}\n  - {<<: [*a, *b]}\n", func(s *Spec) bool {
			return s.Readers[2].CPU == 1 && s.Readers[2].Period == Duration(2*time.Millisecond)
		}},
		{"merged default is still derived", "readers:\n  - &r {policy: other}\n  - {<<: *r}\n", func(s *Spec) bool {
			return s.Readers[1].Policy == PolicyOther && s.Readers[1].Priority == 0
		}},
		{"merge of a merge", "readers:\n  - &a {cpu: 1}\n  - &b {<<: *a, period: 2ms}\n  - {<<: *b}\n", func(s *Spec) bool {
			return s.Readers[2].CPU == 1 && s.Readers[2].Period == Duration(2*time.Millisecond)
		}},
		{"variant set", "readers: [{}]\nvariants:\n  - &v {name: a, set: &s {duration: 1s, rounds: 2}}\n  - {name: b, set: {<<: *s, rounds: 3}}\n", func(s *Spec) bool {
			return s.Variants[1].Set["duration"] == "1s" && s.Variants[1].Set["rounds"] == "3"
		}},
		{"inline mapping", "readers:\n  - <<: {cpu: 1}\n", func(s *Spec) bool { return s.Readers[0].CPU == 1 }},
		{"quoted << is a key", "variants: [{name: a, set: {\"<<\": x}}]\nreaders: [{}]\n", func(s *Spec) bool { return s.Variants[0].Set["<<"] == "x" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s) {
				t.Errorf("unexpected spec %+v", s)
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile missing = %v, want ErrNotExist", err)
	}
}

func TestSizeDuration(t *testing.T) {
	sizes := []struct {
		in   string
		want Size
		err  string
	}{
		{"64", 64, ""},
		{"64B", 64, ""},
		{"0", 0, ""},
		{"256KiB", 256 << 10, ""},
		{"1MiB", 1 << 20, ""},
		{"4KB", 4000, ""},
		{"4kb", 4000, ""}, // units are case-insensitive
		{"1GiB", 1 << 30, ""},
		{"2GB", 2e9, ""},
		{"1TiB", 1 << 40, ""},
		{" 8 KiB ", 8 << 10, ""},
		{"-1", 0, "negative size"},
		{"-1KiB", 0, "negative size"},
		{"", 0, "invalid size"},
		{"KiB", 0, "invalid size"},
		{"1.5MiB", 0, "invalid size"},
		{"12XB", 0, "invalid size"},
		{"abc", 0, "invalid size"},
		{"99999999999999999999", 0, "too large"},
		{"17179869184GiB", 0, "too large"},
	}
	for _, tt := range sizes {
		t.Run("size/"+tt.in, func(t *testing.T) {
			got, p := parseSize(tt.in)
			if tt.err != "" {
				if p == nil || !strings.Contains(p.msg, tt.err) {
					t.Fatalf("parseSize(%q) = %v, %v; want error %q", tt.in, got, p, tt.err)
				}
				return
			}
			if p != nil || got != tt.want {
				t.Fatalf("parseSize(%q) = %v, %v; want %d", tt.in, got, p, tt.want)
			}
			var back Size
			if err := back.UnmarshalText([]byte(got.String())); err != nil || back != got {
				t.Errorf("round trip via %q = %d, %v", got.String(), back, err)
			}
		})
	}
	durations := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10ms", 10 * time.Millisecond, ""},
		{"0", 0, ""},
		{"1m30s", 90 * time.Second, ""},
		{"100us", 100 * time.Microsecond, ""},
		{"100µs", 100 * time.Microsecond, ""},
		{"-1s", -time.Second, ""}, // Validate rejects it where it matters
		{"10", 0, "invalid duration \"10\""},
		{"", 0, "invalid duration"},
		{"fast", 0, "invalid duration"},
	}
	for _, tt := range durations {
		t.Run("duration/"+tt.in, func(t *testing.T) {
			var d Duration
			err := d.UnmarshalText([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Duration(%q) = %v, %v; want error %q", tt.in, d, err, tt.err)
				}
				return
			}
			if err != nil || time.Duration(d) != tt.want {
				t.Fatalf("Duration(%q) = %v, %v; want %v", tt.in, d, err, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		n    Size
		want string
	}{{0, "0B"}, {64, "64B"}, {4000, "4KB"}, {256 << 10, "256KiB"}, {1 << 30, "1GiB"}, {1000 << 10, "1000KiB"}} {
		if got := tt.n.String(); got != tt.want {
			t.Errorf("Size(%d).String() = %q, want %q", uint64(tt.n), got, tt.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"full", &Error{File: "a.yaml", Line: 3, Col: 7, Path: "rounds", Msg: "0 out of range", Allowed: "1–1000"}, "a.yaml:3:7: rounds: 0 out of range (allowed: 1–1000)"},
		{"no allowed", &Error{File: "a.yaml", Line: 3, Col: 7, Path: "rounds", Msg: "bad"}, "a.yaml:3:7: rounds: bad"},
		{"no line", &Error{File: "a.yaml", Path: "--set x", Msg: "bad"}, "a.yaml: --set x: bad"},
		{"no col", &Error{File: "a.yaml", Line: 2, Msg: "yaml: line 2: oops"}, "a.yaml:2: yaml: line 2: oops"},
		{"no file", &Error{Line: 2, Col: 1, Path: "p", Msg: "bad"}, "line 2: p: bad"},
		{"list sorted by line", ErrorList{
			{File: "a.yaml", Line: 9, Col: 1, Path: "b", Msg: "late"},
			{File: "a.yaml", Line: 2, Col: 5, Path: "a", Msg: "early"},
		}.err(), "scenario a.yaml: 2 problems\na.yaml:2:5: a: early\na.yaml:9:1: b: late"},
		{"one problem", ErrorList{{File: "a.yaml", Msg: "x"}}, "scenario a.yaml: 1 problem\na.yaml: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
			if !errors.Is(tt.err, ErrInvalid) {
				t.Errorf("not ErrInvalid")
			}
		})
	}
	if err := (ErrorList{}).err(); err != nil {
		t.Errorf("empty list err() = %#v, want nil", err)
	}
}

// readSeed returns the text of testdata/laight-450.yaml.
func readSeed(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "laight-450.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJSONRoundTrip checks that a Spec survives encoding/json, durations and
// sizes as text ("10ms", "256KiB"), as report writes it into summary.json.
func TestJSONRoundTrip(t *testing.T) {
	s, err := LoadFile(filepath.Join("testdata", "fuzz", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"duration":"2s"`) || !strings.Contains(string(b), `"rcvbuf":"1MiB"`) {
		t.Errorf("JSON does not use text units: %s", b)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// A reader without a seccomp filter is left out of the JSON (as
	// before the field existed, so compare sees no difference with older
	// results) and comes back unset; LoadAsRun, which reads it, fills it
	// in again.
	for i := range s.Readers {
		if s.Readers[i].Seccomp.Profile == SeccompNone {
			s.Readers[i].Seccomp.Profile = 0
		}
	}
	if diff := cmp.Diff(s, &back, cmpopts.IgnoreUnexported(Spec{}), cmpopts.IgnoreFields(Spec{}, "File")); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestConfigs loads and validates every shipped scenario in ../configs.
func TestConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if len(files) == 0 {
		t.Skip("no ../configs/*.yaml")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := LoadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(Host{NumCPU: 2}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Expand(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
