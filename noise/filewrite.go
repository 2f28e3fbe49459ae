package noise

import (
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/workload"
)

// fileWriteWorker is the file_write kind: unixbench fstime's write loop
// (workload.FileWrite: Blocks write(2) calls of Size bytes, then lseek to 0)
// as load, one file per thread, counted in bytes written. A pass (2000 ×
// 256 B by default, a few ms) is the slice between stop checks. The file
// (and its temporary directory when Dir is "") is removed at Stop.
type fileWriteWorker struct {
	fw   *workload.FileWrite
	last uint64 // bytes already added to the slot
}

func newFileWriteWorker(cfg Config) (*fileWriteWorker, error) {
	fw, err := workload.NewFileWrite(workload.FileWriteConfig{Dir: cfg.Dir, Block: cfg.Size, Blocks: cfg.Blocks})
	if err != nil {
		return nil, err
	}
	return &fileWriteWorker{fw: fw}, nil
}

func (*fileWriteWorker) phase(int64) {}

func (w *fileWriteWorker) step(s *slot, _ int64) unix.Errno {
	errno := w.fw.Pass()
	w.account(s)
	return errno
}

// account adds the bytes written since the last call to s.
func (w *fileWriteWorker) account(s *slot) {
	b := w.fw.Result().Bytes
	s.units.Add(b - w.last)
	s.bytes.Add(b - w.last)
	w.last = b
}

// finish closes the file and removes it (and its temporary directory).
func (w *fileWriteWorker) finish(*slot) error { return w.fw.Close() }
