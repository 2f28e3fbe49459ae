// Command wakesplit finds where a timer thread's wakeup latency goes, with
// the kernel's own clocks: it traces one CPU through tracefs
// (timer:hrtimer_start, timer:hrtimer_expire_entry, sched:sched_waking,
// sched:sched_switch, raw_syscalls:sys_enter/sys_exit, page faults, the
// local timer interrupt) and splits each wakeup of the measured thread into
// deadline → timer fire → waking → on CPU → back in user space (package
// bench/wakesplit), comparing the distributions between programs.
//
//	wakesplit trace [-cpu 1] [-buffer-kb N] -o FILE -- COMMAND [ARG…]
//	wakesplit split [-cpu 1] [-tid N] NAME=FILE[,FILE…] [NAME=FILE[,FILE…]]
//	wakesplit compare [-cpu 1] [-pairs 2] [-seconds 10] [-spin] [-dir DIR] [-rtload bin/rtload] [-drain bin/drain450]
//
// compare traces cyclictest -m -p 80 -i 10000 -a 1 and rtload run
// configs/timer-only.yaml alternately, -pairs times each, and prints the
// split of both (`make bench-wakesplit`). Root only (tracefs, SCHED_FIFO).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rtload/rtload/bench/wakesplit"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "trace":
		err = cmdTrace(os.Args[2:])
	case "split":
		err = cmdSplit(os.Args[2:])
	case "compare":
		err = cmdCompare(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "wakesplit: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: wakesplit trace|split|compare … (see go -C bench doc ./cmd/wakesplit)")
	os.Exit(2)
}

func cmdTrace(args []string) error {
	fs := flag.NewFlagSet("trace", flag.ExitOnError)
	cpu := fs.Int("cpu", 1, "CPU to trace (the measured thread's)")
	buf := fs.Int("buffer-kb", 32768, "ring buffer per CPU, KiB")
	out := fs.String("o", "", "trace file to write (must not exist)")
	comm := fs.String("comm", "", "the traced program's task name, for the event filters (default: the command's base name)")
	extra := fs.String("events", "", "more events to enable, comma-separated SYSTEM/EVENT (e.g. a uprobe defined in uprobe_events)")
	_ = fs.Parse(args)
	if *extra != "" {
		events = append(events, strings.Split(*extra, ",")...)
	}
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("trace: need -o FILE and a command")
	}
	return traceCommand(*cpu, *buf, *out, fs.Args(), *comm, os.Stdout)
}

// group is one program's traces, pooled.
type group struct {
	name  string
	files []string
}

func parseGroups(args []string) ([]group, error) {
	var gs []group
	for _, a := range args {
		name, files, ok := strings.Cut(a, "=")
		if !ok {
			name, files = filepath.Base(a), a
		}
		gs = append(gs, group{name: name, files: strings.Split(files, ",")})
	}
	if len(gs) == 0 || len(gs) > 2 {
		return nil, fmt.Errorf("split: give one or two NAME=FILE[,FILE…] groups")
	}
	return gs, nil
}

// headerPID reads the traced command's pid and the ring buffer's lost
// events (overrun) from a wakesplit trace header.
func headerPID(path string) (pid int, overrun int64) {
	f, err := os.Open(path) // a trace file the developer named (bench tool, not rtload)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := f.Read(b)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	for _, w := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(w, "pid="); ok {
			pid, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(w, "overrun="); ok {
			overrun, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return pid, overrun
}

// splitGroup reads and splits every file of g and pools the wakeups.
func splitGroup(g group, o wakesplit.Options) ([]wakesplit.Wakeup, string, error) {
	var all []wakesplit.Wakeup
	var notes []string
	for _, path := range g.files {
		f, err := os.Open(path) // a trace file the developer named (bench tool, not rtload)
		if err != nil {
			return nil, "", err
		}
		t, err := wakesplit.Read(f)
		f.Close()
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		oo := o
		pid, lost := headerPID(path)
		if oo.TID == 0 {
			oo.TGID = pid
		}
		ws, st := t.Split(oo)
		if st.TID == 0 {
			return nil, "", fmt.Errorf("%s: no real-time thread woken by its own timer on CPU %d", path, o.CPU)
		}
		own, err := readOwn(path + ".own")
		if err != nil {
			return nil, "", err
		}
		matched := wakesplit.MatchOwn(ws, own)
		note := fmt.Sprintf("%s: tid %d (pid %d), %d of %d sleeps split, %d of %d own latencies matched, %.4g trace ticks/ns",
			filepath.Base(path), st.TID, st.TGID, st.Complete, st.Sleeps, matched, len(own), t.HzPerNs)
		if lost > 0 {
			note += fmt.Sprintf(", %d events lost by the ring buffer (its oldest wakeups are missing)", lost)
		}
		notes = append(notes, note)
		all = append(all, ws...)
	}
	return all, strings.Join(notes, "; "), nil
}

func cmdSplit(args []string) error {
	fs := flag.NewFlagSet("split", flag.ExitOnError)
	cpu := fs.Int("cpu", 1, "CPU the measured thread ran on (-1: all)")
	tid := fs.Int("tid", 0, "measured thread (0: the real-time thread of the traced pid woken most by its own timer)")
	_ = fs.Parse(args)
	gs, err := parseGroups(fs.Args())
	if err != nil {
		return err
	}
	return printSplit(gs, wakesplit.Options{CPU: *cpu, TID: *tid})
}

func printSplit(gs []group, o wakesplit.Options) error {
	var names []string
	var sums []wakesplit.Summary
	var classes []map[string]wakesplit.Summary
	for _, g := range gs {
		ws, note, err := splitGroup(g, o)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", g.name, note)
		names = append(names, g.name)
		sums = append(sums, wakesplit.Summarize(ws))
		classes = append(classes, wakesplit.ByClass(ws))
	}
	fmt.Println()
	wakesplit.WriteTable(os.Stdout, names, sums)
	fmt.Println()
	wakesplit.WriteClassTable(os.Stdout, names, classes, sums)
	return nil
}
