package profile_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	pprofprofile "github.com/google/pprof/profile"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/profile"
)

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadPprofBounded: what a profile's parse and FromPprof would build
// is counted from its wire format and refused past the limits before
// pprof's parser runs (issue 34: one location of L lines referenced S
// times, 198 bytes gzipped, took explain past 8 GB), naming the file,
// the count and the limit; a profile within them reads as before.
func TestReadPprofBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"1000 lines × 1 M references: 1e9 frames", testutil.PprofFrameBomb(1000, 1_000_000),
			"p.pb.gz: 1000000001 frames (each referenced location's lines times its references), more than the limit of 262144"},
		{"2 lines × 140,000 references: exact count past the limit", testutil.PprofFrameBomb(2, 140_000),
			"p.pb.gz: 280001 frames"},
		{"1 line × 4 M references: pprof's own parse past the memory limit", testutil.PprofFrameBomb(1, 4_000_000),
			"p.pb.gz: parsing it would take more than 32 MiB of memory (1 samples, 4000000 location references, 1 locations, 1 lines, 1 functions, 4 strings)"},
		{"2 lines × 100,000 references: within", testutil.PprofFrameBomb(2, 100_000), ""},
		{"a sample with fewer values than sample types", func() []byte {
			var b bytes.Buffer
			pp := &pprofprofile.Profile{SampleType: []*pprofprofile.ValueType{{Type: "samples"}, {Type: "cpu"}},
				Sample: []*pprofprofile.Sample{{Value: []int64{1}}}}
			pp.WriteUncompressed(&b)
			return b.Bytes()
		}(), "p.pb.gz: pprof profile: mismatch: sample has 1 values vs. 2 types"},
		{"not protobuf", []byte{0x0a, 0xff}, "p.pb.gz: not a pprof profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			var p *profile.Profile
			alloc := allocated(func() { p, err = profile.ReadPprof(tc.data, "p.pb.gz") })
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if n := len(p.Stacks[0].Frames); n != 200_000 {
					t.Errorf("%d frames, want 200000", n)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %s…", err, tc.want)
			}
			if strings.Contains(tc.want, "frames") || strings.Contains(tc.want, "memory") {
				if !errors.Is(err, profile.ErrPprofLimit) {
					t.Errorf("%v: not profile.ErrPprofLimit", err)
				}
				if alloc > 8<<20 {
					t.Errorf("refusing %d bytes allocated %d MiB", len(tc.data), alloc>>20)
				}
			}
		})
	}
}

// TestFromPprofBounded: FromPprof itself refuses a parsed profile past
// MaxPprofFrames before making any frame, and a sample short of values
// is an error, not a panic.
func TestFromPprofBounded(t *testing.T) {
	f := &pprofprofile.Function{ID: 1, Name: "f"}
	loc := &pprofprofile.Location{ID: 1, Line: make([]pprofprofile.Line, 1000)}
	for i := range loc.Line {
		loc.Line[i].Function = f
	}
	refs := make([]*pprofprofile.Location, 300)
	for i := range refs {
		refs[i] = loc
	}
	pp := &pprofprofile.Profile{SampleType: []*pprofprofile.ValueType{{Type: "samples"}}, Function: []*pprofprofile.Function{f},
		Location: []*pprofprofile.Location{loc}, Sample: []*pprofprofile.Sample{{Value: []int64{1}, Location: refs}}}
	var err error
	alloc := allocated(func() { _, err = profile.FromPprof(pp) })
	if !errors.Is(err, profile.ErrPprofLimit) || !strings.Contains(err.Error(), "more than 262144 frames") {
		t.Fatalf("err = %v, want profile.ErrPprofLimit", err)
	}
	if alloc > 1<<20 {
		t.Errorf("refusing 300,000 frames allocated %d KiB", alloc>>10)
	}
	pp.Sample[0].Value = nil
	if _, err := profile.FromPprof(pp); err == nil || !strings.Contains(err.Error(), "mismatch: sample has 0 values vs. 1 types") {
		t.Errorf("a sample without values: %v", err)
	}
}

// TestReadPprofOwn: rtload's own profiles read through ReadPprof as
// through pprof's parser and FromPprof.
func TestReadPprofOwn(t *testing.T) {
	for _, m := range []string{"recvfrom", "recvmsg"} {
		gz, err := os.ReadFile(filepath.Join("testdata", "attrib-"+m+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(zr)
		got, err := profile.ReadPprof(data, m)
		if err != nil {
			t.Fatal(err)
		}
		pp, _ := pprofprofile.ParseUncompressed(data)
		want, _ := profile.FromPprof(pp)
		if len(got.Stacks) != len(want.Stacks) || got.Samples() != want.Samples() || len(got.Stacks) == 0 {
			t.Errorf("%s: %d stacks, %d samples; want %d, %d", m, len(got.Stacks), got.Samples(), len(want.Stacks), want.Samples())
		}
		if _, err := profile.ReadPprof(gz, m); err == nil || !strings.Contains(err.Error(), "gzip-compressed") {
			t.Errorf("%s gzipped: %v", m, err)
		}
	}
}
