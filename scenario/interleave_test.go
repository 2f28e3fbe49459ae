package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seedDoc is seed 000's shape: one endpoint, one sender, one reader at
// 10 ms, and the variants given.
const seedDoc = `duration: 4s
endpoints: [{name: socks, count: 4}]
traffic: [{endpoint: socks, interval: 20ms}]
readers: [{name: rt, endpoints: [socks], cpu: 1, period: 10ms}]
`

const methodVariants = `variants:
  - name: recvfrom
    set: {readers[0].method: recvfrom}
  - name: recvmsg
    set: {readers[0].method: recvmsg}
`

func TestInterleaveDecode(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Interleave
		err  string
	}{
		{"off", InterleaveOff, ""},
		{"0", InterleaveOff, ""},
		{"auto", InterleaveAuto, ""},
		{"100ms", Interleave(100 * time.Millisecond), ""},
		{" 250ms ", Interleave(250 * time.Millisecond), ""},
		{"sometimes", 0, `expected a block length, off or auto, got "sometimes" (allowed: off (or 0), auto, or a block length such as 100ms)`},
		{"-1ns", 0, "expected a block length, off or auto"},
	} {
		var v Interleave
		err := v.UnmarshalText([]byte(tc.text))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.err)
		case tc.err == "" && (err != nil || v != tc.want):
			t.Errorf("%q: %v (%v), want %v", tc.text, v, err, tc.want)
		case tc.err == "":
			if b, _ := v.MarshalText(); string(b) != strings.TrimSpace(map[string]string{"0": "off"}[tc.text]+tc.text) && tc.text != "0" && tc.text != " 250ms " {
				t.Errorf("%q encodes as %q", tc.text, b)
			}
		}
	}
}

