package store_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// Results from elsewhere (issue 23): every reader refuses a link or a
// FIFO at once, naming the file and quoting nothing of it; what a file
// inflates or decodes to is bounded before memory is spent.

// secret writes a root-only file whose first line must never be printed.
func secret(t *testing.T) (path, line string) {
	t.Helper()
	line = "SECRET-" + t.Name()
	path = filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(path, []byte(line+"\nroot:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, line
}

// hostileDir is a results directory whose summary lists one reader with
// wakeup log w.csv and a profile p.pb.gz.
func hostileDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s := testutil.SeedSummary()
	s.Trials[0].Readers[0].WakeupLog = []string{"w.csv"}
	s.Profiles = []results.VariantProfile{{Variant: s.Trials[0].Variant, Pprof: "p.pb.gz"}}
	testutil.WriteSummary(t, dir, s)
	return dir
}

// readers are every reader of a results file, by the name it reads.
var readers = []struct {
	file string
	read func(dir string) error
}{
	{results.SummaryFile, func(dir string) error { _, err := store.ReadSummary(dir); return err }},
	{results.SummaryFile, func(dir string) error {
		_, err := store.ReadSummary(filepath.Join(dir, results.SummaryFile))
		return err
	}},
	{"w.csv", func(dir string) error {
		_, _, err := wakelog.ReaderWakeups(dir, results.Reader{WakeupLog: []string{"w.csv"}})
		return err
	}},
	{"w.csv", func(dir string) error { _, _, err := wakelog.ReadFiles(dir, []string{"w.csv"}); return err }},
	{"p.pb.gz", func(dir string) error { _, err := store.ReadProfileFile(dir, "p.pb.gz"); return err }},
	{results.SpikesFile, func(dir string) error {
		_, _, err := store.ReadJSONL[results.Spike](filepath.Join(dir, results.SpikesFile))
		return err
	}},
}

// place puts kind at dir/name in place of what is there: "symlink" (to
// target), "fifo" or "dir".
func place(t *testing.T, dir, name, kind, target string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.Remove(p)
	var err error
	switch kind {
	case "symlink":
		err = os.Symlink(target, p)
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "dir":
		err = os.Mkdir(p, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// within runs f and fails the test when it has not returned after d: a
// reader that blocks on a FIFO hangs forever.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still reading after %v: blocked", d)
		return nil
	}
}

func TestReadersRefuseLinksAndFIFOs(t *testing.T) {
	target, line := secret(t)
	for _, kind := range []string{"symlink", "fifo", "dir"} {
		for i, r := range readers {
			t.Run(fmt.Sprintf("%s as %s/%d", r.file, kind, i), func(t *testing.T) {
				dir := hostileDir(t)
				place(t, dir, r.file, kind, target)
				err := within(t, 10*time.Second, func() error { return r.read(dir) })
				if !errors.Is(err, safeio.ErrRefusedFile) {
					t.Fatalf("err = %v, want ErrRefusedFile", err)
				}
				if !strings.Contains(err.Error(), filepath.Join(dir, r.file)) {
					t.Errorf("err = %v, want it to name %s", err, filepath.Join(dir, r.file))
				}
				if strings.Contains(err.Error(), line) || strings.Contains(err.Error(), "root:x") {
					t.Errorf("err quotes the file's content: %v", err)
				}
			})
		}
	}
	// A link to a directory of another user's making, given as the
	// results directory, is refused too; the user's own link is followed.
	dir := hostileDir(t)
	own := filepath.Join(t.TempDir(), "latest")
	if err := os.Symlink(dir, own); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ReadSummary(own); err != nil {
		t.Errorf("own link to a results directory: %v", err)
	}
	t.Run("another user's link", func(t *testing.T) {
		testutil.Requires(t, testutil.Root) // to give the link to uid 65534
		if err := os.Lchown(own, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := store.ReadSummary(own); !errors.Is(err, safeio.ErrRefusedFile) || !strings.Contains(err.Error(), "symlink owned by uid 65534") {
			t.Errorf("another user's link: err = %v", err)
		}
	})
}

// wakeupRows is n valid wakeup-log rows after the header.
func wakeupRows(n int) []byte {
	var b bytes.Buffer
	b.WriteString(wakelog.Header + "\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,%d,4500,9000,450,900,450,0,1,0\n", i, 1764612345678901234+int64(i)*10_000_000)
	}
	return b.Bytes()
}

// gzipMembers is a gzip file of member repeated n times (each member
// compressed once: a few KB stand for GiBs).
func gzipMembers(t *testing.T, member []byte, n int) []byte {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	zw.Write(member)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(one.Bytes(), n)
}

// allocated runs f and returns the bytes it allocated (runtime.MemStats
// TotalAlloc: what rtload's code asked for, whatever the machine does).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWakeupGzipBomb: 1 GiB of valid rows in a gzip file of a few MB
// (issue 23: compare, explain and plot went past 8 GB) is refused, having
// inflated and allocated little.
func TestWakeupGzipBomb(t *testing.T) {
	testutil.Long(t, "inflates bombs of tens of MiB")
	for _, tc := range []struct {
		name string
		data func() []byte
	}{
		// The first row repeated: one member of 64 MiB and more.
		{"one member", func() []byte {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			zw.Write([]byte(wakelog.Header + "\n"))
			row := bytes.Repeat([]byte("1,1764612345678901234,4500,9000,450,900,450,0,1,0\n"), 1<<14)
			for range (80 << 20) / len(row) {
				zw.Write(row)
			}
			zw.Close()
			return b.Bytes()
		}},
		// As in issue 23: 1 GiB of valid rows in 2.6 MB. The header, then
		// 1 MiB of one row repeated, compressed once and repeated in 1024
		// gzip members (one stream to a reader).
		{"1 GiB in members", func() []byte {
			mib := bytes.Repeat([]byte("1,1764612345678901234,4500,9000,450,900,450,0,1,0\n"), (1<<20)/51)
			return append(gzipMembers(t, []byte(wakelog.Header+"\n"), 1), gzipMembers(t, mib, 1024)...)
		}},
		// Rows that compress as real ones do (10×), past the 64 MiB a
		// chunk may inflate to: refused at the bound.
		{"70 MiB of real rows", func() []byte {
			rows := wakeupRows(20_000)[len(wakelog.Header)+1:]
			mib := bytes.Repeat(rows, (1<<20)/len(rows)+1)[:1<<20]
			mib = mib[:bytes.LastIndexByte(mib, '\n')+1]
			return append(gzipMembers(t, []byte(wakelog.Header+"\n"), 1), gzipMembers(t, mib, 70)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := tc.data()
			if err := os.WriteFile(filepath.Join(dir, "w.csv.gz"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			alloc := allocated(func() { _, _, err = wakelog.ReadFiles(dir, []string{"w.csv.gz"}) })
			if !errors.Is(err, safeio.ErrInflateLimit) {
				t.Fatalf("err = %v, want ErrInflateLimit", err)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, "w.csv.gz")) {
				t.Errorf("err = %v, want the file named", err)
			}
			// At most the rows of one 64 MiB chunk (1.3 M rows of 56
			// bytes, with the slice's growth) and the inflater's buffers.
			if alloc > 512<<20 {
				t.Errorf("refusing a %d-byte bomb allocated %d MiB", len(data), alloc>>20)
			}
			t.Logf("%d bytes on disk refused: %v; %d MiB allocated", len(data), err, alloc>>20)
		})
	}
	// A chunk rtload writes (≤ wakelog.MaxChunkBytes, compressed as the
	// writer does) still reads.
	dir := t.TempDir()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zw.Write(wakeupRows(100_000))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "w.csv.gz"), b.Bytes(), 0o644)
	if rows, _, err := wakelog.ReadFiles(dir, []string{"w.csv.gz"}); err != nil || len(rows) != 100_000 {
		t.Errorf("a real chunk: %d rows, %v", len(rows), err)
	}
}

// TestProfileBomb: a 10 MB .pb.gz that inflates to 10 GiB (issue 23:
// explain went past 8 GB inside pprof's parser) is refused before pprof
// sees it.
func TestProfileBomb(t *testing.T) {
	dir := t.TempDir()
	data := gzipMembers(t, make([]byte, 1<<20), 10<<10) // 10240 × 1 MiB of zeros
	if err := os.WriteFile(filepath.Join(dir, "p.pb.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	alloc := allocated(func() { _, err = store.ReadProfileFile(dir, "p.pb.gz") })
	if !errors.Is(err, safeio.ErrInflateLimit) || !strings.Contains(err.Error(), "p.pb.gz") {
		t.Fatalf("err = %v, want ErrInflateLimit naming p.pb.gz", err)
	}
	if alloc > 100<<20 {
		t.Errorf("refusing a %d-byte profile bomb allocated %d MiB", len(data), alloc>>20)
	}
	t.Logf("%d bytes refused: %v; %d MiB allocated", len(data), err, alloc>>20)
	// Compressed twice: pprof would inflate the inner layer without bound.
	twice := gzipMembers(t, gzipMembers(t, []byte("x"), 1), 1)
	os.WriteFile(filepath.Join(dir, "p.pb.gz"), twice, 0o644)
	if _, err := store.ReadProfileFile(dir, "p.pb.gz"); err == nil || !strings.Contains(err.Error(), "compressed twice") {
		t.Errorf("a profile compressed twice: %v", err)
	}
}

// TestSummaryDecodeBomb: 25 MB of empty trials (issue 23: past 8 GB
// before the trial limit was checked) and empty readers within the trial
// limit are refused before json.Unmarshal builds them.
func TestSummaryDecodeBomb(t *testing.T) {
	testutil.Long(t, "decodes 25 MB bombs")
	for _, tc := range []struct {
		name, body, want string
	}{
		{"25 MB of empty trials", `{"version":2,"trials":[` + strings.Repeat("{},", 25<<20/3) + `{}]}`,
			"trials: more than 65536 entries, more than the limit of 65536"},
		{"25 MB of empty readers", `{"version":2,"trials":[` + strings.Repeat(`{"readers":[`+strings.Repeat("{},", 4000)+`{}]},`, 25<<20/12010) + `{}]}`,
			"decoding would take more than 256 MiB of memory"},
		{"the limits hold in profiled_trials and probes too", `{"version":2,"profiled_trials":[{"probes":[` + strings.Repeat("{},", 5000) + `{}]}]}`,
			"profiled_trials[0].probes: more than 4096 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = store.DecodeSummary([]byte(tc.body), "summary.json") })
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "summary.json:1:") {
				t.Fatalf("err = %v, want summary.json:1:… %q", err, tc.want)
			}
			if alloc > 64<<20 {
				t.Errorf("refusing %d bytes allocated %d MiB", len(tc.body), alloc>>20)
			}
			t.Logf("%d bytes: %v; %d MiB allocated", len(tc.body), err, alloc>>20)
		})
	}
}

// TestSummaryFoldedKeys: encoding/json matches member keys to fields
// case-insensitively with Unicode simple folding, so a key that is not a
// field's name can still decode into that field (issue 34: "reader\u017f",
// with a long s, filled a trial's readers while the pre-pass walked it as
// an unknown key, and 3 MB cost report 3.8 GB). The pre-pass refuses
// every such key before anything is built, and still takes a field's
// exact name however it is escaped, and ignores keys no field folds to.
func TestSummaryFoldedKeys(t *testing.T) {
	empties := func(n int) string { return strings.Repeat("{},", n-1) + "{}" }
	for _, tc := range []struct {
		name, body, want string
	}{
		{"long s (U+017F) for s, 60,000 readers in one trial", `{"version":3,"trials":[{"reader\u017f":[` + empties(60000) + `]}]}`,
			`summary.json:1:25: trials[0]: key "readerſ" is not "readers", but encoding/json would decode it into that field: refused`},
		{"the long s unescaped", `{"version":3,"trials":[{"readerſ":[{}]}]}`,
			`summary.json:1:25: trials[0]: key "readerſ" is not "readers"`},
		{"Kelvin sign (U+212A) for k", `{"version":3,"trials":[{"readers":[{"wa\u212aeup_log":["w.csv"]}]}]}`,
			"summary.json:1:37: trials[0].readers[0]: key \"wa\u212aeup_log\" is not \"wakeup_log\""},
		{"ASCII case", `{"version":3,"TRIALS":[` + empties(70000) + `]}`,
			`summary.json:1:14: summary: key "TRIALS" is not "trials"`},
		{"json v2's folding drops '-' and '_'", `{"version":3,"trials":[{"duration-ns":1}]}`,
			`summary.json:1:25: trials[0]: key "duration-ns" is not "duration_ns"`},
		{"a field's name with escapes is that field", `{"version":3,"\u0074rials":[{"readers":[{}]}]}`, ""},
		{"a key no field folds to is ignored", `{"version":3,"trials":[{"readerz":[` + empties(5000) + `]}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = store.DecodeSummary([]byte(tc.body), "summary.json") })
			if tc.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %s…", err, tc.want)
			}
			if alloc > 16<<20 {
				t.Errorf("refusing %d bytes allocated %d MiB", len(tc.body), alloc>>20)
			}
		})
	}
}

// TestWakeupLogListedTwice: a wakeup-log file listed twice in a summary,
// by one reader or by two, plain or as its .gz, is refused (issue 34: one
// 2.4 MB chunk listed 5 times by each of 2 readers was read as 32.8 M
// rows, within every limit).
func TestWakeupLogListedTwice(t *testing.T) {
	for _, tc := range []struct {
		name string
		logs [][]string // the wakeup logs of trial 0's reader and trial 1's
		want string
	}{
		{"one reader, twice", [][]string{{"w.0000.csv.gz", "w.0001.csv.gz", "w.0000.csv.gz"}, nil},
			`trial 0 reader 0: wakeup_log: "w.0000.csv.gz" is listed already (by trial 0 reader 0): refused`},
		{"two readers", [][]string{{"w.0000.csv.gz"}, {"w.0000.csv.gz"}},
			`trial 1 reader 0: wakeup_log: "w.0000.csv.gz" is listed already (by trial 0 reader 0): refused`},
		{"plain and gzipped", [][]string{{"w.0000.csv"}, {"w.0000.csv.gz"}},
			`trial 1 reader 0: wakeup_log: "w.0000.csv.gz" is listed already (by trial 0 reader 0)`},
		{"each once", [][]string{{"w.0000.csv.gz", "w.0001.csv"}, {"x.0000.csv.gz"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := testutil.SeedSummary()
			for i := range s.Trials {
				s.Trials[i].Readers[0].WakeupLog = nil
			}
			s.Trials[0].Readers[0].WakeupLog = tc.logs[0]
			s.Trials[1].Readers[0].WakeupLog = tc.logs[1]
			testutil.WriteSummary(t, dir, s)
			_, err := store.ReadSummary(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// TestHDRGeometry: an HdrHistogram encoding is refused from its header
// when its histogram would need more counts than rtload's own (issue 23:
// 495 KB of such encodings kept report on the CPU for 103 s).
func TestHDRGeometry(t *testing.T) {
	enc := func(lo, hi int64, sig int) string {
		h := hdrhistogram.New(lo, hi, sig)
		h.RecordValue(lo)
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wide := enc(1, 1<<62, 5)
	for _, tc := range []struct {
		name, enc, wantErr string
	}{
		{"rtload's own: 3 digits, the whole range", enc(1, 1<<62, 3), ""},
		{"1..2^62 at 5 digits", wide, "needs 6160384 counts, more than the limit of 65536"},
		{"4 digits, a wide range", enc(1, 1<<40, 4), "counts, more than the limit of 65536"},
		{"not base64", "HIST!!!!", "hdr encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := safeio.CheckHDR(tc.enc)
			if _, derr := results.DecodeHDR(tc.enc); (derr == nil) != (err == nil) {
				t.Errorf("DecodeHDR err %v, CheckHDR err %v", derr, err)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	// In a summary: refused when read, naming the field.
	s := testutil.SeedSummary()
	s.Trials[0].Readers[0].WakeupLatency.HDR = wide
	dir := t.TempDir()
	testutil.WriteSummary(t, dir, s)
	start := time.Now()
	if _, err := store.ReadSummary(dir); err == nil || !strings.Contains(err.Error(), "trial 0 reader 0: wakeup_latency: hdr histogram of values 1 to 4611686018427387904 at 5 significant digits needs 6160384 counts") {
		t.Errorf("err = %v", err)
	}
	t.Logf("refused in %v", time.Since(start))
}

// TestOutPathOwners: --out under a directory another user owns, or may
// write in without the sticky bit, is refused (issue 23: only the last
// component was checked), and so is a path through another user's link.
func TestOutPathOwners(t *testing.T) {
	testutil.Requires(t, testutil.Root) // to give directories and links to uid 65534
	top := t.TempDir()
	theirs := filepath.Join(top, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	open := filepath.Join(top, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	sticky := filepath.Join(top, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	link := filepath.Join(sticky, "link")
	os.Symlink(top, link)
	os.Lchown(link, 65534, 65534)
	ownLink := filepath.Join(top, "own")
	os.Symlink(sticky, ownLink)
	for _, tc := range []struct {
		name, path, wantErr string
	}{
		{"under another user's directory", filepath.Join(theirs, "run"), "component " + theirs + " is owned by uid 65534"},
		{"deeper under it", filepath.Join(theirs, "a", "b", "run"), "component " + theirs + " is owned by uid 65534"},
		{"under a world-writable directory", filepath.Join(open, "run"), "component " + open + " (mode 0777) is writable by others without the sticky bit"},
		{"through another user's symlink", filepath.Join(link, "run"), "component " + link + " is a symlink owned by uid 65534"},
		{"in a sticky directory of ours", filepath.Join(sticky, "run"), ""},
		{"through our own link", filepath.Join(ownLink, "run"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := store.CreateDir(tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				d.Close()
				return
			}
			if !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ErrUnsafeDir and %q", err, tc.wantErr)
			}
			if _, err := os.Lstat(tc.path); err == nil {
				t.Errorf("%s was created", tc.path)
			}
			if err := safeio.WriteOutputFile(tc.path+".png", []byte("x")); !errors.Is(err, safeio.ErrUnsafeDir) {
				t.Errorf("WriteOutputFile: err = %v", err)
			}
		})
	}
}

// TestWriteOutputFile: plot's image replaces a file of ours, and refuses
// a planted symlink (issue 23: os.Create followed it and overwrote a
// root-owned file), a FIFO and another user's file, leaving them as they
// were.
func TestWriteOutputFile(t *testing.T) {
	testutil.Requires(t, testutil.Root) // to plant links owned by uid 65534
	target, line := secret(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o777|os.ModeSticky)
	out := filepath.Join(dir, "cmp.png")
	if err := safeio.WriteOutputFile(out, []byte("png1")); err != nil {
		t.Fatal(err)
	}
	if err := safeio.WriteOutputFile(out, []byte("png2")); err != nil {
		t.Fatalf("replacing our own image: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "png2" {
		t.Errorf("image holds %q", b)
	}
	for _, tc := range []struct {
		name, wantErr string
		plant         func(p string)
	}{
		{"a planted symlink", "is a symlink owned by uid 65534", func(p string) { os.Symlink(target, p); os.Lchown(p, 65534, 65534) }},
		{"our own symlink", "is a symlink (to " + target + "): refused", func(p string) { os.Symlink(target, p) }},
		{"a FIFO", "is a named pipe (FIFO)", func(p string) { syscall.Mkfifo(p, 0o666) }},
		{"another user's file", "owned by uid 65534", func(p string) { os.WriteFile(p, []byte("theirs"), 0o644); os.Chown(p, 65534, 65534) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".png")
			tc.plant(p)
			err := within(t, 10*time.Second, func() error { return safeio.WriteOutputFile(p, []byte("PNG")) })
			if !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), line) {
				t.Fatalf("the link's target was written: %q", b)
			}
		})
	}
	if names := testutil.DirNames(t, dir); len(names) != 5 {
		t.Errorf("left in %s: %v", dir, names)
	}
}

// TestJSONLBounded: spikes.jsonl is read within the writer's cap (issue
// 34: the reader took any size, and 100 MB took explain to 3 GB): a file
// past SpikesLimit is refused before it is read, and a line whose noise
// list passes its limit before it is decoded, naming file:line:col.
func TestJSONLBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, results.SpikesFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"trial":0,"reader":"rt","tick":1}` + "\n")
	f.Truncate(results.SpikesLimit + 1)
	f.Close()
	recs, _, err := store.ReadJSONL[results.Spike](path)
	if want := path + ": 67108865 bytes, larger than the limit of 64 MiB for a JSONL file"; err == nil || !strings.HasPrefix(err.Error(), want) || len(recs) != 0 {
		t.Errorf("a spikes.jsonl of 64 MiB + 1: %d records, err %v, want %s", len(recs), err, want)
	}
	// Three lines of 1 MB of empty noise entries: 56 bytes each for 3.
	line := `{"trial":0,"reader":"rt","noise":[` + strings.Repeat("{},", (results.MaxJSONLLine-64)/3) + "{}]}\n"
	os.WriteFile(path, []byte(strings.Repeat(line, 3)), 0o644)
	alloc := allocated(func() { _, _, err = store.ReadJSONL[results.Spike](path) })
	// At the 4097th entry: column 35 + 3 × 4096.
	if want := path + ":1:12323: noise: more than 4096 entries, more than the limit of 4096: refused"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %s", err, want)
	}
	if alloc > 8<<20 {
		t.Errorf("refusing 3 MB of noise entries allocated %d MiB", alloc>>20)
	}
}
