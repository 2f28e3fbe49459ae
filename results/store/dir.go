package store

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/rtload/rtload/results/safeio"
)

// Dir is a results directory open for writing: safeio's Dir (every file
// created through the directory's descriptor, never following a planted
// link; whole files replaced by renaming; JSONL records written whole;
// the run's claim), with the summary's writer (WriteSummary).
type Dir struct {
	*safeio.Dir

	// sumMu serialises WriteSummary, which encodes into sumBuf.
	sumMu  sync.Mutex
	sumBuf bytes.Buffer
	sumEnc *json.Encoder
}

// CreateDir returns path as a results directory for a new run
// (safeio.CreateDir: created when missing, else an empty directory of the
// effective user's, never a link; claimed until Close).
func CreateDir(path string) (d *Dir, created bool, err error) {
	return wrap(safeio.CreateDir(path))
}

// CreateNewDir is CreateDir for a path that must not exist yet
// (safeio.CreateNewDir: anything at path is an error matching
// fs.ErrExist).
func CreateNewDir(path string) (*Dir, error) {
	d, err := safeio.CreateNewDir(path)
	if err != nil {
		return nil, err
	}
	return &Dir{Dir: d}, nil
}

// OpenDir opens an existing results directory for writing (safeio.OpenDir).
func OpenDir(path string) (*Dir, error) {
	d, err := safeio.OpenDir(path)
	if err != nil {
		return nil, err
	}
	return &Dir{Dir: d}, nil
}

func wrap(d *safeio.Dir, created bool, err error) (*Dir, bool, error) {
	if err != nil {
		return nil, false, err
	}
	return &Dir{Dir: d}, created, nil
}

// Close releases the claim and closes the directory; it is idempotent,
// and a nil Dir is closed.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	return d.Dir.Close()
}
