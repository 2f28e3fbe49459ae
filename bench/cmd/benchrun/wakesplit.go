package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// wakeSplit runs `wakesplit compare` (bench/cmd/wakesplit) quiet and with
// spin noise and puts its segment tables in the document: where each
// wakeup's time goes, by the kernel's tracepoints, for cyclictest and
// rtload timer-only side by side.
func wakeSplit(c config, d *doc) error {
	modes := []bool{false, true}
	if c.quick {
		modes = modes[:1]
	}
	d.h2("2b. Where the wakeup time goes: kernel tracepoints (wakesplit)")
	d.p("`wakesplit compare` traces CPU 1 through its own tracefs instance (x86-tsc clock; timer:hrtimer_start, timer:hrtimer_expire_entry, sched:sched_waking, sched:sched_switch, raw_syscalls:sys_enter/sys_exit, exceptions:page_fault_*, irq_vectors:local_timer_*) around cyclictest and `rtload run configs/timer-only.yaml` (with its wakeup log, as by default), alternating, %d run(s) of %d s each per program, and splits every wakeup of the measured thread: deadline → timer fire (the expire event's `now` − the timer's softexpires) → sched_waking → switched in → sys_exit of clock_nanosleep → the program's own clock read (its own latency − the traced total). ", c.splitPairs, c.splitSecs)
	d.p("This kernel traces no sched_switch out of the idle task, so after a wakeup from idle \"on CPU\" is the end of the timer interrupt. Values in µs; B − A is rtload − cyclictest. Source: `bench/wakesplit`; run it alone with `make bench-wakesplit`.\n")
	for _, spin := range modes {
		label, args := "quiet", []string{}
		if spin {
			label, args = "spin (5 busy SCHED_OTHER threads)", []string{"-spin"}
		}
		argv := append([]string{c.wakesplit, "compare", "-rtload", c.rtload, "-drain", c.drain,
			"-pairs", fmt.Sprint(c.splitPairs), "-seconds", fmt.Sprint(c.splitSecs),
			"-dir", filepath.Join(c.work, "wakesplit-"+strings.Fields(label)[0])}, args...)
		out, _, err := run(time.Duration(c.splitPairs*2*(c.splitSecs+30))*time.Second, argv...)
		if err != nil {
			return err
		}
		_, tables, ok := strings.Cut(string(out), "\n")
		if !ok || !strings.HasPrefix(string(out), "traces in ") {
			return fmt.Errorf("wakesplit compare: unexpected output %q", lastLine(string(out)))
		}
		d.p("\n**%s** (`%s`):\n\n", label, shell(argv[:len(argv)-len(args)-2]))
		for _, l := range strings.Split(strings.TrimSpace(tables), "\n") {
			if strings.HasPrefix(l, "cyclictest: ") || strings.HasPrefix(l, "rtload: ") {
				d.p("- %s\n", l)
				continue
			}
			d.p("%s\n", l)
		}
	}
	return nil
}
