package wakelog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results/safeio"
)

const wlBase = "wakeups-00-recvfrom-r0-rt"

// testDir opens dir as a results directory for the test.
func testDir(t testing.TB, dir string) *safeio.Dir {
	t.Helper()
	d, err := safeio.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// wlRow is row i of a synthetic log: tick i, every field varying, latency
// sometimes negative.
func wlRow(i int) record.Wakeup {
	return record.Wakeup{
		Tick:       uint64(i),
		DeadlineNs: 1_000_000_000 + int64(i)*10_000_000,
		LatencyNs:  int64(i%997) - 50,
		DrainNs:    int64(i * 7919 % 100_000),
		Messages:   uint32(i % 451),
		Calls:      uint32(450 + i%451),
		EAGAIN:     uint32(450 - i%300),
		Missed:     uint32(i / 50_000),
		VolCS:      uint32(1 + i%3),
		InvolCS:    uint32(i % 7 / 6),
	}
}

func wlWrite(t *testing.T, l *Writer, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		r := wlRow(i)
		if err := l.Write(&r); err != nil {
			t.Fatalf("Write row %d: %v", i, err)
		}
	}
}

// wlCheckRows fails unless got is rows from..from+len(got) of wlRow and has n rows.
func wlCheckRows(t *testing.T, got []record.Wakeup, from, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("read %d rows, want %d", len(got), n)
	}
	for i := range got {
		if want := wlRow(from + i); got[i] != want {
			t.Fatalf("row %d (-want +got):\n%s", i, cmp.Diff(want, got[i]))
		}
	}
}

// wlDirBytes is the total length of every file of wlBase in dir, temporary
// files included.
func wlDirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if !strings.Contains(e.Name(), wlBase) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// wlCheckGzipComplete reads every .gz in dir to EOF and fails on any error
// (truncated stream, bad checksum). Temporary files fail too unless
// inRotation, when they are read as gzip but not counted.
func wlCheckGzipComplete(t *testing.T, dir string, inRotation bool) (n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tmp := strings.HasSuffix(e.Name(), ".tmp")
		if tmp && !inRotation {
			t.Errorf("temporary file left: %s", e.Name())
		}
		if !tmp && !strings.HasSuffix(e.Name(), ".gz") {
			continue
		}
		if !tmp {
			n++
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err == nil {
			_, err = io.Copy(io.Discard, zr)
		}
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
	return n
}

func TestWakeupLogRoundTrip(t *testing.T) {
	const rows = 100_000
	dir := t.TempDir()
	l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: 64 << 10, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	wlWrite(t, l, 0, rows)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	if st.Rows != rows || st.RowsDropped != 0 || st.ChunksDropped != 0 {
		t.Errorf("Stats rows %d dropped %d/%d chunks, want %d, 0, 0", st.Rows, st.RowsDropped, st.ChunksDropped, rows)
	}
	if len(st.Files) < 10 {
		t.Fatalf("%d chunks, want many: %v", len(st.Files), st.Files)
	}
	for _, f := range st.Files {
		if !strings.HasSuffix(f, ".csv.gz") {
			t.Errorf("after Close, chunk %s is not compressed", f)
		}
	}
	if st.Files[0] != wlBase+".0000.csv.gz" {
		t.Errorf("first chunk %s, want %s.0000.csv.gz", st.Files[0], wlBase)
	}
	if got := wlDirBytes(t, dir); st.BytesOnDisk != got {
		t.Errorf("BytesOnDisk %d, files total %d", st.BytesOnDisk, got)
	}
	if n := wlCheckGzipComplete(t, dir, false); n != len(st.Files) {
		t.Errorf("%d .gz files, Stats lists %d", n, len(st.Files))
	}
	files, err := LogFiles(dir, wlBase)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st.Files, files); diff != "" {
		t.Errorf("LogFiles vs Stats.Files (-stats +files):\n%s", diff)
	}
	got, rst, err := ReadLog(dir, wlBase)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReadStats{Files: len(st.Files), Rows: rows}); rst != want {
		t.Errorf("ReadStats %+v, want %+v", rst, want)
	}
	wlCheckRows(t, got, 0, rows)
}

