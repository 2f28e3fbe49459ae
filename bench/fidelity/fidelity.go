// Package fidelity is the block schedule, the output format and the
// analysis of bench/cmd/fidelity: rtload's per-call cost against the C
// loop of bench/drain450.c measured inside one process, on one SCHED_FIFO
// reader thread and the same sockets, in alternating blocks, so that the
// machine's state (which moves a 3 s run's p50 by up to ±30% from one run
// to the next on a shared VM, bench/GAPS.md) is shared by both sides of
// every pair.
//
// # Schedule
//
// A cycle is two halves of one block per variant (side × method). The
// first half runs, for each method in turn, the two sides one after the
// other; the second half is the first mirrored. With sides C, R and
// methods f, m: C_f R_f C_m R_m | R_m C_m R_f C_f. Which side and which
// method go first is drawn per cycle from a seeded generator. Each half is
// one unit of every comparison: rtload/C of a method from its two adjacent
// blocks, recvmsg/recvfrom of a side from its two blocks two apart. The
// mirror makes a linear drift cancel within each cycle and weigh on each
// side alike; the random start keeps a periodic disturbance from locking
// to one variant.
//
// # Output
//
// One JSON object per line: a Header, then one Block per block in run
// order, then an End. Every value the analysis uses is in the blocks, so
// a result can be recomputed from the file (vegeta's results file).
//
// Pure: no clock, no I/O but the reader given.
package fidelity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
)

// Side is the program whose drain ran a block.
type Side string

// The two sides.
const (
	C      Side = "c"      // bench/drain450.c's loop (bench/drainloop.h), one cgo call per block
	RTload Side = "rtload" // rtload's reader loop: probe.Loop running probe.Drain
)

// Variant is what one block runs.
type Variant struct {
	Side   Side   `json:"side"`
	Method string `json:"method"`
}

func (v Variant) String() string { return string(v.Side) + "/" + v.Method }

