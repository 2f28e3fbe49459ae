package profile

import (
	"encoding/binary"
	"slices"
	"strings"
)

// Frame is one symbolised stack frame.
type Frame struct {
	// Func is the function name: a kernel symbol ("___sys_recvmsg"), a Go
	// function ("github.com/rtload/rtload/probe.(*Drain).Step"), or
	// "[unknown]" when the address did not resolve.
	Func   string
	Kernel bool   // a kernel address (after a PERF_CONTEXT_KERNEL marker)
	Addr   uint64 // the address in the chain (a return address except for the innermost frame of each context)
}

// Unknown is the Func of a frame whose address did not resolve.
const Unknown = "[unknown]"

// Stack is one distinct call chain of a profile and how often it was
// sampled.
type Stack struct {
	// Frames are innermost first: the kernel frames, then the user frames
	// (pprof's order). Never empty.
	Frames []Frame
	Phase  Phase
	// Count is the number of samples, Weight the sum of their periods in
	// the event's unit (ns for cpu-clock).
	Count, Weight uint64
}

// Symbols resolves the two halves of a call chain. A nil Resolver leaves
// that half's frames [unknown].
type Symbols struct {
	Kernel Resolver // usually *Kallsyms
	User   Resolver // usually SelfSymbols
}

// Builder aggregates decoded samples by call chain, off the real-time
// thread; memory grows with the number of distinct chains, not samples.
// The zero value is ready to use; it is not safe for concurrent use.
type Builder struct {
	stacks map[string]*rawStack
	order  []*rawStack // first-seen order, so Build is deterministic
	tids   map[uint32]uint64

	samples, lost, lostRecords, throttles uint64
	first, last                           uint64 // sample time range, perf clock ns
	from, until, outside                  uint64 // Window and the samples it dropped
}

// Window keeps only the samples whose TIME is in [from, until) (the perf
// clock's ns; until 0 is no upper bound) and counts the others in
// Outside: a trial's measured window, so that a profile covers the calls
// that were measured. Call it before the first Add.
func (bl *Builder) Window(from, until uint64) { bl.from, bl.until = from, until }

// Outside is the number of samples Window dropped.
func (bl *Builder) Outside() uint64 { return bl.outside }

type rawStack struct {
	chain         []uint64
	count, weight uint64
}

// Add counts every sample and lost/throttle record of b. It copies what
// it keeps, so b may be Reset afterwards.
func (bl *Builder) Add(b *Batch) {
	if bl.stacks == nil {
		bl.stacks, bl.tids = map[string]*rawStack{}, map[uint32]uint64{}
	}
	var key []byte
	for i := range b.Samples {
		s := &b.Samples[i]
		if s.Time < bl.from || (bl.until != 0 && s.Time >= bl.until) {
			bl.outside++
			continue
		}
		chain := s.Callchain
		if len(chain) == 0 {
			chain = []uint64{s.IP} // no callchain asked for: the IP alone
		}
		key = key[:0]
		for _, pc := range chain {
			key = binary.NativeEndian.AppendUint64(key, pc)
		}
		rs := bl.stacks[string(key)]
		if rs == nil {
			rs = &rawStack{chain: slices.Clone(chain)}
			bl.stacks[string(key)] = rs
			bl.order = append(bl.order, rs)
		}
		rs.count++
		rs.weight += s.Period
		bl.tids[s.TID]++
		if bl.samples == 0 || s.Time < bl.first {
			bl.first = s.Time
		}
		bl.last = max(bl.last, s.Time)
		bl.samples++
	}
	bl.lost += b.Lost
	bl.lostRecords += b.LostRecords
	bl.throttles += b.Throttles
}

// Samples is the number of samples added so far.
func (bl *Builder) Samples() uint64 { return bl.samples }

// Build symbolises every distinct chain with syms, splits them by phase
// with rule, and returns the profile; Event, Period and Notes are left for
// the caller (the sampler fills them). Chains that symbolise to the same
// frames are merged.
func (bl *Builder) Build(syms Symbols, rule PhaseRule) *Profile {
	p := &Profile{Lost: bl.lost, LostRecords: bl.lostRecords, Throttles: bl.throttles}
	if bl.samples > 0 {
		p.StartNs, p.EndNs = bl.first, bl.last
	}
	for tid, n := range bl.tids {
		p.Threads = append(p.Threads, ThreadCount{TID: int(tid), Samples: n})
	}
	slices.SortFunc(p.Threads, func(a, b ThreadCount) int { return a.TID - b.TID })
	merged := map[string]int{}
	for _, rs := range bl.order {
		frames := symbolise(rs.chain, syms)
		key := framesKey(frames)
		if i, ok := merged[key]; ok {
			p.Stacks[i].Count += rs.count
			p.Stacks[i].Weight += rs.weight
			continue
		}
		merged[key] = len(p.Stacks)
		p.Stacks = append(p.Stacks, Stack{Frames: frames, Phase: rule.Classify(frames), Count: rs.count, Weight: rs.weight})
	}
	return p
}

func framesKey(frames []Frame) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Kernel {
			b.WriteString("k:")
		}
		b.WriteString(f.Func)
		b.WriteByte(';')
	}
	return b.String()
}

// symbolise turns a raw chain (innermost first, with context markers)
// into frames. The first address after each marker is where that context
// was interrupted and is looked up as is; the others are return
// addresses, looked up at pc-1 so a call at a function's end resolves to
// its caller. Marker-less chains (IP only) count as user addresses
// unless they are in the kernel half of the address space.
func symbolise(chain []uint64, syms Symbols) []Frame {
	frames := make([]Frame, 0, len(chain))
	kernel, first := chain[0] >= 1<<63, true
	for _, pc := range chain {
		if pc >= ContextMax {
			kernel, first = pc == ContextKernel, true
			continue
		}
		r := syms.User
		if kernel {
			r = syms.Kernel
		}
		look := pc
		if !first && look > 0 {
			look--
		}
		first = false
		name, ok := "", false
		if r != nil {
			name, ok = r.Lookup(look)
		}
		if !ok {
			name = Unknown
		}
		frames = append(frames, Frame{Func: name, Kernel: kernel, Addr: pc})
	}
	if len(frames) == 0 {
		frames = append(frames, Frame{Func: Unknown})
	}
	return frames
}
