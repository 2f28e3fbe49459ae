package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// ReadProfileFile reads the profile file name (a VariantProfile's Pprof
// or Folded) of the results directory dir (or of the directory of the
// summary.json dir names), at most results.MaxProfileBytes, as Source.Open opens
// every results file (a link, a FIFO or a device is refused). A
// gzip-compressed file (a .pb.gz) is returned inflated, at most
// results.MaxProfileInflatedBytes and MaxInflateRatio times its size
// (ErrInflateLimit): parse it with pprof's ParseUncompressed, never with a
// parser that inflates again. Errors: a name that is not a file name in
// dir, a refused file, a file larger than the limits, and the read's own.
func ReadProfileFile(dir, name string) ([]byte, error) {
	if err := safeio.CheckName(name); err != nil || strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("profile %q is not a file name in the results directory", name)
	}
	if !safeio.IsDir(dir) {
		dir = filepath.Dir(dir) // summary.json given
	}
	src, err := safeio.OpenSource(dir)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	defer src.Close()
	data, err := src.ReadFile(name, results.MaxProfileBytes, "a profile")
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		if data, err = safeio.InflateAll(bytes.NewReader(data), termsafe.Escape(src.Join(name)), results.MaxProfileInflatedBytes); err != nil {
			return nil, fmt.Errorf("read profile: %w", err)
		}
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return nil, fmt.Errorf("read profile %s: compressed twice: refused (rtload compresses once)", termsafe.Escape(src.Join(name)))
		}
	}
	return data, nil
}