// Cycle returns the blocks of one cycle for methods (1 or 2; more are
// allowed and follow the same rule): the first half is, for each method
// in order (reversed when methodFirst is false), the two sides (C first
// when cFirst); the second half mirrors it. half[i] is the half of block i.
func Cycle(methods []string, cFirst, methodFirst bool) (blocks []Variant, half []int) {
	sides := []Side{C, RTload}
	if !cFirst {
		sides = []Side{RTload, C}
	}
	ms := append([]string(nil), methods...)
	if !methodFirst {
		for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
	var first []Variant
	for _, m := range ms {
		for _, s := range sides {
			first = append(first, Variant{s, m})
		}
	}
	blocks = append(blocks, first...)
	for i := len(first) - 1; i >= 0; i-- {
		blocks = append(blocks, first[i])
	}
	half = make([]int, len(blocks))
	for i := len(first); i < len(blocks); i++ {
		half[i] = 1
	}
	return blocks, half
}

// Schedule draws cycle c's start (cFirst, methodFirst) from a PCG seeded
// with seed; it is called for c = 0, 1, 2, … in order.
type Schedule struct{ rng *rand.Rand }

// NewSchedule returns the schedule of seed.
func NewSchedule(seed uint64) *Schedule { return &Schedule{rand.New(rand.NewPCG(seed, 0x5eed))} }

// Next returns the next cycle's blocks and halves (see Cycle).
func (s *Schedule) Next(methods []string) ([]Variant, []int) {
	return Cycle(methods, s.rng.IntN(2) == 0, s.rng.IntN(2) == 0)
}

// Header is the first line: how the run was set up.
type Header struct {
	Kind        string   `json:"kind"` // "header"
	Argv        []string `json:"argv"`
	Sockets     int      `json:"sockets"`
	Methods     []string `json:"methods"`
	Clock       string   `json:"clock"` // "tsc": both sides read RDTSCP;LFENCE
	TSCHz       float64  `json:"tsc_hz"`
	PeriodNs    int64    `json:"period_ns"`
	IntervalNs  int64    `json:"interval_ns"` // one message per socket per interval
	BlockTicks  int      `json:"block_ticks"`
	SettleTicks int      `json:"settle_ticks"` // first ticks of each block, run and not recorded
	Cycles      int      `json:"cycles"`
	Warmup      int      `json:"warmup_cycles"` // first cycles, run and not counted
	Spin        int      `json:"spin_threads"`
	CPU         int      `json:"cpu"`
	Priority    int      `json:"priority"`
	Seed        uint64   `json:"seed"`
	DMALatency  int      `json:"cpu_dma_latency_us"` // -1: not held
	// CSyscall is how the C side calls recv: "glibc" (drain450's loop,
	// the baseline) or "raw" (a SYSCALL instruction: a diagnostic).
	CSyscall string `json:"c_syscall"`
	// AA, when set, is an A/A control: both sides ran that loop ("c" or
	// "rtload"), under the usual labels.
	AA     string `json:"aa,omitempty"`
	Layout string `json:"layout"` // percentile source, e.g. "record.HDR (3 significant digits), both sides"
}

// Block is one block's result: per-call cost of its recorded calls (every
// call of its ticks after the settle ticks, data and EAGAIN), TSC ticks.
type Block struct {
	Kind string `json:"kind"` // "block"
	Variant
	Seq     int   `json:"seq"`
	Cycle   int   `json:"cycle"`
	Half    int   `json:"half"`
	Pos     int   `json:"pos"` // in the cycle
	Warmup  bool  `json:"warmup"`
	StartNs int64 `json:"start_ns"` // the block's first deadline, CLOCK_MONOTONIC
	// Ticks recorded, and the ticks the side's loop skipped (overruns)
	// over the whole block.
	Ticks  uint64 `json:"ticks"`
	Missed uint64 `json:"missed"`
	// Calls recorded, by result; Unrecorded calls beyond the C side's
	// sample buffer (0: the buffer holds far more than a block makes).
	Calls      uint64  `json:"calls"`
	Data       uint64  `json:"data"`
	EAGAIN     uint64  `json:"eagain"`
	Errors     uint64  `json:"errors"`
	Unrecorded uint64  `json:"unrecorded"`
	MeanTicks  float64 `json:"mean_ticks"`
	P50Ticks   uint64  `json:"p50_ticks"`
	P99Ticks   uint64  `json:"p99_ticks"`
	MaxTicks   uint64  `json:"max_ticks"`
	// WakeMaxNs is the largest wakeup latency of its recorded ticks, each
	// side by its own stamp (context only).
	WakeMaxNs int64 `json:"wake_max_ns"`
}

// End is the last line.
type End struct {
	Kind      string `json:"kind"` // "end"
	Blocks    int    `json:"blocks"`
	ElapsedNs int64  `json:"elapsed_ns"`
	Drops     uint64 `json:"drops"` // kernel drops on the receive sockets (SO_MEMINFO)
	Stopped   string `json:"stopped,omitempty"`
	SpinLoops uint64 `json:"spin_loops"`
}

// Run is a whole output.
type Run struct {
	Header Header
	Blocks []Block
	End    *End // nil: the run did not finish
}

// Read parses a run; a line of unknown kind is an error naming its number.
func Read(r io.Reader) (*Run, error) {
	run := &Run{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var k struct {
			Kind string `json:"kind"`
		}
		line := sc.Bytes()
		if err := json.Unmarshal(line, &k); err != nil {
			return nil, fmt.Errorf("fidelity output line %d: %w", n, err)
		}
		var err error
		switch k.Kind {
		case "header":
			err = json.Unmarshal(line, &run.Header)
		case "block":
			var b Block
			err = json.Unmarshal(line, &b)
			run.Blocks = append(run.Blocks, b)
		case "end":
			run.End = &End{}
			err = json.Unmarshal(line, run.End)
		default:
			err = fmt.Errorf("kind %q (allowed: header, block, end)", k.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("fidelity output line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if run.Header.Kind != "header" {
		return nil, fmt.Errorf("fidelity output: no header line")
	}
	return run, nil
}

// Value is a block's statistic "p50", "p99" or "mean" (ticks/call).
func (b Block) Value(stat string) float64 {
	switch stat {
	case "p50":
		return float64(b.P50Ticks)
	case "p99":
		return float64(b.P99Ticks)
	case "mean":
		return b.MeanTicks
	}
	return 0
}

// Half is the counted blocks of one half-cycle, by variant.
type Half struct {
	Cycle, Half int
	Blocks      map[Variant]Block
}

// Clean reports whether block b ran as asked: every tick after the
// settle ticks recorded, none missed (the reader lost its CPU for a
// period or more: the workload was not the one asked for, and the block's
// mean holds calls stalled for milliseconds), every call recorded and
// none failed.
func (h Header) Clean(b Block) bool {
	return b.Missed == 0 && b.Unrecorded == 0 && b.Errors == 0 && b.Ticks == uint64(h.BlockTicks-h.SettleTicks)
}

// Halves groups the counted blocks (warm-up left out) by half-cycle, in
// run order, keeping only halves that hold every variant of the header's
// methods (a run stopped early ends with a partial one) and whose blocks
// are all Clean; dropped counts the complete halves left out for a block
// that was not, and dirty the blocks that were not, by side.
func (r *Run) Halves() (kept []Half, dropped int, dirty map[Side]int) {
	var all []Half
	want := 2 * len(r.Header.Methods)
	dirty = map[Side]int{}
	for _, b := range r.Blocks {
		if b.Warmup {
			continue
		}
		if n := len(all); n == 0 || all[n-1].Cycle != b.Cycle || all[n-1].Half != b.Half {
			all = append(all, Half{Cycle: b.Cycle, Half: b.Half, Blocks: map[Variant]Block{}})
		}
		all[len(all)-1].Blocks[b.Variant] = b
		if !r.Header.Clean(b) {
			dirty[b.Side]++
		}
	}
	for _, h := range all {
		if len(h.Blocks) != want {
			continue
		}
		clean := true
		for _, b := range h.Blocks {
			clean = clean && r.Header.Clean(b)
		}
		if !clean {
			dropped++
			continue
		}
		kept = append(kept, h)
	}
	return kept, dropped, dirty
}

// Pairs returns, per half, the values of stat of variants x (A) and y
// (B), in run order: the pairs of the comparison y/x.
func Pairs(halves []Half, x, y Variant, stat string) (a, b []float64) {
	for _, h := range halves {
		bx, okx := h.Blocks[x]
		by, oky := h.Blocks[y]
		if okx && oky {
			a, b = append(a, bx.Value(stat)), append(b, by.Value(stat))
		}
	}
	return a, b
}