func TestWakeupLogLimit(t *testing.T) {
	const (
		rows  = 100_000
		chunk = 64 << 10
		limit = 200 << 10
	)
	for _, compress := range []bool{true, false} {
		name := map[bool]string{true: "gzip", false: "plain"}[compress]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: chunk, LimitBytes: limit, Compress: compress})
			if err != nil {
				t.Fatal(err)
			}
			// Peak inside a rotation: the new .gz is in place, its plain
			// source not yet removed, the oldest chunks not yet deleted.
			var peak int64
			var gzMax int64
			l.hook = func(stage string) {
				if stage != "renamed" {
					return
				}
				peak = max(peak, wlDirBytes(t, dir))
				fi, err := os.Stat(filepath.Join(dir, l.name+".gz"))
				if err != nil {
					t.Fatal(err)
				}
				gzMax = max(gzMax, fi.Size())
			}
			seq := 0
			for i := range rows {
				r := wlRow(i)
				if err := l.Write(&r); err != nil {
					t.Fatal(err)
				}
				if b := l.closedBytes + l.openBytes; b > limit {
					t.Fatalf("row %d: %d bytes accounted, limit %d", i, b, limit)
				}
				if l.seq != seq { // rotated: the files themselves obey the cap
					seq = l.seq
					if got := wlDirBytes(t, dir); got > limit {
						t.Fatalf("after rotation to chunk %d: %d bytes on disk, limit %d", seq, got, limit)
					}
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if got := wlDirBytes(t, dir); got > limit {
				t.Errorf("after Close: %d bytes on disk, limit %d", got, limit)
			}
			if compress {
				if peak > limit+gzMax {
					t.Errorf("peak during rotation %d bytes, want ≤ limit + one compressed chunk = %d", peak, limit+gzMax)
				}
				if gzMax > chunk {
					t.Errorf("compressed chunk %d bytes, bigger than ChunkBytes %d", gzMax, chunk)
				}
				wlCheckGzipComplete(t, dir, false)
			} else {
				for _, f := range l.Stats().Files {
					fi, err := os.Stat(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					if fi.Size() > chunk {
						t.Errorf("%s: %d bytes, above ChunkBytes %d", f, fi.Size(), chunk)
					}
				}
			}
			st := l.Stats()
			if st.ChunksDropped == 0 || st.RowsDropped == 0 {
				t.Fatalf("cap dropped nothing: %+v", st)
			}
			if got := wlDirBytes(t, dir); st.BytesOnDisk != got {
				t.Errorf("BytesOnDisk %d, files total %d", st.BytesOnDisk, got)
			}
			got, rst, err := ReadLog(dir, wlBase)
			if err != nil {
				t.Fatal(err)
			}
			if st.RowsDropped+uint64(len(got)) != rows {
				t.Errorf("dropped %d + read %d ≠ written %d", st.RowsDropped, len(got), rows)
			}
			if len(got) > 0 && got[0].Tick != st.RowsDropped {
				t.Errorf("first row read has tick %d, want %d (the oldest dropped)", got[0].Tick, st.RowsDropped)
			}
			if rst.Files != len(st.Files) || rst.TornRows != 0 {
				t.Errorf("ReadStats %+v, Stats files %d", rst, len(st.Files))
			}
			wlCheckRows(t, got, int(st.RowsDropped), rows-int(st.RowsDropped))
		})
	}
}

