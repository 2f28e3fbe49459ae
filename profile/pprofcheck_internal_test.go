package profile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	pprofprofile "github.com/google/pprof/profile"
)

// synthProfile is a valid profile of n kernel functions, one location
// each, and n samples of depth locations each, labelled as rtload labels
// them (phase) and, with numLabels, with a numeric label with a unit too;
// each function's name is at least nameLen bytes.
func synthProfile(n, depth int, numLabels bool, nameLen int) []byte {
	p := &pprofprofile.Profile{SampleType: []*pprofprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Comments: []string{"rtload: event=cpu-clock"}}
	km := &pprofprofile.Mapping{ID: 1, File: KernelMapping}
	p.Mapping = []*pprofprofile.Mapping{km}
	for i := range n {
		f := &pprofprofile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("kfunc_%0*d", nameLen, i)}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &pprofprofile.Location{ID: uint64(i + 1), Mapping: km, Address: uint64(i),
			Line: []pprofprofile.Line{{Function: f}}})
	}
	for i := range n {
		s := &pprofprofile.Sample{Value: []int64{1, 1000}, Label: map[string][]string{PhaseLabel: {"drain"}}}
		for d := range depth {
			s.Location = append(s.Location, p.Location[(i+d*7919)%n])
		}
		if numLabels {
			s.NumLabel = map[string][]int64{"bytes": {int64(i)}}
			s.NumUnit = map[string][]string{"bytes": {"bytes"}}
		}
		p.Sample = append(p.Sample, s)
	}
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// TestPprofMemoryEstimate: checkPprof's estimate, with the frames, is at
// least what pprof's parser and FromPprof allocate, over shapes of every
// kind it counts, so that MaxPprofMemory and MaxPprofFrames bound what
// reading a profile takes.
func TestPprofMemoryEstimate(t *testing.T) {
	if testing.Short() { // internal/testutil.Long, by hand: this package's tests import the standard library only
		t.Skip("tier: long fast test (parses profiles of tens of MiB); -short leaves it out, make test runs it")
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", "attrib-recvmsg.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := pprofprofile.Parse(bytes.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	var ownRaw bytes.Buffer
	own.WriteUncompressed(&ownRaw)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"rtload's own (testdata)", ownRaw.Bytes()},
		{"40,000 one-frame samples", synthProfile(40_000, 1, false, 7)},
		{"10,000 samples 10 deep", synthProfile(10_000, 10, false, 7)},
		{"2,000 samples 100 deep", synthProfile(2_000, 100, false, 7)},
		{"10,000 samples with numeric labels", synthProfile(10_000, 2, true, 7)},
		{"1,000 names of 10 KB", synthProfile(1_000, 3, false, 10_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := countPprof(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			pp, err := pprofprofile.ParseUncompressed(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := FromPprof(pp); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			frames := 5 * pprofFrames(tc.data) * costOf.frame / 4
			if est := c.memory() + frames; est < alloc {
				t.Errorf("%d bytes: estimated %d KiB, allocated %d KiB", len(tc.data), est>>10, alloc>>10)
			} else {
				t.Logf("%d bytes: estimated %d KiB, allocated %d KiB (%.2f×)", len(tc.data), est>>10, alloc>>10, float64(est)/float64(alloc))
			}
		})
	}
}
