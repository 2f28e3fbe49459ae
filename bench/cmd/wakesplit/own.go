package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/bench/wakesplit"
	"github.com/rtload/rtload/results/safeio"
)

// The program's own latencies of a traced run are kept beside its trace
// in <trace>.own: one "deadline_ns latency_ns" line per wakeup (deadline 0
// when the program does not report it; such files match in order).

// cyclictestOwn reads `cyclictest -N -v` output ("thread: cycle: ns" lines).
func cyclictestOwn(out []byte) []wakesplit.Own {
	var own []wakesplit.Own
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "0:" || !strings.HasSuffix(f[1], ":") {
			continue
		}
		if v, err := strconv.ParseFloat(f[2], 64); err == nil {
			own = append(own, wakesplit.Own{LatencyNs: v})
		}
	}
	return own
}

// rtloadOwn reads the deadline_ns and latency_ns columns of every wakeup
// CSV log in an rtload results directory.
func rtloadOwn(dir string) ([]wakesplit.Own, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "wakeups*.csv"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("%s: no wakeups*.csv (run rtload without --no-wakeup-log)", dir)
	}
	var own []wakesplit.Own
	for _, p := range paths {
		src, f, _, err := safeio.OpenInput(p) // a results file: no link, FIFO or device
		if err != nil {
			return nil, err
		}
		src.Close()
		r := csv.NewReader(bufio.NewReader(f))
		head, err := r.Read()
		dl, lat := slices.Index(head, "deadline_ns"), slices.Index(head, "latency_ns")
		if err != nil || dl < 0 || lat < 0 {
			f.Close()
			return nil, fmt.Errorf("%s: no deadline_ns and latency_ns columns", p)
		}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			d, e1 := strconv.ParseInt(rec[dl], 10, 64)
			l, e2 := strconv.ParseFloat(rec[lat], 64)
			if e1 == nil && e2 == nil {
				own = append(own, wakesplit.Own{DeadlineNs: d, LatencyNs: l})
			}
		}
		f.Close()
	}
	return own, nil
}

func writeOwn(path string, own []wakesplit.Own) error {
	var b bytes.Buffer
	for _, o := range own {
		fmt.Fprintf(&b, "%d %.0f\n", o.DeadlineNs, o.LatencyNs)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readOwn reads <trace>.own; a missing file is no latencies and no error.
func readOwn(path string) ([]wakesplit.Own, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var own []wakesplit.Own
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var o wakesplit.Own
		if _, err := fmt.Sscan(line, &o.DeadlineNs, &o.LatencyNs); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		own = append(own, o)
	}
	return own, nil
}
