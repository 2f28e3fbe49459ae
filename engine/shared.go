package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// This file watches a trial's readers' CPUs for threads of other
// processes that can take them (issue 34 row 9: two laight-450 runs on one
// CPU both said "marks: none", with a wakeup p99 2–8× a lone run's).

// sharedPoll is how often a trial looks for such threads during its
// window, besides its start and its end. A scan reads every process's
// task list and sched_getattr(2)s each thread (about 110 KB of garbage
// and 4–9 ms on the housekeeping CPU here): once a second.
const sharedPoll = time.Second

// culpritCPU reports whether foreign thread f can take reader r's CPU,
// and which one: f may run on one of r's CPUs and is a SCHED_DEADLINE
// thread, another rtload's reader (any priority: its drains and wakeups
// land between the reader's), any real-time thread when the reader is not
// (degraded), or a real-time thread at or above the reader's priority
// (SCHED_FIFO/RR run the highest first, equal ones in turn).
func culpritCPU(f rt.ForeignThread, r rt.Applied) (int, bool) {
	i := slices.IndexFunc(r.CPUs, func(c int) bool { return slices.Contains(f.CPUs, c) })
	if i < 0 {
		return 0, false
	}
	switch {
	case f.Policy == rt.Policy(unix.SCHED_DEADLINE).String(): // above every FIFO/RR thread
	case f.Rtload && strings.HasPrefix(f.Name, rt.ReaderPrefix):
	case !r.RealTime():
	case f.RealTime() && f.Priority >= r.Priority:
	default:
		return 0, false
	}
	return r.CPUs[i], true
}

// sharedReader is one reader a sharedWatch guards.
type sharedReader struct {
	name    string
	applied rt.Applied
}

// culpritKey is one foreign thread against one reader.
type culpritKey struct {
	pid, tid int
	reader   string
}

// sharedWatch collects, over a trial, the culprits of its readers
// (culpritCPU) from every scan of other processes' real-time threads: the
// trial's thread listings at its start and end (observe) and one every
// sharedPoll in between (its own goroutine). Safe for concurrent use.
type sharedWatch struct {
	readers []sharedReader
	cpus    []int
	t0      int64 // the measured window's start, CLOCK_MONOTONIC ns

	mu    sync.Mutex
	found map[culpritKey]*results.Culprit
	order []culpritKey
	scans int

	stop chan struct{}
	done chan struct{}
}

// newSharedWatch watches readers (those whose thread started), with t0
// the window's start.
func newSharedWatch(readers []sharedReader, t0 int64) *sharedWatch {
	w := &sharedWatch{readers: readers, t0: t0, found: map[culpritKey]*results.Culprit{}}
	for _, r := range readers {
		for _, c := range r.applied.CPUs {
			if !slices.Contains(w.cpus, c) {
				w.cpus = append(w.cpus, c)
			}
		}
	}
	slices.Sort(w.cpus)
	return w
}

// start scans every sharedPoll until halt. Failed scans are skipped (the
// listings at the start and end say why on the log).
func (w *sharedWatch) start() {
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.done)
		tick := time.NewTicker(sharedPoll)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				if list, _, err := rt.ForeignThreads(w.cpus); err == nil {
					w.observe(list, rt.Monotonic())
				}
			}
		}
	}()
}

