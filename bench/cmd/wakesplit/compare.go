package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/rtload/rtload/bench/wakesplit"
)

// cmdCompare traces cyclictest and rtload timer-only alternately (A B, B
// A, …), -pairs runs each, optionally with spin noise around each run,
// and prints both splits. Each program's own latencies go beside its
// trace (cyclictest -N -v; rtload's per-wakeup log, so rtload runs with
// its writer on, as by default).
func cmdCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	cpu := fs.Int("cpu", 1, "CPU of both measured threads")
	pairs := fs.Int("pairs", 2, "runs of each program")
	secs := fs.Int("seconds", 10, "seconds per run (100 wakeups per second)")
	spin := fs.Bool("spin", false, "run drain450 -S -N 5 (5 busy SCHED_OTHER threads) around each run")
	dir := fs.String("dir", "", "directory for the traces (default: a new temp dir, kept)")
	rtload := fs.String("rtload", "bin/rtload", "rtload binary")
	drain := fs.String("drain", "bin/drain450", "drain450 binary (spin noise)")
	buf := fs.Int("buffer-kb", 32768, "ring buffer per CPU, KiB")
	_ = fs.Parse(args)
	if *dir == "" {
		d, err := os.MkdirTemp("", "wakesplit-")
		if err != nil {
			return err
		}
		*dir = d
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	loops := strconv.Itoa(*secs * 100)
	sides := []struct {
		name string
		argv []string
	}{
		{"cyclictest", []string{"cyclictest", "-m", "-p", "80", "--policy=fifo", "-i", "10000", "-a", "1", "-t", "1", "-l", loops, "-q", "-N", "-v"}},
		{"rtload", []string{*rtload, "run", "configs/timer-only.yaml", "--duration", fmt.Sprintf("%ds", *secs), "-q"}},
	}
	gs := []group{{name: sides[0].name}, {name: sides[1].name}}
	for i := range *pairs {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, s := range order {
			path := filepath.Join(*dir, fmt.Sprintf("%s-%d.trace", sides[s].name, i))
			argv := sides[s].argv
			results := filepath.Join(*dir, fmt.Sprintf("rtload-results-%d", i))
			if s == 1 {
				argv = append(slices.Clone(argv), "--out", results)
			}
			var out bytes.Buffer
			if err := traceWithNoise(*cpu, *buf, path, argv, &out, *spin, *drain, *secs); err != nil {
				return err
			}
			own := cyclictestOwn(out.Bytes())
			if s == 1 {
				var err error
				if own, err = rtloadOwn(results); err != nil {
					return err
				}
			}
			if err := writeOwn(path+".own", own); err != nil {
				return err
			}
			gs[s].files = append(gs[s].files, path)
			fmt.Fprintf(os.Stderr, "wakesplit: traced %s\n", path)
		}
	}
	fmt.Printf("traces in %s\n", *dir)
	return printSplit(gs, wakesplit.Options{CPU: *cpu})
}

// traceWithNoise traces argv into path, with drain450's spin threads
// running around it when spin is set.
func traceWithNoise(cpu, bufKB int, path string, argv []string, stdout io.Writer, spin bool, drain string, secs int) error {
	if spin {
		n := exec.Command(drain, "-S", fmt.Sprint(secs+30), "-N", "5")
		if err := n.Start(); err != nil {
			return fmt.Errorf("spin noise: %w", err)
		}
		defer func() { _ = n.Process.Kill(); _ = n.Wait() }()
		time.Sleep(300 * time.Millisecond)
	}
	return traceCommand(cpu, bufKB, path, argv, "", stdout)
}
