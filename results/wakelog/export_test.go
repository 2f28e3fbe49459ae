package wakelog

import (
	"io"

	"github.com/rtload/rtload/record"
)

// Readers of wakeup logs that only the tests use: the product reads a
// reader's log through the files its summary lists (ReaderWakeups,
// EachReaderWakeup).

// LogFiles lists the files of log base in dir, in order, relative to
// dir: the chunks <base>.<n>.csv[.gz] by n, or the single file <base>.csv.
// Where a crash left chunk n both plain and compressed it lists the .gz,
// which is complete by construction. base may also name one file (ending
// in .csv or .csv.gz, possibly with a directory), which is listed alone.
// Errors: no file of base (wrapping fs.ErrNotExist), or both <base>.csv
// and chunks.
func LogFiles(dir, base string) ([]string, error) {
	files, err := listWakeupLog(dir, base)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return names, nil
}

// ParseLog appends the rows of one wakeup log file read from r
// (gzip-compressed when gz) to out; name prefixes errors. last allows a
// torn tail (see ReadFiles), returned as torn rows. Lines are at most 64
// KiB; anything else malformed is an error naming the line.
//
// A .gz inflates to at most MaxChunkBytes and MaxInflateRatio times
// its size (ErrInflateLimit); out holds at most MaxRows rows.
func ParseLog(r io.Reader, name string, gz, last bool, out *[]record.Wakeup) (torn int, err error) {
	tt, err := parseWakeupLog(r, name, gz, last, &rowSink{n: len(*out), max: MaxRows, f: func(w record.Wakeup) { *out = append(*out, w) }})
	return tt.rows, err
}