// halt stops the scans (idempotent; nothing when never started).
func (w *sharedWatch) halt() {
	if w.stop == nil {
		return
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// observe takes one scan's listing of other processes' real-time threads
// on the readers' CPUs (rt.ForeignThreads), made at now (CLOCK_MONOTONIC
// ns), and records each culprit of each reader.
func (w *sharedWatch) observe(list []rt.ForeignThread, now int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.scans++
	for _, r := range w.readers {
		for _, f := range list {
			cpu, ok := culpritCPU(f, r.applied)
			if !ok {
				continue
			}
			k := culpritKey{f.PID, f.TID, r.name}
			c := w.found[k]
			if c == nil {
				c = &results.Culprit{Reader: r.name, CPU: cpu, ForeignThread: f, FirstNs: now - w.t0}
				w.found[k], w.order = c, append(w.order, k)
			}
			c.LastNs, c.Seen = now-w.t0, c.Seen+1
		}
	}
}

// maxCulpritsNamed is how many culprits a reader's mark names.
const maxCulpritsNamed = 3

// result is what the watch found: every culprit in the order first seen
// (Scans set), and one MarkShared per reader that had any, naming them.
func (w *sharedWatch) result() ([]results.Culprit, []results.Mark) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var culprits []results.Culprit
	for _, k := range w.order {
		c := *w.found[k]
		c.Scans = w.scans
		culprits = append(culprits, c)
	}
	var marks []results.Mark
	for _, r := range w.readers {
		var named []string
		n := 0
		for _, c := range culprits {
			if c.Reader != r.name {
				continue
			}
			if n++; n <= maxCulpritsNamed {
				named = append(named, culpritPhrase(c))
			}
		}
		if n == 0 {
			continue
		}
		text := fmt.Sprintf("reader %s's CPU %d shared with %s", r.name, culprits[slices.IndexFunc(culprits, func(c results.Culprit) bool { return c.Reader == r.name })].CPU, strings.Join(named, "; "))
		if n > maxCulpritsNamed {
			text += fmt.Sprintf("; and %d more (culprits in summary.json)", n-maxCulpritsNamed)
		}
		marks = append(marks, results.Mark{Kind: results.MarkShared, Reader: r.name, Text: text})
	}
	return culprits, marks
}

// culpritPhrase names a culprit and when it was seen: "another rtload,
// process 4321 (rtload) thread 4330 (rtl-rd/rt) SCHED_FIFO 80 on CPUs 1,
// seen in 5 of 5 scans (0.0–4.0 s)".
func culpritPhrase(c results.Culprit) string {
	return fmt.Sprintf("%s, seen in %d of %d scans (%.1f–%.1f s)", c.ForeignThread, c.Seen, c.Scans, float64(c.FirstNs)/1e9, float64(c.LastNs)/1e9)
}

// Disturbances warns, before a run, about what will disturb its readers
// on this machine now (issue 31: before a long baseline, name the thread
// and offer the fix), one line each:
//   - a thread of another process that can take a reader's CPU
//     (culpritCPU): another rtload's reader, or a real-time thread at or
//     above the reader's priority, pinned to its CPU or free to run
//     there; with what to do (wait for the other rtload, move the reader;
//     move the thread off the CPU with taskset or lower it with chrt);
//   - RT throttling on (sched_rt_runtime_us not -1) while a real-time
//     thread of another process, of any priority, may run on a reader's
//     CPU: if it keeps that CPU busy for the runtime, every real-time
//     thread there, the reader included, is stopped for the rest of the
//     period.
//
// The trials' marks (MarkShared, MarkStarved) say what actually happened;
// this says it before anything is paid for. A listing that fails is a
// line too. Nil when nothing is found.
func Disturbances(trials []scenario.Trial) []string {
	type key struct {
		name     string
		cpu      int
		policy   scenario.Policy
		priority int
	}
	var readers []key
	var cpus []int
	for _, tr := range trials {
		for _, r := range tr.Spec.Readers {
			k := key{r.Name, int(r.CPU), r.Policy, r.Priority}
			if !slices.Contains(readers, k) {
				readers = append(readers, k)
			}
			if !slices.Contains(cpus, k.cpu) {
				cpus = append(cpus, k.cpu)
			}
		}
	}
	if len(readers) == 0 {
		return nil
	}
	list, _, err := rt.ForeignThreads(cpus)
	if err != nil {
		return []string{fmt.Sprintf("cannot look for other processes' threads on the readers' CPUs: %v", err)}
	}
	var out []string
	for _, r := range readers {
		a := rt.Applied{Thread: results.Thread{Policy: schedPolicy(r.policy).String(), Priority: r.priority, CPUs: []int{r.cpu}}}
		if !a.RealTime() {
			a.Priority = 0
		}
		for _, f := range list {
			if _, ok := culpritCPU(f, a); !ok {
				continue
			}
			out = append(out, disturbanceLine(r.name, a, f))
		}
	}
	thr, err := sysinfo.ReadRTThrottling()
	if err == nil && thr.RuntimeUs >= 0 && thr.PeriodUs > 0 && len(list) > 0 {
		f := list[0]
		out = append(out, fmt.Sprintf("RT throttling is on (sched_rt_runtime_us %d of sched_rt_period_us %d) and %s may run on reader CPU %s: "+
			"if real-time threads keep that CPU busy for %d ms of a %d ms period, every real-time thread there, the reader included, is stopped for the rest of it "+
			"(a starved reader); move or stop that thread, or turn throttling off with sysctl -w kernel.sched_rt_runtime_us=-1 (a runaway real-time thread can then hang the CPU)",
			thr.RuntimeUs, thr.PeriodUs, f, results.CPUList(overlap(f.CPUs, cpus)), thr.RuntimeUs/1000, thr.PeriodUs/1000))
	}
	return out
}

// disturbanceLine is Disturbances' line for foreign thread f on reader
// name's CPU (a: the reader as it will run), with the fix.
func disturbanceLine(name string, a rt.Applied, f rt.ForeignThread) string {
	cpu := a.CPUs[0]
	what := fmt.Sprintf("reader %s (%s %d on CPU %d) will share its CPU with %s", name, a.Policy, a.Priority, cpu, f)
	if f.Rtload {
		return what + ": its trials will be marked (reader CPU shared); wait for that run to end, or put this run's reader on another CPU (--set readers[…].cpu=N)"
	}
	other := slices.IndexFunc(f.CPUs, func(c int) bool { return c != cpu })
	fix := fmt.Sprintf("stop it, lower it below the reader (chrt -p -f %d %d)", max(a.Priority-1, 1), f.TID)
	if other >= 0 {
		fix += fmt.Sprintf(", or keep it off CPU %d (taskset -p -c %s %d)", cpu, results.CPUList(without(f.CPUs, cpu)), f.TID)
	} else {
		fix += fmt.Sprintf(", or move it to another CPU (taskset -p -c N %d)", f.TID)
	}
	return what + ", at or above the reader's priority: it can preempt the reader whenever it runs, and the trials will be marked (reader CPU shared); " + fix
}

// overlap is the CPUs of a that are in b.
func overlap(a, b []int) []int {
	var out []int
	for _, c := range a {
		if slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}

// without is cpus less cpu.
func without(cpus []int, cpu int) []int {
	var out []int
	for _, c := range cpus {
		if c != cpu {
			out = append(out, c)
		}
	}
	return out
}
