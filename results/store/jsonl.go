package store

import (
	"path/filepath"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// ReadJSONL decodes every line of path into a T. A torn last line (a
// writer killed mid-write) is skipped and reported in torn; a bad line
// anywhere else, one longer than results.MaxJSONLLine, more than
// results.MaxJSONLRecords lines, or a line past results.MaxJSONLMemory of
// records decoded, is an error naming its line (and column); a file larger
// than results.MaxJSONLBytes is refused before it is read. path's last
// component is opened as Source.Open opens every results file: a link, a
// FIFO or a device is refused (ErrRefusedFile) before anything is read. On
// an error, out holds the records before it.
func ReadJSONL[T any](path string) (out []T, torn int, err error) {
	budget := &safeio.Bounds{Lists: listLimits, Limit: results.MaxJSONLMemory, What: "any " + termsafe.Escape(filepath.Base(path)) + " rtload writes"}
	torn, err = safeio.EachJSONL(path, &jsonlLimits, budget, func(v T) { out = append(out, v) })
	return out, torn, err
}

// EachJSONL is ReadJSONL calling f with each record, in order, holding
// none (results.MaxJSONLMemory bounds one line's): its memory does not
// grow with the file. On an error, f has seen the records before it.
func EachJSONL[T any](path string, f func(T)) (torn int, err error) {
	return safeio.EachJSONL(path, &jsonlLimits, nil, f)
}

// jsonlLimits are the bounds of every JSONL file read (safeio.EachJSONL).
var jsonlLimits = safeio.JSONLLimits{Bytes: results.MaxJSONLBytes, Cap: "spikes.jsonl is capped at " + safeio.SizeName(results.SpikesLimit),
	Line: results.MaxJSONLLine, Records: results.MaxJSONLRecords, Lists: listLimits, Memory: results.MaxJSONLMemory}
