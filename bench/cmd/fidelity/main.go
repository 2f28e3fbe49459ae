//go:build linux && amd64 && cgo

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rtload/rtload/bench/fidelity"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// config is the command line.
type config struct {
	duration, block, period, interval time.Duration
	settle, sockets, cpu, priority    int
	spin, warmup, rcvbuf, dmaLatency  int
	methods                           []string
	seed                              uint64
	summary                           bool
	read                              string // summarise this output file instead of running
	cSyscall                          string // "glibc" (drain450's loop) or "raw" (diagnostic)
	aa                                string // "": A/B; "c" or "rtload": both sides run that loop (A/A)
}

// errUsage marks a bad command line (exit 2).
var errUsage = errors.New("usage")

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("fidelity", flag.ContinueOnError)
	var methods string
	fs.DurationVar(&c.duration, "duration", 120*time.Second, "counted run time (whole cycles; warm-up cycles come on top)")
	fs.DurationVar(&c.block, "block", 100*time.Millisecond, "block length, a whole number of periods")
	fs.IntVar(&c.settle, "settle", 1, "ticks at the start of each block run and not recorded")
	fs.DurationVar(&c.period, "period", 10*time.Millisecond, "reader tick period")
	fs.IntVar(&c.sockets, "sockets", 450, "UDP sockets on 127.0.0.1")
	fs.DurationVar(&c.interval, "interval", 20*time.Millisecond, "one message per socket per interval (sender)")
	fs.StringVar(&methods, "methods", "recvfrom,recvmsg", "receive methods, one or two of recvfrom, recvmsg")
	fs.IntVar(&c.cpu, "cpu", 1, "reader CPU")
	fs.IntVar(&c.priority, "priority", 80, "reader SCHED_FIFO priority")
	fs.IntVar(&c.spin, "spin", 0, "SCHED_OTHER spin threads, unpinned (seed 000: 5)")
	fs.IntVar(&c.warmup, "warmup", 1, "cycles run first and not counted")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the block order")
	fs.IntVar(&c.rcvbuf, "rcvbuf", 256<<10, "SO_RCVBUF(FORCE) bytes per socket")
	fs.IntVar(&c.dmaLatency, "dma-latency", 0, "hold /dev/cpu_dma_latency at this many µs (-1: not)")
	fs.BoolVar(&c.summary, "summary", true, "print the comparison on stderr at the end")
	fs.StringVar(&c.cSyscall, "c-syscall", "glibc", "how the C side calls recvfrom/recvmsg: glibc (drain450's loop, the baseline) or raw (a SYSCALL instruction, as rtload: a diagnostic of glibc's share)")
	fs.StringVar(&c.aa, "aa", "", "A/A control: both sides run the C loop (c) or rtload's loop (rtload, two separate drains), labelled as usual; the ratios should be 1")
	fs.StringVar(&c.read, "read", "", "print the comparison of an output file (JSON lines) on stdout and run nothing")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	c.methods = strings.Split(methods, ",")
	return c, c.validate()
}

// validate lists every problem of c.
func (c config) validate() error {
	var bad []string
	if c.period <= 0 || c.block < c.period || c.block%c.period != 0 {
		bad = append(bad, fmt.Sprintf("-block %s: must be a whole number (≥ 1) of -period %s", c.block, c.period))
	} else if t := int(c.block / c.period); c.settle < 0 || c.settle >= t {
		bad = append(bad, fmt.Sprintf("-settle %d: must be 0–%d (a block has %d ticks)", c.settle, t-1, t))
	}
	if len(c.methods) < 1 || len(c.methods) > 2 {
		bad = append(bad, fmt.Sprintf("-methods %s: one or two (allowed: recvfrom, recvmsg)", strings.Join(c.methods, ",")))
	}
	for i, m := range c.methods {
		if m != "recvfrom" && m != "recvmsg" {
			bad = append(bad, fmt.Sprintf("-methods: %q unknown (allowed: recvfrom, recvmsg)", m))
		} else if slices.Index(c.methods, m) != i {
			bad = append(bad, fmt.Sprintf("-methods: %s twice", m))
		}
	}
	if c.cSyscall != "glibc" && c.cSyscall != "raw" {
		bad = append(bad, fmt.Sprintf("-c-syscall %q: allowed glibc, raw", c.cSyscall))
	}
	if c.aa != "" && c.aa != "c" && c.aa != "rtload" {
		bad = append(bad, fmt.Sprintf("-aa %q: allowed c, rtload (or empty)", c.aa))
	}
	if c.sockets < 1 || c.sockets > 65000 {
		bad = append(bad, fmt.Sprintf("-sockets %d: must be 1–65000", c.sockets))
	}
	if c.interval <= 0 {
		bad = append(bad, fmt.Sprintf("-interval %s: must be > 0", c.interval))
	}
	if c.priority < 1 || c.priority > 99 {
		bad = append(bad, fmt.Sprintf("-priority %d: must be 1–99", c.priority))
	}
	if c.spin < 0 || c.spin > 64 {
		bad = append(bad, fmt.Sprintf("-spin %d: must be 0–64", c.spin))
	}
	if c.warmup < 0 {
		bad = append(bad, fmt.Sprintf("-warmup %d: must be ≥ 0", c.warmup))
	}
	if c.duration <= 0 || c.duration > 24*time.Hour {
		bad = append(bad, fmt.Sprintf("-duration %s: must be > 0 and ≤ 24h", c.duration))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", errUsage, strings.Join(bad, "; "))
	}
	return nil
}

