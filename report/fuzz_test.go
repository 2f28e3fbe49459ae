package report

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rtload/rtload/results/store"
)

// FuzzReport renders every summary the summary.json reader accepts
// (`rtload report` on a hostile file): it must never panic. Seeds: the
// golden summary and version 1 fixture of package results/store.
func FuzzReport(f *testing.F) {
	for _, p := range []string{"summary.json.golden", filepath.Join("v1", "summary.json")} {
		data, err := os.ReadFile(filepath.Join("..", "results", "store", "testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := store.DecodeSummary(data, "fuzz.json")
		if err != nil {
			return
		}
		_ = Report(io.Discard, s)
	})
}
