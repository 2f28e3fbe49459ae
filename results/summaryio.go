package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SummaryFile is the name of the summary inside a results directory.
const SummaryFile = "summary.json"

// SummaryVersion is the Summary format version this package writes and
// reads.
const SummaryVersion = 1

// WriteSummary writes s as indented JSON to dir/summary.json atomically: it
// writes a temporary file in dir, fsyncs it, renames it over summary.json
// and fsyncs dir, so a crash leaves either the old file or the new one,
// never a torn one. A zero s.Version is written as SummaryVersion (s itself
// is not modified). dir must exist.
func WriteSummary(dir string, s *Summary) error {
	if s == nil {
		return errors.New("write summary: nil Summary")
	}
	out := *s
	if out.Version == 0 {
		out.Version = SummaryVersion
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("write summary %s: %w", filepath.Join(dir, SummaryFile), err)
	}
	data = append(data, '\n')
	if err := WriteFileAtomic(dir, SummaryFile, data); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// WriteFileAtomic writes data to dir/name through a synced temporary file
// and a rename, then syncs dir.
func WriteFileAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	final := filepath.Join(dir, name)
	if err = os.Rename(tmp, final); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// ReadSummary reads a Summary from path: a results directory (its
// summary.json is read) or the file itself. Bad JSON gives an error naming
// the file with line and column ("dir/summary.json:3:14: …"); a version
// other than SummaryVersion is an error.
func ReadSummary(path string) (*Summary, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, SummaryFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		var off int64 = -1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		if off >= 0 {
			line, col := position(data, off)
			return nil, fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Version != SummaryVersion {
		return nil, fmt.Errorf("%s: summary version %d not supported (this rtload reads version %d)", path, s.Version, SummaryVersion)
	}
	return &s, nil
}

// position turns encoding/json's error offset (bytes read up to and
// including the offending one) into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if len(data) == 0 {
		return 1, 1
	}
	off = min(max(off, 1), int64(len(data)))
	before := data[:off-1]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