func TestWakeupLogUnchunkedMatchesFormat(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase})
	if err != nil {
		t.Fatal(err)
	}
	rows := []record.Wakeup{
		{},
		{Tick: math.MaxUint64, DeadlineNs: math.MaxInt64, LatencyNs: math.MinInt64, DrainNs: -1,
			Messages: math.MaxUint32, Calls: math.MaxUint32, EAGAIN: math.MaxUint32, Missed: math.MaxUint32},
	}
	for i := range 5000 {
		rows = append(rows, wlRow(i))
	}
	for i := range rows {
		if err := l.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The CSV as the format defines it, written here independently.
	var want []byte
	want = append(want, Header+"\n"...)
	for _, r := range rows {
		want = fmt.Appendf(want, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", r.Tick, r.DeadlineNs, r.LatencyNs, r.DrainNs,
			r.Messages, r.Calls, r.EAGAIN, r.Missed, r.VolCS, r.InvolCS)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.csv"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{wlBase + ".csv"}, l.Stats().Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(dir, wlBase+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s.csv differs from the CSV format (%d vs %d bytes)", wlBase, len(got), len(want))
	}
	if st := l.Stats(); st.BytesOnDisk != int64(len(got)) {
		t.Errorf("BytesOnDisk %d, file %d bytes", st.BytesOnDisk, len(got))
	}
	for _, base := range []string{wlBase, wlBase + ".csv", "old.csv"} {
		read, rst, err := ReadLog(dir, base)
		if err != nil {
			t.Fatal(err)
		}
		if rst != (ReadStats{Files: 1, Rows: len(rows)}) {
			t.Errorf("%s: ReadStats %+v", base, rst)
		}
		if diff := cmp.Diff(rows, read); diff != "" {
			t.Errorf("%s: rows (-want +got):\n%s", base, diff)
		}
	}
	// A path in base, today's layout: ReadLog("", "<dir>/old.csv").
	if _, _, err := ReadLog("", filepath.Join(dir, "old.csv")); err != nil {
		t.Errorf("plain file path: %v", err)
	}
}

// TestWakeupLogKilled simulates SIGKILL after a Sync: no Close. Closed
// chunks are .gz, the open one plain, and every synced row reads back.
func TestWakeupLogKilled(t *testing.T) {
	const rows = 10_000
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"chunked gzip", Config{ChunkBytes: 64 << 10, Compress: true}},
		{"chunked plain", Config{ChunkBytes: 64 << 10}},
		{"unchunked", Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tc.cfg
			cfg.Dir, cfg.Base = testDir(t, dir), wlBase
			l, err := Create(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			wlWrite(t, l, 0, rows)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			files, err := LogFiles(dir, wlBase)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ChunkBytes > 0 && len(files) < 3 {
				t.Fatalf("%d chunks, want ≥ 3: %v", len(files), files)
			}
			for i, f := range files {
				gz := strings.HasSuffix(f, ".gz")
				if wantGz := cfg.Compress && i < len(files)-1; gz != wantGz {
					t.Errorf("chunk %s: compressed %v, want %v", f, gz, wantGz)
				}
			}
			if diff := cmp.Diff(l.Stats().Files, files); diff != "" {
				t.Errorf("Stats.Files vs LogFiles (-stats +files):\n%s", diff)
			}
			if got, st := wlDirBytes(t, dir), l.Stats(); got != st.BytesOnDisk {
				t.Errorf("after Sync: %d bytes on disk, Stats %d", got, st.BytesOnDisk)
			}
			got, rst, err := ReadLog(dir, wlBase)
			if err != nil {
				t.Fatal(err)
			}
			if rst.TornRows != 0 || rst.Files != len(files) {
				t.Errorf("ReadStats %+v, want %d files, 0 torn", rst, len(files))
			}
			wlCheckRows(t, got, 0, rows)
		})
	}
}

func TestWakeupLogTornTail(t *testing.T) {
	const rows = 10_000
	for _, tc := range []struct {
		name string
		cfg  Config
		tail string
		note string // ReadStats.Torn after the file's name: never silent
	}{
		{"chunked half row", Config{ChunkBytes: 64 << 10, Compress: true}, "10000,1000100000",
			".0006.csv:1138: last line cut short (no newline; 2 of 10 fields): skipped"},
		{"chunked row without newline", Config{ChunkBytes: 64 << 10, Compress: true}, "10000,1,2,3,4,5,6,7",
			".0006.csv:1138: last line cut short (no newline; 8 of 10 fields): skipped"},
		// A whole-looking row without its newline may be cut inside a number.
		{"whole row without newline", Config{}, "10000,1,2,3,4,5,6,7,8,9",
			".csv:10002: last line cut short (no newline; 10 fields, the last maybe cut inside its number): skipped"},
		{"bad value without newline", Config{}, "10000,1,2,3,4,5,6,7,8,x",
			".csv:10002: last line cut short (no newline; invol_cs: invalid value \"x\"): skipped"},
		{"unchunked half row", Config{}, "10000,",
			".csv:10002: last line cut short (no newline; 2 of 10 fields): skipped"},
		// Power loss can leave the tail zero-filled, longer than a buffer.
		{"zero-filled tail", Config{ChunkBytes: 64 << 10}, strings.Repeat("\x00", 100<<10),
			".0006.csv:1138: last line cut short (no newline; longer than 65536 bytes): skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tc.cfg
			cfg.Dir, cfg.Base = testDir(t, dir), wlBase
			l, err := Create(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			wlWrite(t, l, 0, rows)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			files := l.Stats().Files
			open := filepath.Join(dir, files[len(files)-1])
			f, err := os.OpenFile(open, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tc.tail); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got, rst, err := ReadLog(dir, wlBase)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(rst.Torn, tc.note) || !strings.HasPrefix(rst.Torn, filepath.Join(dir, wlBase)) {
				t.Errorf("Torn %q, want the file's path then %q", rst.Torn, tc.note)
			}
			rst.Torn = ""
			if want := (ReadStats{Files: len(files), Rows: rows, TornRows: 1}); rst != want {
				t.Errorf("ReadStats %+v, want %+v", rst, want)
			}
			wlCheckRows(t, got, 0, rows)
		})
	}
}

