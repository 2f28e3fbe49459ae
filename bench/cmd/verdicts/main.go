// Command verdicts measures rtload's verdicts on this machine (issue 24).
//
//	verdicts bench [flags]                  make bench-verdicts: everything below, into one directory
//	verdicts bench -from DIR [-md FILE]     render the Markdown again from DIR, running nothing
//	verdicts pilot DIR...                   variance components of runs' headline metrics
//	verdicts tally CHECK.json...            A/A or power counts of rtload check --format json outputs
//	verdicts pool DIR... -- DIR...          a change's size, every directory's processes pooled
//
// bench measures, with the defaults of rtload run and rtload check:
//
//   - true sizes: the power changes (another receive method in the
//     default scenario's recvfrom variant) interleaved with recvfrom in
//     ABBA blocks in one run of several processes, so each change's size
//     is known to within about ±1% before any check looks for it; the
//     +8–15% and the +25% changes are picked from them;
//   - interleaved: bench/cmd/interleave -only seed,aa (seed 000's
//     recvmsg/recvfrom ratio in 2 minutes; 20 interleaved A/A runs);
//   - baselines: rtload run as make run runs it (one process), and
//     rtload run --processes N with N as that run's sizing line
//     recommends;
//   - checks: A/A against each baseline, and each power change against
//     the recommended one, in rounds that take one check of every series
//     (order reversed every other round), so that the machine's drift
//     over hours weighs on every series alike.
//
// Every command runs in a process group of its own under a timeout
// (SIGTERM, SIGKILL 30 s later, then rtload cleanup), with TMPDIR inside
// the bench directory; its stdout, stderr, exit code, times and the load
// average around it go to DIR/steps.jsonl, its results under DIR. A rerun
// of the same command resumes; -from DIR renders without running; -quick
// exercises every step in about 3 minutes with tiny counts (not a
// measurement, and labelled so). Needs root.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "bench" {
		if err := benchMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "verdicts:", err)
			var xe exitError
			if errors.As(err, &xe) {
				os.Exit(xe.code)
			}
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: verdicts bench [flags] | pilot DIR... | tally CHECK.json... | pool DIR... -- DIR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pilot":
		err = pilot(os.Stdout, os.Args[2:])
	case "tally":
		err = tally(os.Stdout, os.Args[2:])
	case "pool":
		err = pool(os.Stdout, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}