// ticks is the ticks per block.
func (c config) ticks() int { return int(c.block / c.period) }

// cycles is the counted cycles: at least 1, as many whole cycles as fit
// in duration.
func (c config) cycles() int {
	per := time.Duration(4*len(c.methods)) * c.block
	return max(1, int(c.duration/per))
}

func main() {
	c, err := parseFlags(os.Args[1:])
	switch {
	case err == nil && c.read != "":
		err = summarise(c.read, os.Stdout)
	case err == nil:
		reexecQuiet()
		err = run(c, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity: %v\n", err)
		switch {
		case errors.Is(err, errUsage):
			os.Exit(2)
		case errors.Is(err, rt.ErrNoPrivilege), errors.Is(err, rt.ErrNotSupported):
			os.Exit(3)
		}
		os.Exit(1)
	}
}

// summarise prints the comparison of the output file name.
func summarise(name string, w io.Writer) error {
	f, err := os.Open(name) // the file this bench tool wrote itself (bench tool, not rtload)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := fidelity.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fidelity.WriteText(w, r, fidelity.Rows(r))
	return nil
}

// reexecQuiet restarts the process once with GODEBUG=asyncpreemptoff=1, as
// rtload does (cmd/rtload/main.go): otherwise the runtime's sysmon sends
// SIGURG to the reader, which looks busy while it sleeps in a raw
// clock_nanosleep, and the signal lands in recv calls of either side.
// FIDELITY_NO_REEXEC=1 skips it.
func reexecQuiet() {
	if err := rt.ReexecQuiet("FIDELITY_NO_REEXEC"); err != nil {
		fmt.Fprintf(os.Stderr, "fidelity: warning: re-exec with GODEBUG=asyncpreemptoff=1 failed: %v\n", err)
	}
}

// goSide is rtload's reader loop for one method over the shared sockets.
type goSide struct {
	loop *probe.Loop
	rec  *probe.Recorders
}

// newGoSide builds what engine.newReader builds for a reader of method m:
// the receiver (2048-byte buffer), the drain timed with clk into a Set of
// the seed's bucket layout, and the loop with its wakeup ring.
func newGoSide(m string, fds []int, clk *rt.Clock) (*goSide, error) {
	i := slices.IndexFunc(udp.Methods, func(x udp.Method) bool { return x.String() == m })
	if i < 0 {
		return nil, fmt.Errorf("method %q unknown", m)
	}
	rx, err := udp.NewReceiver(udp.Methods[i], 2048, 0)
	if err != nil {
		return nil, err
	}
	rec := probe.NewRecorders(record.Layout{Width: 128, Origin: 64, Overflow: 8256})
	d := probe.NewDrain(probe.DrainConfig{FDs: fds, Receiver: rx, Clock: clk, Set: rec.Set})
	return &goSide{rec: rec, loop: &probe.Loop{Probe: d, Drain: d, Rec: rec, Wakeups: record.NewRing[record.Wakeup](1 << 10)}}, nil
}

// runner is one run's state, owned by the reader thread while it runs.
type runner struct {
	c      config
	cs     *cSide
	cset   *record.Set // the C side's calls, recorded after each block as rtload's CallAll
	goSide map[string]*goSide
	// goSideA is the A side's own rtload loops in an rtload A/A (-aa rtload).
	goSideA map[string]*goSide
	stop    atomic.Bool
	blocks  []fidelity.Block
	errno   uintptr
}

// hdrStats fills b's per-call statistics from h.
func hdrStats(b *fidelity.Block, h *record.HDR) {
	b.MeanTicks, b.P50Ticks, b.P99Ticks, b.MaxTicks = h.Mean(), h.Quantile(0.50), h.Quantile(0.99), h.Max()
}

// cBlock runs one C block from startNs.
func (r *runner) cBlock(m string, startNs int64) fidelity.Block {
	res := r.cs.block(startNs, int64(r.c.period), r.c.ticks(), r.c.settle, m == "recvmsg", r.c.cSyscall == "raw")
	r.cset.Reset()
	for _, dt := range res.dts {
		r.cset.Record(record.CallAll, dt)
	}
	b := fidelity.Block{Ticks: res.recorded, Missed: res.missed, Calls: res.data + res.eagain + res.errs,
		Data: res.data, EAGAIN: res.eagain, Errors: res.errs, Unrecorded: res.unrecorded, WakeMaxNs: res.wakeMaxNs}
	hdrStats(&b, r.cset.HDR(record.CallAll))
	return b
}

// goBlock runs one rtload block from startNs: Loop.Run over the block's
// deadlines, recording from the first tick after the settle ticks.
func (r *runner) goBlock(sides map[string]*goSide, m string, startNs int64) fidelity.Block {
	g := sides[m]
	l, period := g.loop, int64(r.c.period)
	l.Ticker = rt.NewTicker(startNs, period, false)
	l.MeasureFrom = startNs + int64(r.c.settle)*period
	l.MeasureUntil = startNs + int64(r.c.ticks())*period
	l.HardStop = l.MeasureUntil - period
	t0, c0 := l.MeasuredTicks, l.Drain.Counts()
	l.Run()
	if l.Errno != 0 {
		r.errno = l.Errno
		r.stop.Store(true)
	}
	c1 := l.Drain.Counts()
	b := fidelity.Block{Ticks: l.MeasuredTicks - t0, Missed: l.Ticker.Stats().MissedTicks, Calls: c1.Calls - c0.Calls,
		Data: c1.Data - c0.Data, EAGAIN: c1.EAGAIN - c0.EAGAIN, Errors: c1.Errors - c0.Errors,
		WakeMaxNs: int64(g.rec.Set.HDR(record.WakeupLatency).Max())}
	hdrStats(&b, g.rec.Set.HDR(record.CallAll))
	g.rec.Set.Reset()
	l.Wakeups.Drain(func(*record.Wakeup) {})
	return b
}

// drive runs every cycle on the reader thread. Between blocks it is
// ordinary Go code (where the runtime may reschedule the thread: before
// the next block's first sleep); inside a block only the side's own loop
// runs.
func (r *runner) drive() {
	sched := fidelity.NewSchedule(r.c.seed)
	period, blockNs := int64(r.c.period), int64(r.c.block)
	next := rt.Monotonic() + 2*period
	total := r.c.warmup + r.c.cycles()
	for cy := 0; cy < total; cy++ {
		vs, halves := sched.Next(r.c.methods)
		for pos, v := range vs {
			if r.stop.Load() {
				return
			}
			var b fidelity.Block
			switch {
			case v.Side == fidelity.C && r.c.aa == "rtload":
				b = r.goBlock(r.goSideA, v.Method, next)
			case v.Side == fidelity.C || r.c.aa == "c":
				b = r.cBlock(v.Method, next)
			default:
				b = r.goBlock(r.goSide, v.Method, next)
			}
			b.Kind, b.Variant, b.Seq, b.Cycle, b.Half, b.Pos, b.Warmup, b.StartNs = "block", v, len(r.blocks), cy, halves[pos], pos, cy < r.c.warmup, next
			r.blocks = append(r.blocks, b)
			next += blockNs
			if now := rt.Monotonic(); next <= now { // a block ran late: start the next one on the grid's next tick
				next += ((now-next)/period + 1) * period
			}
		}
	}
}

func run(c config, stdout, stderr io.Writer) (err error) {
	start := time.Now()
	runtime.GOMAXPROCS(runtime.NumCPU() + 4) // the reader keeps its P in raw sleeps (engine's budget)
	clk, err := rt.NewClock(rt.ClockTSC)
	if err != nil {
		return err
	}
	g, err := udp.Open(udp.Config{Count: c.sockets, RcvBuf: c.rcvbuf})
	if err != nil {
		return err
	}
	defer g.Close()
	ports := make([]uint16, 0, c.sockets)
	for _, a := range g.Addrs() {
		ports = append(ports, a.Port())
	}
	// One block's calls: every socket once per tick plus its messages
	// (1 per interval), with room for 16 per socket per tick.
	cs, err := newCSide(g.FDs(), ports, float64(c.interval)/1e6, c.ticks()*c.sockets*16)
	if err != nil {
		return err
	}
	r := &runner{c: c, cs: cs, cset: record.NewSetOf(record.Layout{Width: 128, Origin: 64, Overflow: 8256}, []record.Class{record.CallAll}),
		goSide: map[string]*goSide{}, goSideA: map[string]*goSide{}, blocks: make([]fidelity.Block, 0, (c.warmup+c.cycles())*4*len(c.methods))}
	for _, m := range c.methods {
		if r.goSide[m], err = newGoSide(m, g.FDs(), clk.ForThread()); err != nil {
			return err
		}
		if r.goSideA[m], err = newGoSide(m, g.FDs(), clk.ForThread()); err != nil {
			return err
		}
	}
	if c.dmaLatency >= 0 {
		f, err := rt.HoldCPUDMALatency(int32(c.dmaLatency))
		if err != nil {
			return err
		}
		defer f.Close()
	}
	if err := cs.startLoad(c.spin); err != nil {
		return err
	}
	defer cs.stopLoad() // idempotent: also on the error paths below
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	var signalled atomic.Value // the signal's name
	go func() {
		if s, ok := <-sig; ok {
			signalled.Store("signal " + s.String())
			r.stop.Store(true)
		}
	}()
	defer func() { signal.Stop(sig); close(sig) }()
	h := fidelity.Header{Kind: "header", Argv: os.Args, Sockets: c.sockets, Methods: c.methods, Clock: "tsc", TSCHz: clk.Info().Hz,
		PeriodNs: int64(c.period), IntervalNs: int64(c.interval), BlockTicks: c.ticks(), SettleTicks: c.settle, Cycles: c.cycles(),
		Warmup: c.warmup, Spin: c.spin, CPU: c.cpu, Priority: c.priority, Seed: c.seed, DMALatency: c.dmaLatency, CSyscall: c.cSyscall, AA: c.aa,
		Layout: "record.HDR of class call_all (exact below 2048 ticks, 3 significant digits above), both sides"}
	// No garbage collection while the reader runs (as engine's trials):
	// it could not stop the world while the reader sits in its loop.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	th, _, err := rt.Start(rt.Sched{Name: "fid-reader", CPUs: []int{c.cpu}, Policy: rt.FIFO, Priority: c.priority, Mlock: true},
		nil, func(rt.Applied) { r.drive() })
	if err != nil {
		return err
	}
	th.Wait() // the SCHED_FIFO thread is gone: it exited with its goroutine
	spins := cs.stopLoad()
	stopped, _ := signalled.Load().(string)
	if r.errno != 0 {
		stopped = fmt.Sprintf("clock_nanosleep: %v", syscall.Errno(r.errno))
	}
	drops, _ := g.Drops()
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i := range r.blocks {
		if err := enc.Encode(&r.blocks[i]); err != nil {
			return err
		}
	}
	end := fidelity.End{Kind: "end", Blocks: len(r.blocks), ElapsedNs: int64(time.Since(start)), Drops: drops, Stopped: stopped, SpinLoops: spins}
	if err := enc.Encode(end); err != nil {
		return err
	}
	if c.summary {
		fr := &fidelity.Run{Header: h, Blocks: r.blocks, End: &end}
		fidelity.WriteText(stderr, fr, fidelity.Rows(fr))
	}
	if stopped != "" {
		return fmt.Errorf("stopped early (%s) after %d blocks; every block so far written", stopped, len(r.blocks))
	}
	return nil
}