// TestWakeupLogDamagedMiddle: damage anywhere but the end of the newest
// chunk is an error naming the file and line.
func TestWakeupLogDamagedMiddle(t *testing.T) {
	tear := func(b []byte) []byte { return b[:len(b)-3] } // cut the last row short
	badValue := func(b []byte) []byte {                   // "x" before the tick of line 3
		i := bytes.IndexByte(b, '\n')
		i += 1 + bytes.IndexByte(b[i+1:], '\n')
		return slices.Concat(b[:i+1], []byte("x"), b[i+1:])
	}
	for _, tc := range []struct {
		name     string
		compress bool
		damage   func([]byte) []byte
		wantErr  string // after "<chunk 1 path>:"
	}{
		{"torn plain", false, tear, "torn line (no newline) in a closed chunk"},
		{"torn gzip", true, tear, "torn line (no newline) in a closed chunk"},
		{"bad value plain", false, badValue, `tick: invalid value "x`},
		{"bad value gzip", true, badValue, `tick: invalid value "x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: 4 << 10, Compress: tc.compress})
			if err != nil {
				t.Fatal(err)
			}
			wlWrite(t, l, 0, 500)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			files := l.Stats().Files
			if len(files) < 3 {
				t.Fatalf("%d chunks, want ≥ 3", len(files))
			}
			path := filepath.Join(dir, files[1])
			data := wlReadChunk(t, path)
			damaged := tc.damage(data)
			wlWriteChunk(t, path, damaged)
			_, _, err = ReadLog(dir, wlBase)
			if err == nil {
				t.Fatal("no error")
			}
			wantLine := bytes.Count(damaged, []byte("\n")) + 1 // the torn line follows the last newline
			if tc.wantErr != "torn line (no newline) in a closed chunk" {
				wantLine = 3 // header, row 0 of the chunk, the damaged row
			}
			want := path + ":" + strconv.Itoa(wantLine) + ": " + tc.wantErr
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nwant it to contain %s", err, want)
			}
		})
	}
}

// wlReadChunk returns the CSV text of a chunk, plain or gzip.
func wlReadChunk(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	data, err = io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// wlWriteChunk replaces a chunk with text, compressed when path ends in .gz.
func wlWriteChunk(t *testing.T, path string, text []byte) {
	t.Helper()
	if strings.HasSuffix(path, ".gz") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(text)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		text = buf.Bytes()
	}
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWakeupLogCompressionCrash: a .gz appears under its final name only
// complete; leftovers of a crash mid-compression (a temporary file, or the
// plain chunk next to its .gz) neither confuse a reader nor survive the
// next Create.
func TestWakeupLogCompressionCrash(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: 8 << 10, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	compressions := 0
	l.hook = func(stage string) {
		if stage != "compressed" {
			return
		}
		compressions++
		// The temporary .gz is written and fsynced; a crash now must not
		// leave anything under the final name.
		final := filepath.Join(dir, l.name+".gz")
		if _, err := os.Stat(final); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("before rename, %s: %v, want not exist", final, err)
		}
		files, err := LogFiles(dir, wlBase)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, ".tmp") {
				t.Errorf("LogFiles lists temporary %s", f)
			}
		}
		wlCheckGzipComplete(t, dir, true)
	}
	wlWrite(t, l, 0, 2000)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if compressions < 3 {
		t.Fatalf("%d compressions, want ≥ 3", compressions)
	}
	if n := wlCheckGzipComplete(t, dir, false); n != compressions {
		t.Errorf("%d .gz, %d compressions", n, compressions)
	}

	// Crash leftovers: chunk 1 both plain and .gz (crash after rename),
	// a half-written temporary .gz of chunk 2.
	files := l.Stats().Files
	plain1 := strings.TrimSuffix(files[1], ".gz")
	wlWriteChunk(t, filepath.Join(dir, plain1), wlReadChunk(t, filepath.Join(dir, files[1])))
	tmp := filepath.Join(dir, "."+files[2]+".123456.tmp")
	if err := os.WriteFile(tmp, []byte{0x1f, 0x8b, 8}, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LogFiles(dir, wlBase)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("with leftovers, files (-want +got):\n%s", diff)
	}
	rows, _, err := ReadLog(dir, wlBase)
	if err != nil {
		t.Fatal(err)
	}
	wlCheckRows(t, rows, 0, 2000)

	// A truncated .gz under a final name (which the writer never leaves)
	// is an error naming it, not silently short data.
	gz2 := filepath.Join(dir, files[2])
	data, err := os.ReadFile(gz2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz2, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadLog(dir, wlBase); err == nil || !strings.Contains(err.Error(), gz2) {
		t.Errorf("truncated .gz: error %v, want it to name %s", err, gz2)
	}

	// The next Create starts clean.
	l2, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: 8 << 10, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, dir)
	if diff := cmp.Diff([]string{wlBase + ".0000.csv.gz"}, names); diff != "" {
		t.Errorf("after a new Create and Close, dir (-want +got):\n%s", diff)
	}
}

func TestWakeupLogWriteAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"unchunked", Config{}},
		{"chunked", Config{ChunkBytes: 1 << 20, LimitBytes: 4 << 20, Compress: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dir, cfg.Base = testDir(t, t.TempDir()), wlBase
			l, err := Create(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := wlRow(123456)
			seq := l.seq
			allocs := testing.AllocsPerRun(5000, func() {
				if err := l.Write(&r); err != nil {
					t.Fatal(err)
				}
			})
			if l.seq != seq {
				t.Fatalf("rotated during the measurement")
			}
			if allocs != 0 {
				t.Errorf("Write allocs %v per row, want 0", allocs)
			}
		})
	}
}

func TestWakeupLogClose(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(Config{Dir: testDir(t, dir), Base: wlBase, ChunkBytes: 4 << 10, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	wlWrite(t, l, 0, 300)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	before := l.Stats()
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if diff := cmp.Diff(before, l.Stats()); diff != "" {
		t.Errorf("second Close changed Stats (-before +after):\n%s", diff)
	}
	r := wlRow(300)
	if err := l.Write(&r); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v, want os.ErrClosed", err)
	}
	if err := l.Sync(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Sync after Close: %v, want os.ErrClosed", err)
	}
	got, _, err := ReadLog(dir, wlBase)
	if err != nil {
		t.Fatal(err)
	}
	wlCheckRows(t, got, 0, 300)
}

func TestWakeupLogConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no base", Config{Dir: testDir(t, dir)}, "base is empty"},
		{"base is a path", Config{Dir: testDir(t, dir), Base: "a/b"}, `base "a/b" is not a file name`},
		{"negative chunk", Config{Dir: testDir(t, dir), Base: "b", ChunkBytes: -1}, "chunk bytes -1 is negative"},
		{"tiny chunk", Config{Dir: testDir(t, dir), Base: "b", ChunkBytes: 100}, "chunk bytes 100 below the minimum 1024"},
		{"negative limit", Config{Dir: testDir(t, dir), Base: "b", ChunkBytes: 4096, LimitBytes: -1}, "limit bytes -1 is negative"},
		// Without rotation nothing can be deleted to honour a cap.
		{"limit without chunks", Config{Dir: testDir(t, dir), Base: "b", LimitBytes: 1 << 20}, "needs chunk bytes > 0"},
		{"limit below chunk", Config{Dir: testDir(t, dir), Base: "b", ChunkBytes: 8192, LimitBytes: 4096}, "limit bytes 4096 below chunk bytes 8192"},
		// ChunkBytes 0 promises today's plain <base>.csv.
		{"compress without chunks", Config{Dir: testDir(t, dir), Base: "b", Compress: true}, "compress needs chunk bytes > 0"},
		// Every problem is listed, not only the first.
		{"all at once", Config{Dir: testDir(t, dir), ChunkBytes: -1, LimitBytes: -1, Compress: false}, "base is empty\nchunk bytes -1 is negative"},
		{"no dir", Config{Base: "b"}, "no results directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			l, err := Create(cfg)
			if err == nil {
				l.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
			if cfg != tc.cfg {
				t.Errorf("Create changed its config")
			}
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("failed Creates left %d files", len(ents))
	}
}

func TestWakeupLogFiles(t *testing.T) {
	touch := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("order", func(t *testing.T) {
		dir := t.TempDir()
		touch(t, dir,
			"b.10000.csv", "b.0009.csv.gz", "b.9999.csv.gz",
			"b.0001.csv", "b.0001.csv.gz", // crash after rename: the .gz wins
			".b.0002.csv.gz.77.tmp", // crash while compressing
			"b-other.0001.csv", "b.x.csv", "b.0003.txt", "summary.json",
		)
		got, err := LogFiles(dir, "b")
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"b.0001.csv.gz", "b.0009.csv.gz", "b.9999.csv.gz", "b.10000.csv"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if _, _, err := ReadLog(dir, "b"); err == nil || !strings.Contains(err.Error(), "chunk 2 missing between b.0001.csv.gz and b.0009.csv.gz") {
			t.Errorf("gap: error %v", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		_, err := LogFiles(t.TempDir(), "b")
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("mixed layouts", func(t *testing.T) {
		dir := t.TempDir()
		touch(t, dir, "b.csv", "b.0000.csv")
		if _, err := LogFiles(dir, "b"); err == nil || !strings.Contains(err.Error(), "both b.csv and 1 chunks") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("subdirectory in base", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "run1"), 0o755); err != nil {
			t.Fatal(err)
		}
		touch(t, dir, "run1/b.0000.csv.gz", "run1/b.0001.csv")
		got, err := LogFiles(dir, "run1/b")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"run1/b.0000.csv.gz", "run1/b.0001.csv"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("empty newest chunk", func(t *testing.T) {
		// Killed right after creating a chunk, before its header reached disk.
		dir := t.TempDir()
		l, err := Create(Config{Dir: testDir(t, dir), Base: "b", ChunkBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		wlWrite(t, l, 0, 200)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		n := len(l.Stats().Files)
		touch(t, dir, wakeupChunkName("b", n))
		got, st, err := ReadLog(dir, "b")
		if err != nil {
			t.Fatal(err)
		}
		if st != (ReadStats{Files: n + 1, Rows: 200}) {
			t.Errorf("ReadStats %+v", st)
		}
		wlCheckRows(t, got, 0, 200)
	})
}

// dirNames lists dir's entries by name.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestWakeupLogTornHeader: a newest chunk whose header was cut short
// gives no rows and says so, naming the file; a long bad field in a torn
// row is cut in the note.
func TestWakeupLogTornHeader(t *testing.T) {
	for _, tc := range []struct {
		name, content, note string
	}{
		{"header", "tick,deadline", "w.csv:1: header cut short (no newline): no rows"},
		{"long field", Header + "\n1,2,3,4,5,6,7,8,9," + strings.Repeat("y", 1000), "w.csv:2: last line cut short (no newline; invol_cs: invalid value \"yyyy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "w.csv"), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			rows, st, err := ReadFiles(dir, []string{"w.csv"})
			if err != nil || len(rows) != 0 {
				t.Fatalf("rows %d, err %v", len(rows), err)
			}
			if !strings.HasPrefix(st.Torn, filepath.Join(dir, tc.note)) || len(st.Torn) > len(dir)+300 {
				t.Errorf("Torn %q, want %q…, bounded", st.Torn, tc.note)
			}
		})
	}
}
