package profile

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testSampleType is what profile/sampler asks for.
const testSampleType = SampleIP | SampleTID | SampleTime | SampleCPU | SamplePeriod | SampleCallchain

// rec encodes one perf record: header then u64 body words.
func rec(typ uint32, misc uint16, words ...uint64) []byte {
	b := make([]byte, 8, 8+8*len(words))
	binary.NativeEndian.PutUint32(b[0:], typ)
	binary.NativeEndian.PutUint16(b[4:], misc)
	binary.NativeEndian.PutUint16(b[6:], uint16(8+8*len(words)))
	for _, w := range words {
		b = binary.NativeEndian.AppendUint64(b, w)
	}
	return b
}

// sampleRec encodes a PERF_RECORD_SAMPLE of testSampleType.
func sampleRec(s Sample) []byte {
	w := []uint64{s.IP, uint64(s.PID) | uint64(s.TID)<<32, s.Time, uint64(s.CPU), s.Period, uint64(len(s.Callchain))}
	return rec(RecordSample, s.Misc, append(w, s.Callchain...)...)
}

// ringOf lays records out in a ring of size bytes starting at position
// start, returning the ring and the head position.
func ringOf(size int, start uint64, recs ...[]byte) ([]byte, uint64) {
	ring := make([]byte, size)
	pos := start
	for _, r := range recs {
		for i, c := range r {
			ring[(pos+uint64(i))%uint64(size)] = c
		}
		pos += uint64(len(r))
	}
	return ring, pos
}

var (
	s1 = Sample{IP: 0xffffffff81e7f3f0, PID: 100, TID: 101, Time: 5_000, CPU: 1, Period: 50_000, Misc: 1,
		Callchain: []uint64{ContextKernel, 0xffffffff81e7f3f0, 0xffffffff81e7f68b, ContextUser, 0x4a1234, 0x4a0100}}
	s2 = Sample{IP: 0x4a1234, PID: 100, TID: 101, Time: 55_000, CPU: 1, Period: 50_000, Misc: 2,
		Callchain: []uint64{ContextUser, 0x4a1234}}
)

