package store_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
)

// plantVictim makes a root-only file whose content a run must never touch.
func plantVictim(t *testing.T) (path string, content []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "victim")
	content = []byte("root's own data\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, content
}

func checkVictim(t *testing.T, path string, content []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("victim %s changed: %q, %v", path, got, err)
	}
}

// TestPlantedSymlinks: a link named like every file a run writes, pointing
// at another file, is never followed: creating the file fails (EEXIST) and
// summary.json's atomic replace swaps the link itself out.
func TestPlantedSymlinks(t *testing.T) {
	victim, content := plantVictim(t)
	dir := t.TempDir()
	names := []string{results.SummaryFile, results.IntervalsFile, results.SpikesFile, "wakeups-00-a-r0-rt.csv", "wakeups-00-a-r0-rt.0000.csv"}
	for _, n := range names {
		if err := os.Symlink(victim, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	d := testutil.ResultsDir(t, dir)
	for _, n := range []string{results.IntervalsFile, results.SpikesFile} {
		if _, err := d.CreateJSONL(n, 0); !errors.Is(err, fs.ErrExist) {
			t.Errorf("CreateJSONL over a planted %s: %v, want EEXIST", n, err)
		}
	}
	if _, err := d.Create("wakeups-00-a-r0-rt.csv"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a planted log: %v", err)
	}
	// A wakeup log removes what sits under its names first (a link itself,
	// never its target), then creates its files with O_EXCL.
	l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: "wakeups-00-a-r0-rt", ChunkBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		l.Write(&record.Wakeup{Tick: uint64(i)})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteSummary(testutil.SeedSummary()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, results.SummaryFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("summary.json is not a regular file: %v %v", fi.Mode(), err)
	}
	checkVictim(t, victim, content)
}

// TestCreateDirRefusals: an --out owned by someone else, writable by
// others without the sticky bit, behind another user's link, or holding an
// earlier run's files is refused with a reason; a directory CreateDir made
// itself and then refused is removed.
// TestUmask: files are 0666 less the umask; a directory rtload creates is
// 0777 less the umask and never writable by group or others.
func TestUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o002, 0o077, 0} {
		// The parent is made before the umask changes: under umask 0 it
		// would be world-writable, which CreateDir refuses.
		dir := filepath.Join(t.TempDir(), "out")
		old := syscall.Umask(mask)
		d, _, err := store.CreateDir(dir)
		if err != nil {
			syscall.Umask(old)
			t.Fatalf("umask %03o: %v", mask, err)
		}
		d.WriteSummary(testutil.SeedSummary())
		j, _ := d.CreateJSONL(results.IntervalsFile, 0)
		j.Close()
		d.Close()
		syscall.Umask(old)
		for _, n := range []string{results.SummaryFile, results.IntervalsFile} {
			fi, err := os.Stat(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			if want := os.FileMode(0o666 &^ mask); fi.Mode().Perm() != want {
				t.Errorf("umask %03o: %s mode %04o, want %04o", mask, n, fi.Mode().Perm(), want)
			}
		}
		fi, _ := os.Stat(dir)
		if want := os.FileMode(0o777 &^ mask &^ 0o022); fi.Mode().Perm() != want {
			t.Errorf("umask %03o: dir mode %04o, want %04o", mask, fi.Mode().Perm(), want)
		}
	}
}

// TestFullDisk: on a full filesystem, summary.json keeps its last good
// content and no temporary file is left; JSONL and wakeup logs end in
// whole records and report the error from then on.
func TestFullDisk(t *testing.T) {
	disk := testutil.Tmpfs(t, 256<<10)
	d := testutil.ResultsDir(t, disk)
	first := testutil.SeedSummary()
	first.Trials = first.Trials[:1]
	if err := d.WriteSummary(first); err != nil {
		t.Fatal(err)
	}
	j, err := d.CreateJSONL(results.IntervalsFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: "w"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.FillDisk(t, disk)
	if err := d.WriteSummary(testutil.SeedSummary()); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("summary on a full disk: %v", err)
	}
	got, err := store.ReadSummary(disk)
	if err != nil || len(got.Trials) != 1 {
		t.Errorf("summary after the failed write: %v, %d trials (want the first write's 1)", err, len(got.Trials))
	}
	// Free a little at a time so that writes go part-way, then fail.
	filler := filepath.Join(disk, "filler")
	free := func(n int64) { os.Truncate(filler, max(0, sizeOf(t, filler)-n)) }
	var jerr, lerr error
	free(50 << 10)
	rec := map[string]string{"pad": strings.Repeat("x", 900)}
	for i := 0; i < 1000 && jerr == nil; i++ {
		jerr = j.Write(rec)
	}
	free(100 << 10)
	w := record.Wakeup{Tick: 1, DeadlineNs: 1 << 40, LatencyNs: 12345, DrainNs: 777, Messages: 9, Calls: 9}
	for i := 0; i < 1<<20 && lerr == nil; i++ {
		lerr = l.Write(&w)
	}
	if jerr == nil || lerr == nil {
		t.Fatalf("writes never failed: jsonl %v, log %v", jerr, lerr)
	}
	if err := j.Write(rec); err == nil {
		t.Error("JSONL Write after a failure succeeded")
	}
	j.Close()
	l.Close()
	recs, torn, err := store.ReadJSONL[map[string]string](filepath.Join(disk, results.IntervalsFile))
	if err != nil || torn != 0 {
		t.Errorf("intervals after ENOSPC: %d records, torn %d, %v", len(recs), torn, err)
	}
	rows, st, err := wakelog.ReadFiles(disk, []string{"w.csv"})
	if err != nil || st.TornRows != 0 {
		t.Errorf("wakeup log after ENOSPC: %d rows, %+v, %v", len(rows), st, err)
	}
	for _, name := range testutil.DirNames(t, disk) {
		if strings.HasSuffix(name, ".tmp") {
			t.Errorf("temporary file left: %s", name)
		}
	}
}

func sizeOf(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestJSONLLimit(t *testing.T) {
	d := testutil.ResultsDir(t, t.TempDir())
	j, err := d.CreateJSONL(results.SpikesFile, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := j.Write(map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	recs, _, err := store.ReadJSONL[map[string]int](filepath.Join(d.Path(), results.SpikesFile))
	if err != nil || len(recs)+int(j.Dropped()) != 200 || j.Dropped() == 0 || sizeOf(t, filepath.Join(d.Path(), results.SpikesFile)) > 1000 {
		t.Errorf("%d written + %d dropped, %v", len(recs), j.Dropped(), err)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	// A compression in flight leaves its temporary .gz; RemoveTemps
	// deletes exactly what this Dir created.
	os.WriteFile(filepath.Join(dir, ".foreign.tmp"), nil, 0o644)
	l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: "w", ChunkBytes: 4096, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		l.Write(&record.Wakeup{Tick: uint64(i)})
	}
	l.Close()
	if got := d.RemoveTemps(); len(got) != 0 {
		t.Errorf("after a clean close: %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".foreign.tmp")); err != nil {
		t.Errorf("a file RemoveTemps did not create was removed: %v", err)
	}
}

// TestCreateDirNotADirectory: a path that is not a directory, a symlink
// to anything (a file, an empty directory, nowhere), or under a file or a
// dangling link is refused as ErrUnsafeDir, naming the path and what is
// wrong, and nothing is created or followed.
// TestCreateNewDir: CreateNewDir makes a new directory and refuses any
// existing path, an empty directory of ours included, with fs.ErrExist.
// TestChown: a run's directory handed to another user is theirs, every
// entry and subdirectory, links themselves included; what a planted link
// points at keeps its owner.
func TestChown(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	victim, content := plantVictim(t)
	path := filepath.Join(t.TempDir(), "run")
	d, _, err := store.CreateDir(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteFile("summary.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(path, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "sub", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(path, "link")); err != nil {
		t.Fatal(err)
	}
	const uid, gid = 4242, 4243
	if err := d.Chown(uid, gid); err != nil {
		t.Fatalf("Chown: %v", err)
	}
	for _, name := range []string{".", "summary.json", "sub", "sub/f", "link"} {
		fi, err := os.Lstat(filepath.Join(path, name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid || st.Gid != gid {
			t.Errorf("%s owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, uid, gid)
		}
	}
	fi, _ := os.Stat(victim)
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 {
		t.Errorf("the link's target was given to uid %d", st.Uid)
	}
	checkVictim(t, victim, content)
}