// TestValidateInterleave: every reason a block length cannot run is named
// at the field that causes it, with the values allowed.
func TestValidateInterleave(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		want       string // substring of the error; "" = valid
	}{
		{"methods interleave", seedDoc + "interleave: 100ms\n" + methodVariants, nil, ""},
		{"batch interleaves", seedDoc + "interleave: 50ms\nvariants: [{name: b8, set: {readers[0].method: recvmmsg, readers[0].batch: 8}}, {name: b32, set: {readers[0].method: recvmmsg, readers[0].batch: 32}}]\n", nil, ""},
		{"set on the command line", seedDoc + methodVariants, []string{"interleave=100ms"}, ""},
		{"payload size", seedDoc + "interleave: 100ms\nvariants: [{name: s64, set: {traffic[0].size: 64}}, {name: s4k, set: {traffic[0].size: 4096}}]\n", nil,
			"x.yaml:6:47: variants[0].set.traffic[0].size: cannot interleave: it needs senders of its own (the payload size, rate and spread are the traffic every variant reads) (allowed: interleaved variants may set only readers[i].method and readers[i].batch (what a reader does per call, on the same thread and sockets); or interleave: off)"},
		{"reader cpu", seedDoc + "interleave: 100ms\nvariants: [{name: a, set: {readers[0].cpu: 0}}, {name: b, set: {readers[0].method: recvmsg}}]\n", nil,
			"x.yaml:6:44: variants[0].set.readers[0].cpu: cannot interleave: it changes the reader's thread or sockets (cpu), which the interleaved variants share"},
		{"run-wide field", seedDoc + "interleave: 100ms\nvariants: [{name: a, set: {warmup: 1s}}, {name: b, set: {readers[0].method: recvmsg}}]\n", nil,
			"variants[0].set.warmup: cannot interleave: it is a run-wide setting (warmup)"},
		{"one variant", seedDoc + "interleave: 100ms\nvariants: [{name: a, set: {readers[0].method: recvmsg}}]\n", nil,
			"x.yaml:6:11: variants: 1 variant(s): nothing to interleave (allowed: 2 or more variants, or interleave: off)"},
		{"block shorter than the period", seedDoc + "interleave: 5ms\n" + methodVariants, nil,
			"x.yaml:5:13: interleave: block 5ms out of range (allowed: 1ms–1h0m0s, ≥ the longest reader period (reader rt: 10ms) and ≤ duration (4s))"},
		{"block longer than the duration", seedDoc + methodVariants, []string{"interleave=5s"},
			"--set interleave: block 5s out of range"},
		{"soak", seedDoc + "interleave: 100ms\n" + methodVariants, []string{"duration=0"},
			"duration: a soak (duration 0) cannot interleave its variants (allowed: a finite duration (a soak alternates its variants in slices: slice), or interleave: off)"},
		{"too many blocks", seedDoc + "interleave: 10ms\n" + methodVariants, []string{"duration=1h"},
			"x.yaml:5:13: interleave: block 10ms over 2 × 1h0m0s makes 720000 blocks (allowed: at most 100000 blocks per trial"},
		{"interval records", seedDoc + "interleave: 100ms\ninterval: 1s\n" + methodVariants, nil,
			"interval: interval records (1s) hand whole recorders over"},
		{"auto falls back without an error", seedDoc + "interleave: auto\nvariants: [{name: s64, set: {traffic[0].size: 64}}, {name: s4k, set: {traffic[0].size: 4096}}]\n", nil, ""},
		{"off with anything", seedDoc + "interleave: off\nvariants: [{name: s64, set: {traffic[0].size: 64}}, {name: s4k, set: {traffic[0].size: 4096}}]\n", nil, ""},
		{"bad value", seedDoc + "interleave: often\n" + methodVariants, nil, `x.yaml:5:13: interleave: expected a block length, off or auto, got "often"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tc.yaml))
			if err == nil && tc.sets != nil {
				err = s.Apply(tc.sets)
			}
			if err == nil {
				err = s.Validate(Host{NumCPU: 2})
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error:\n%v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error\n%v\nwant substring\n%s", err, tc.want)
			}
		})
	}
}

// TestInterleaveBlock: auto interleaves what can be, and says why when it
// cannot; a block length is used as given.
func TestInterleaveBlock(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		block      Duration
		note       string
	}{
		{"off", seedDoc + methodVariants, 0, ""},
		{"given", seedDoc + "interleave: 250ms\n" + methodVariants, Duration(250 * time.Millisecond), ""},
		{"auto", seedDoc + "interleave: auto\n" + methodVariants, DefaultInterleaveBlock, ""},
		{"auto without variants", seedDoc + "interleave: auto\n", 0, ""},
		{"auto with a payload size", seedDoc + "interleave: auto\nvariants: [{name: s64, set: {traffic[0].size: 64}}, {name: s4k, set: {traffic[0].size: 4096}}]\n", 0,
			"interleave: auto: the variants run one trial each: variants[0].set.traffic[0].size: cannot interleave: it needs senders of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustLoad(t, tc.yaml)
			b, note := s.InterleaveBlock()
			if b != tc.block || !strings.Contains(note, tc.note) || (tc.note == "" && note != "") {
				t.Errorf("InterleaveBlock = %v, %q; want %v, %q", b, note, tc.block, tc.note)
			}
		})
	}
}

// TestExpandInterleave: each round's variants form one group of
// consecutive trials, the profiled twins after it, indexes in run order.
func TestExpandInterleave(t *testing.T) {
	s := mustLoad(t, seedDoc+"interleave: 100ms\nrounds: 2\nprofile: true\n"+methodVariants)
	if err := s.Validate(Host{NumCPU: 2}); err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Index, Round int
		Variant      string
		Profiled     bool
		Block        Duration
		Group        int
		Method       string
	}
	var got []row
	for _, tr := range trials {
		got = append(got, row{tr.Index, tr.Round, tr.Variant, tr.Profiled, tr.Interleave, tr.Group, tr.Spec.Readers[0].Method.String()})
	}
	b := Duration(100 * time.Millisecond)
	want := []row{
		{0, 0, "recvfrom", false, b, 0, "recvfrom"},
		{1, 0, "recvmsg", false, b, 0, "recvmsg"},
		{2, 0, "recvfrom", true, 0, 0, "recvfrom"},
		{3, 0, "recvmsg", true, 0, 0, "recvmsg"},
		{4, 1, "recvmsg", false, b, 4, "recvmsg"}, // rounds alternate the variants' order (B A)
		{5, 1, "recvfrom", false, b, 4, "recvfrom"},
		{6, 1, "recvmsg", true, 0, 0, "recvmsg"},
		{7, 1, "recvfrom", true, 0, 0, "recvfrom"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trials (-want +got):\n%s", diff)
	}
}