func TestDecode(t *testing.T) {
	lost := rec(RecordLost, 0, 7, 12) // id 7, 12 samples lost
	throttle := rec(RecordThrottle, 0, 1, 2, 3)
	unthrottle := rec(RecordUnthrottle, 0, 1, 2, 3)
	comm := rec(3, 0, 0x6f6f6c, 0) // PERF_RECORD_COMM: skipped, counted
	tests := []struct {
		name  string
		size  int
		start uint64 // position of the first record (tail)
		recs  [][]byte
		want  Batch
	}{
		{"one sample", 256, 0, [][]byte{sampleRec(s1)}, Batch{Samples: []Sample{s1}}},
		{"samples lost throttle", 512, 64, [][]byte{sampleRec(s1), lost, throttle, sampleRec(s2), unthrottle, comm},
			Batch{Samples: []Sample{s1, s2}, Lost: 12, LostRecords: 1, Throttles: 1, Unthrottles: 1, Other: 1}},
		// s1 is 104 bytes: starting 40 bytes before the end, its callchain wraps.
		{"sample wraps around the end", 256, 256 - 40, [][]byte{sampleRec(s1), sampleRec(s2)}, Batch{Samples: []Sample{s1, s2}}},
		// Positions only grow: the third lap of a 128-byte ring, header at its last 8 bytes.
		{"header at the ring's last bytes, later lap", 128, 3*128 - 8, [][]byte{sampleRec(s2), lost}, Batch{Samples: []Sample{s2}, Lost: 12, LostRecords: 1}},
		{"empty", 64, 64, nil, Batch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, head := ringOf(tt.size, tt.start, tt.recs...)
			var got Batch
			pos, err := Decode(ring, head, tt.start, testSampleType, &got)
			if err != nil || pos != head {
				t.Fatalf("Decode = %d, %v; want %d, nil", pos, err, head)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Batch{}), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("batch (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	good := sampleRec(s2)
	short := rec(RecordSample, 0, 1, 2) // 2 words for a 6-word layout
	chainTooLong := rec(RecordSample, 0, 1, 2, 3, 4, 5, 99, 1)
	zero := make([]byte, 16) // size 0
	tests := []struct {
		name    string
		size    int
		recs    [][]byte
		head    func(h uint64) uint64
		st      uint64
		wantPos uint64
		wantErr string
	}{
		{"size 0 record", 256, [][]byte{good, zero}, nil, testSampleType, uint64(len(good)), "has size 0"},
		{"record past head", 256, [][]byte{good}, func(h uint64) uint64 { return h - 8 }, testSampleType, 0, "bytes left"},
		{"short sample", 256, [][]byte{short}, nil, testSampleType, 0, "shorter than sample_type"},
		{"callchain past the record", 256, [][]byte{chainTooLong}, nil, testSampleType, 0, "callchain of 99 entries"},
		{"unsupported sample type", 256, [][]byte{good}, nil, testSampleType | 1<<10, 0, "bits 0x400"},
		{"not a power of two", 96, [][]byte{good}, nil, testSampleType, 0, "not a power of two"},
		{"head more than a ring ahead", 64, [][]byte{good, good}, nil, testSampleType, 0, "more than the ring"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, head := ringOf(tt.size, 0, tt.recs...)
			if tt.head != nil {
				head = tt.head(head)
			}
			var b Batch
			pos, err := Decode(ring, head, 0, tt.st, &b)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
			if pos != tt.wantPos {
				t.Errorf("pos = %d, want %d (the malformed record's)", pos, tt.wantPos)
			}
		})
	}
}

func TestBatchResetReusesStorage(t *testing.T) {
	ring, head := ringOf(1024, 0, sampleRec(s1), sampleRec(s1))
	var b Batch
	if _, err := Decode(ring, head, 0, testSampleType, &b); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if a := testing.AllocsPerRun(100, func() {
		b.Reset()
		Decode(ring, head, 0, testSampleType, &b)
	}); a != 0 {
		t.Errorf("Decode into a reset Batch allocates %v times", a)
	}
	if len(b.Samples) != 2 || !slices.Equal(b.Samples[1].Callchain, s1.Callchain) {
		t.Fatalf("after reuse: %+v", b.Samples)
	}
}

// ringFixture is a ring buffer snapshot recorded by profile/sampler's
// TestRecordFixture on a real recvmsg loop.
type ringFixture struct {
	sampleType, head, tail, tid uint64
	data                        []byte
}

func readRingFixture(t *testing.T, name string) ringFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 48 || string(b[:8]) != "RTLRING1" {
		t.Fatalf("%s: not an RTLRING1 fixture", name)
	}
	u := func(i int) uint64 { return binary.NativeEndian.Uint64(b[8+8*i:]) }
	f := ringFixture{sampleType: u(0), head: u(1), tail: u(2), tid: u(3), data: b[48:]}
	if uint64(len(f.data)) != u(4) {
		t.Fatalf("%s: %d data bytes, header says %d", name, len(f.data), u(4))
	}
	return f
}

func TestDecodeRecordedFixture(t *testing.T) {
	f := readRingFixture(t, "ring-recvmsg.bin")
	size := uint64(len(f.data))
	if f.tail%size+(f.head-f.tail) <= size {
		t.Fatalf("fixture does not wrap: tail %d head %d size %d", f.tail, f.head, size)
	}
	var b Batch
	pos, err := Decode(f.data, f.head, f.tail, f.sampleType, &b)
	if err != nil || pos != f.head {
		t.Fatalf("Decode = %d, %v; want %d", pos, err, f.head)
	}
	if len(b.Samples) < 20 {
		t.Fatalf("%d samples, want ≥ 20 (the recorder saw 37)", len(b.Samples))
	}
	var prev uint64
	for i, s := range b.Samples {
		if uint64(s.TID) != f.tid {
			t.Fatalf("sample %d on TID %d, fixture sampled %d", i, s.TID, f.tid)
		}
		if s.Time < prev {
			t.Errorf("sample %d time %d before %d", i, s.Time, prev)
		}
		prev = s.Time
		if s.Period != 50_000 {
			t.Errorf("sample %d period %d, recorded with 50000 ns", i, s.Period)
		}
		if len(s.Callchain) < 2 || (s.Callchain[0] != ContextKernel && s.Callchain[0] != ContextUser) {
			t.Errorf("sample %d callchain %x does not start with a context marker", i, s.Callchain)
		}
	}
}
