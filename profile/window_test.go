package profile

import "testing"

// TestBuilderWindow: samples outside [from, until) are dropped and
// counted; the bounds are inclusive below and exclusive above.
func TestBuilderWindow(t *testing.T) {
	ring, head := ringOf(2048, 0, sampleRec(s1), sampleRec(s2), sampleRec(s1))
	var b Batch
	if _, err := Decode(ring, head, 0, testSampleType, &b); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name               string
		from, until        uint64
		kept, outside, end uint64
	}{
		{"no window", 0, 0, 3, 0, 55_000},
		{"from is inclusive", 5_000, 0, 3, 0, 55_000},
		{"until is exclusive", 0, 55_000, 2, 1, 5_000},
		{"after both", 55_001, 0, 0, 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var bl Builder
			bl.Window(tt.from, tt.until)
			bl.Add(&b)
			p := bl.Build(Symbols{}, DefaultPhaseRule())
			if bl.Samples() != tt.kept || p.Samples() != tt.kept || bl.Outside() != tt.outside || p.EndNs != tt.end {
				t.Errorf("kept %d (profile %d), outside %d, end %d; want %d, %d, %d", bl.Samples(), p.Samples(), bl.Outside(), p.EndNs, tt.kept, tt.outside, tt.end)
			}
		})
	}
}
