package explain

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// FuzzProfile feeds arbitrary bytes, as a .pb.gz (compressed, possibly in
// several gzip members) or as raw bytes in its place, through the way
// explain and compare read a profile: store.ReadProfileFile (bounded
// inflation), pprof's ParseUncompressed, profile.FromPprof. Nothing may
// panic; what fails is a note on the variant.
func FuzzProfile(f *testing.F) {
	for _, m := range []string{"recvfrom", "recvmsg"} {
		data, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "attrib-"+m+".pb.gz"))
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			f.Fatal(err)
		}
		raw, _ := io.ReadAll(zr)
		f.Add(raw, uint8(1))
		f.Add(raw, uint8(3))
	}
	f.Add([]byte("not a profile"), uint8(0))
	f.Add(testutil.PprofFrameBomb(3, 1000), uint8(0)) // issue 34's shape, within the limits
	f.Add(testutil.PprofFrameBomb(3, 1000), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, members uint8) {
		file := data
		if n := int(members % 4); n > 0 {
			var b bytes.Buffer
			for i := range n {
				zw := gzip.NewWriter(&b)
				zw.Write(data[i*len(data)/n : (i+1)*len(data)/n])
				zw.Close()
			}
			file = b.Bytes()
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.pb.gz"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		s := &results.Summary{Version: results.SummaryVersion}
		v := LoadVariant(s, results.VariantProfile{Variant: "v", Pprof: "p.pb.gz"}, func(name string) ([]byte, error) {
			return store.ReadProfileFile(dir, name)
		})
		if v.Err == "" && v.Profile == nil {
			t.Fatal("no error and no profile")
		}
	})
}
