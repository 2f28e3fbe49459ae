package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/wakelog"
)

// The file layer under fuzzing (issue 23): what sits at a name a reader
// opens, and what a gzip stream holds.

// FuzzResultsFile puts at one of the names a reader opens (summary.json, a
// wakeup log, a profile, spikes.jsonl) a regular file of arbitrary content,
// a symlink to one, a FIFO, a directory or nothing, and runs every reader
// of that name. None may panic or block; anything but a regular file is
// refused with ErrRefusedFile (a missing one with fs.ErrNotExist).
func FuzzResultsFile(f *testing.F) {
	f.Add(uint8(0), uint8(0), []byte(`{"version":2}`))
	f.Add(uint8(1), uint8(1), []byte(wakelog.Header+"\n1,2,3,4,5,6,7,8,9,10\n"))
	f.Add(uint8(2), uint8(2), []byte{0x1f, 0x8b, 8, 0})
	f.Add(uint8(3), uint8(3), []byte(`{"reader":"rt"}`+"\n"))
	f.Add(uint8(4), uint8(0), []byte(nil))
	f.Fuzz(func(t *testing.T, which, kind uint8, content []byte) {
		r := readers[int(which)%len(readers)]
		dir := t.TempDir()
		small := `{"version":2,"trials":[{"readers":[{"wakeup_log":["w.csv"]}]}],"profiles":[{"variant":"x","pprof":"p.pb.gz"}]}`
		if err := os.WriteFile(filepath.Join(dir, results.SummaryFile), []byte(small), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, r.file)
		os.Remove(p)
		regular := false
		switch kind % 5 {
		case 0:
			regular = true
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
		case 1:
			target := filepath.Join(t.TempDir(), "target")
			os.WriteFile(target, content, 0o600)
			os.Symlink(target, p)
		case 2:
			syscall.Mkfifo(p, 0o644)
		case 3:
			os.Mkdir(p, 0o755)
		case 4: // nothing there
		}
		done := make(chan error, 1)
		go func() { done <- r.read(dir) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s as kind %d: blocked", r.file, kind%5)
		}
		if !regular && kind%5 != 4 && !errors.Is(err, safeio.ErrRefusedFile) {
			t.Fatalf("%s as kind %d: err = %v, want ErrRefusedFile", r.file, kind%5, err)
		}
	})
}
