package wakelog_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/wakelog"
)

// FuzzParseWakeupLog feeds arbitrary bytes, plain and gzipped, to the
// wakeup-log reader: it must never panic, and every row it returns must
// format back to a line it reads again identically.
func FuzzParseWakeupLog(f *testing.F) {
	f.Add([]byte(wakelog.Header+"\n1,2,3,4,5,6,7,8,9,10\n"), false, true)
	f.Add([]byte(wakelog.HeaderV1+"\n7,1000,-2345,712000,225,675,450,1\n8,1"), false, true)
	if data, err := os.ReadFile(filepath.Join("..", "store", "testdata", "v1", "wakeups-00-recvfrom-r0-rt.csv")); err == nil {
		f.Add(data, false, false)
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		f.Add(b.Bytes(), true, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz, last bool) {
		var rows []record.Wakeup
		if _, err := wakelog.ParseLog(bytes.NewReader(data), "fuzz.csv", gz, last, &rows); err != nil {
			return
		}
		if len(rows) == 0 {
			return
		}
		// Round trip through the writer's format.
		dir := t.TempDir()
		d, err := safeio.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		l, err := wakelog.Create(wakelog.Config{Dir: d, Base: "w"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if err := l.Write(&rows[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		back, _, err := wakelog.ReadFiles(dir, l.Stats().Files)
		if err != nil || len(back) != len(rows) {
			t.Fatalf("round trip: %d of %d rows, %v", len(back), len(rows), err)
		}
		for i := range rows {
			if back[i] != rows[i] {
				t.Fatalf("row %d: %+v, wrote %+v", i, back[i], rows[i])
			}
		}
	})
}

// gzipSplit compresses content as one gzip member per piece, cut at the
// offsets cuts gives (each byte an offset modulo the length).
func gzipSplit(content, cuts []byte) []byte {
	var out bytes.Buffer
	start := 0
	for i := 0; i <= len(cuts); i++ {
		end := len(content)
		if i < len(cuts) && len(content) > 0 {
			end = max(start, int(cuts[i])*len(content)/256)
		}
		zw := gzip.NewWriter(&out)
		zw.Write(content[start:end])
		zw.Close()
		start = end
	}
	return out.Bytes()
}

// FuzzGzipMembers: a wakeup log compressed in any number of gzip members
// (a multi-member file reads as one stream) gives exactly the rows, torn
// count and error presence of the plain log, and Inflate never hands out
// more than its limit of arbitrary input.
func FuzzGzipMembers(f *testing.F) {
	f.Add([]byte(wakelog.Header+"\n1,2,3,4,5,6,7,8,9,10\n2,3,4,5,6,7,8,9,10,11\n"), []byte{128}, true)
	f.Add([]byte(wakelog.Header+"\n1,2,3,4,5,6,7,8,9,10\n2,3"), []byte{10, 200, 250}, false)
	f.Fuzz(func(t *testing.T, content, cuts []byte, last bool) {
		if len(cuts) > 16 {
			cuts = cuts[:16]
		}
		var plain, zipped []record.Wakeup
		tornP, errP := wakelog.ParseLog(bytes.NewReader(content), "w.csv", false, last, &plain)
		tornZ, errZ := wakelog.ParseLog(bytes.NewReader(gzipSplit(content, cuts)), "w.csv.gz", true, last, &zipped)
		if (errP == nil) != (errZ == nil) || tornP != tornZ {
			t.Fatalf("plain: torn %d err %v; gzip members: torn %d err %v", tornP, errP, tornZ, errZ)
		}
		if errP == nil {
			if diff := cmp.Diff(plain, zipped); diff != "" {
				t.Fatalf("rows differ (-plain +gzip):\n%s", diff)
			}
		}
		// Arbitrary bytes as a gzip stream: bounded, never a panic.
		const limit = 1 << 16
		zr, err := safeio.Inflate(bytes.NewReader(content), "x.gz", limit)
		if err != nil {
			return
		}
		defer zr.Close()
		var n int64
		buf := make([]byte, 4096)
		for {
			k, err := zr.Read(buf)
			n += int64(k)
			if n > limit+1 {
				t.Fatalf("Inflate handed out %d bytes, limit %d", n, limit)
			}
			if err != nil {
				break
			}
		}
	})
}
