package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// TestJSONLMemoryBudget: ReadJSONL's budget charges each record twice its
// size and what its line decodes to, and refuses the line that passes it.
func TestJSONLMemoryBudget(t *testing.T) {
	typ := reflect.TypeFor[results.Spike]()
	rec := 2 * int64(typ.Size())
	b := &safeio.Bounds{Lists: listLimits, Limit: 10 * rec, What: "any spikes.jsonl rtload writes"}
	var err error
	n := 0
	for n = 1; n <= 20 && err == nil; n++ {
		err = b.Check([]byte(`{}`), "spikes.jsonl", n, typ, rec)
	}
	if want := "spikes.jsonl:11:1: summary: decoding would take more than 0 MiB of memory, more than any spikes.jsonl rtload writes: refused"; err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
	b = &safeio.Bounds{Lists: listLimits, Limit: 1 << 20}
	err = b.Check([]byte(`{"reader":"rt","noise":[{"kind":"hackbench","unit":"messages","state":"on"}]}`), "spikes.jsonl", 1, typ, rec)
	if nv := int64(reflect.TypeFor[results.NoiseInterval]().Size()); err != nil || b.Used != rec+2+nv+9+8+2 {
		t.Errorf("charged %d (err %v), want the record %d, 2 bytes of reader, a noise entry %d and its 19 bytes of strings", b.Used, err, rec, nv)
	}
}

// TestEachJSONLBounded: EachJSONL holds no record, but checks each line as
// ReadJSONL does: a noise list past its limit is refused before the line
// is decoded, and the records before it were given.
func TestEachJSONLBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.SpikesFile)
	good := `{"trial":0,"reader":"rt","tick":1}` + "\n"
	bad := `{"trial":0,"reader":"rt","noise":[` + strings.Repeat("{},", 5000) + "{}]}\n"
	os.WriteFile(path, []byte(good+good+bad), 0o644)
	n := 0
	_, err := EachJSONL(path, func(results.Spike) { n++ })
	if want := path + ":3:12323: noise: more than 4096 entries, more than the limit of 4096: refused"; err == nil || err.Error() != want || n != 2 {
		t.Errorf("%d records, err %v, want 2 and %s", n, err, want)
	}
}
