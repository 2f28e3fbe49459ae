package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// run runs argv with a timeout (SIGTERM, then SIGKILL 10 s later) and
// returns stdout and the process state (for its rusage).
func run(timeout time.Duration, argv ...string) ([]byte, *os.ProcessState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.Bytes(), cmd.ProcessState, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, lastLine(errb.String()))
	}
	return out.Bytes(), cmd.ProcessState, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// shell prints argv as a command line, with rtload's --out directory as DIR.
func shell(argv []string) string {
	a := slices.Clone(argv)
	for i := 1; i < len(a); i++ {
		if a[i-1] == "--out" {
			a[i] = "DIR"
		}
	}
	return strings.Join(a, " ")
}

// noise is background load started before one side's run and stopped after
// it (the same for both sides of a pair).
type noise struct {
	argv []string
	cmd  *exec.Cmd
}

// start starts the noise and lets it settle for 300 ms.
func (n *noise) start() error {
	if n == nil {
		return nil
	}
	n.cmd = exec.Command(n.argv[0], n.argv[1:]...)
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("noise %s: %w", shell(n.argv), err)
	}
	time.Sleep(300 * time.Millisecond)
	return nil
}

// stop kills the noise process and reaps it.
func (n *noise) stop() {
	if n == nil || n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
	n.cmd = nil
}

// summary is the part of rtload's summary.json (results format version 1)
// that benchrun reads. It is declared here, field by field, so that the
// benchmark depends on the file format rather than on the Go package that
// writes it; check reports fields that came back empty.
type summary struct {
	Start  time.Time            `json:"start"`
	End    time.Time            `json:"end"`
	Clock  struct{ Hz float64 } `json:"clock"`
	Trials []struct {
		Variant    string `json:"variant"`
		DurationNs int64  `json:"duration_ns"`
		Readers    []struct {
			Method   string `json:"method"`
			Calls    uint64 `json:"calls"`
			Wakeups  uint64 `json:"wakeups"`
			Overruns uint64 `json:"overruns"`
			Lost     uint64 `json:"lost"`
			Drops    uint64 `json:"drops"`
			PerCall  struct {
				All struct {
					Sum uint64 `json:"sum"`
				} `json:"all"`
			} `json:"per_call"`
			PerCallTicks  ticks   `json:"per_call_ticks"`
			WakeupLatency latency `json:"wakeup_latency"`
			Drain         latency `json:"drain"`
		} `json:"readers"`
		Traffic []struct {
			TargetRate   float64 `json:"target_rate"`
			AchievedRate float64 `json:"achieved_rate"`
			SendLag      latency `json:"send_lag"`
		} `json:"traffic"`
	} `json:"trials"`
}

// latency is results' latency summary (ns, or ticks for per_call_ticks,
// despite the field names) with its HdrHistogram (V2 compressed, base64).
// ticks is summary.json's per-call summary (v2: in clock ticks).
type ticks struct {
	Count     uint64  `json:"count"`
	MeanTicks float64 `json:"mean_ticks"`
	P50Ticks  uint64  `json:"p50_ticks"`
	P99Ticks  uint64  `json:"p99_ticks"`
	MaxTicks  uint64  `json:"max_ticks"`
	HDR       string  `json:"hdr"`
}

type latency struct {
	Count  uint64  `json:"count"`
	MeanNs float64 `json:"mean_ns"`
	P50Ns  int64   `json:"p50_ns"`
	P99Ns  int64   `json:"p99_ns"`
	MaxNs  int64   `json:"max_ns"`
	HDR    string  `json:"hdr"`
}

// check reports a summary that lacks what every benchmark reads.
func (s *summary) check(dir string) error {
	if len(s.Trials) == 0 {
		return fmt.Errorf("%s/summary.json: no trials (results format changed?)", dir)
	}
	for i, t := range s.Trials {
		if len(t.Readers) == 0 {
			return fmt.Errorf("%s/summary.json: trial %d has no readers", dir, i)
		}
	}
	return nil
}

// rtloadRun runs an rtload scenario into dir and returns its summary and argv.
func rtloadRun(c config, timeout time.Duration, dir string, args ...string) (*summary, []string, *os.ProcessState, error) {
	argv := append([]string{c.rtload, "run"}, args...)
	argv = append(argv, "--out", dir, "-q", "--no-wakeup-log")
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	_, st, err := run(timeout, argv...)
	if err != nil {
		return nil, argv, st, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, argv, st, err
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, argv, st, fmt.Errorf("%s: %w", dir, err)
	}
	if err := s.check(dir); err != nil {
		return nil, argv, st, err
	}
	return &s, argv, st, nil
}
