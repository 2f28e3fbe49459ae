package load

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// readForeign reads a histogram file written by another tool (or by
// rtload's interop writers) as a run: cyclictest's -h text layout (real
// cyclictest output included; one reader per thread column) or an
// HdrHistogram interval log of wakeup latency in ns (one trial per
// interval, tags "<variant>/r<round>/<reader>" as rtload writes them). Only
// wakeup latency is known, so only its tables and metrics have values.
// ok is false when path is a directory or summary.json.
func readForeign(path string) (s *results.Summary, ok bool, err error) {
	if _, err := os.Lstat(path); err != nil || safeio.IsDir(path) || filepath.Base(path) == results.SummaryFile {
		return nil, false, nil
	}
	name := filepath.Base(path)
	s = &results.Summary{Version: results.SummaryVersion, Scenario: name, File: path,
		Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9, Note: "wakeup latency read from " + name}}
	if strings.HasSuffix(name, ".hlog") {
		ivs, err := interop.ReadHlog(path)
		if err != nil {
			return nil, true, err
		}
		for i, iv := range ivs {
			variant, round, reader := parseTag(iv.Tag, i)
			lat := results.LatencyFromHistogram(iv.Hist, iv.Max)
			s.Trials = append(s.Trials, results.Trial{Index: i, Round: round, Variant: variant,
				Readers: []results.Reader{{Name: reader, Wakeups: lat.Count, WakeupLatency: lat}}})
		}
		return s, true, nil
	}
	src, f, _, err := safeio.OpenInput(path)
	if err != nil {
		return nil, true, err
	}
	defer src.Close()
	defer f.Close()
	cols, _, err := interop.ReadCyclictestHist(f)
	if err != nil {
		return nil, true, fmt.Errorf("%s: not a results directory, an .hlog or a cyclictest -h histogram: %w", path, err)
	}
	t := results.Trial{Variant: "base"}
	for i, c := range cols {
		name := c.Name
		if name == "" {
			name = fmt.Sprintf("T%d", i)
		}
		lat := results.LatencyFromHistogram(c.Hist, c.MaxNs)
		t.Readers = append(t.Readers, results.Reader{Name: name, Wakeups: lat.Count, WakeupLatency: lat})
	}
	s.Trials = []results.Trial{t}
	return s, true, nil
}

// parseTag splits rtload's hlog tag "<variant>/r<round>/<reader>".
func parseTag(tag string, i int) (variant string, round int, reader string) {
	parts := strings.Split(tag, "/")
	if len(parts) == 3 && strings.HasPrefix(parts[1], "r") {
		fmt.Sscanf(parts[1], "r%d", &round)
		return parts[0], round, parts[2]
	}
	if tag == "" {
		tag = fmt.Sprintf("interval%d", i)
	}
	return "base", 0, tag
}
