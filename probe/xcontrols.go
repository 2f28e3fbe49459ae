package probe

import (
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Two further drift controls (issue 31, bench/DRIFT.md): the null syscall
// sees the drift of the calls local to the reader's CPU (EAGAIN), not the
// data calls', which move a packet another CPU built (its skb, its
// socket's queue, the payload: cache lines written on the sender's CPU
// and read on the reader's). These controls see what moving cache lines
// and reaching memory costs, through no kernel code:
//
//   - the cache-line ping (record.CacheLine): the sender of the reader's
//     endpoint writes one line of a shared buffer (PingLines) after each
//     send batch, round robin; after each tick's drain the reader times a
//     read of each line, and records it when the line changed since its
//     last read (written by the sender on whatever CPU it ran: a line the
//     sender did not write since is in the reader's cache and says
//     nothing). Its cost moves with what moves the data path's cross-CPU
//     lines (where the vCPUs run, what the sender's CPU runs beside it),
//     and no change of the kernel's network code can move it.
//   - the memory chase (record.MemChase): ChaseRuns runs of ChaseSteps dependent
//     loads over a random cyclic permutation of the lines of a ChaseBytes
//     buffer (larger than the L2 cache): the cost of reaching the shared
//     cache and memory under the machine's other tenants.

// PingLineCount is the lines of a PingLines buffer (a power of two): the
// reader times at most this many reads a tick.
const PingLineCount = 64

// pingStride is the distance between two lines of PingLines in bytes:
// two 64-byte lines, so that the adjacent-line prefetcher (which fetches
// a line's 128-byte pair) never brings in the next ping line.
const pingStride = 128

// ChaseBytes is the memory chase's buffer (16 MiB: above this VM's 1 MiB
// L2, within its 32 MiB L3) and ChaseSteps the dependent loads one timed
// run makes.
const (
	ChaseBytes = 16 << 20
	ChaseSteps = 8
	// ChaseRuns is the timed runs a tick (128 loads: about 13 µs at
	// 100 ns a load).
	ChaseRuns = 16
)

// PingLines is the cache-line ping's shared buffer: PingLineCount lines,
// each on its own 128 bytes, each holding the sequence number of its last
// write. One writer (Touch), one reader (a Drain); no lock.
type PingLines struct {
	mem  []byte
	base unsafe.Pointer // 128-byte aligned, within mem
	next uint64         // the writer's
}

// NewPingLines allocates the buffer, aligned and written once.
func NewPingLines() *PingLines {
	p := &PingLines{mem: make([]byte, (PingLineCount+1)*pingStride)}
	off := (pingStride - uintptr(unsafe.Pointer(&p.mem[0]))%pingStride) % pingStride
	p.base = unsafe.Pointer(&p.mem[off])
	return p
}

// line is line i's sequence word.
//
//go:nosplit
func (p *PingLines) line(i uint64) *uint64 {
	return (*uint64)(unsafe.Add(p.base, uintptr(i&(PingLineCount-1))*pingStride))
}

// Touch writes the next line (round robin) with its sequence number: one
// store. The sender calls it after each send batch. Nil-safe.
//
//go:nosplit
func (p *PingLines) Touch() {
	if p == nil {
		return
	}
	p.next++
	atomic.StoreUint64(p.line(p.next), p.next)
}

// pingOrder is the order the reader reads the lines in: a fixed
// permutation, so that no stride prefetcher learns it.
var pingOrder = func() (o [PingLineCount]uint8) {
	r := rand.New(rand.NewPCG(31, 64))
	for i, j := range r.Perm(PingLineCount) {
		o[i] = uint8(j)
	}
	return o
}()

// newChase is a ChaseBytes buffer of uint32 whose lines form one random
// cycle (Sattolo's algorithm): word 16·i holds the line after line i.
// Every page is written.
func newChase() []uint32 {
	n := ChaseBytes / 64
	perm := make([]uint32, n)
	for i := range perm {
		perm[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(31, 16))
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	buf := make([]uint32, ChaseBytes/4)
	for i := range n {
		buf[16*perm[i]] = perm[(i+1)%n]
	}
	return buf
}

// extraControls times the ping, the chase and the recv control (xrecv.go;
// each when the drain has it)
// with the drain's clock source, after the null syscall and the loop.
//
//go:nosplit
func (d *Drain) extraControls() {
	switch d.src {
	case rt.SourceTSC:
		d.pingTSC()
		d.chaseTSC()
		d.recvTSC()
	case rt.SourceTSCFenced:
		d.pingTSCFenced()
		d.chaseTSCFenced()
		d.recvTSCFenced()
	case rt.SourceCycles:
		// The ping and the chase time with CLOCK_MONOTONIC here (as
		// before the recv control); the recv control with the drain's
		// cycles, the unit of the calls it is set against.
		d.pingMonotonic()
		d.chaseMonotonic()
		d.recvCycles()
	default:
		d.pingMonotonic()
		d.chaseMonotonic()
		d.recvMonotonic()
	}
}

//go:nosplit
func (d *Drain) pingTSC() {
	if d.ping == nil {
		return
	}
	n := 0
	for _, i := range pingOrder {
		t0 := rt.TSC()
		v := atomic.LoadUint64(d.ping.line(uint64(i)))
		t1 := rt.TSC()
		if v != d.pingSeen[i] {
			d.pingSeen[i] = v
			d.ctlPing[n] = uint64(t1 - t0)
			n++
		}
	}
	d.pingN = n
}

//go:nosplit
func (d *Drain) pingTSCFenced() {
	if d.ping == nil {
		return
	}
	n := 0
	for _, i := range pingOrder {
		t0 := rt.TSCFenced()
		v := atomic.LoadUint64(d.ping.line(uint64(i)))
		t1 := rt.TSCFenced()
		if v != d.pingSeen[i] {
			d.pingSeen[i] = v
			d.ctlPing[n] = uint64(t1 - t0)
			n++
		}
	}
	d.pingN = n
}

//go:nosplit
func (d *Drain) pingMonotonic() {
	if d.ping == nil {
		return
	}
	n := 0
	for _, i := range pingOrder {
		t0 := rt.Monotonic()
		v := atomic.LoadUint64(d.ping.line(uint64(i)))
		t1 := rt.Monotonic()
		if v != d.pingSeen[i] {
			d.pingSeen[i] = v
			d.ctlPing[n] = uint64(t1 - t0)
			n++
		}
	}
	d.pingN = n
}

//go:nosplit
func (d *Drain) chaseTSC() {
	if len(d.chase) == 0 {
		return
	}
	x := d.chaseX
	for k := range d.ctlChase {
		t0 := rt.TSC()
		for range ChaseSteps {
			x = d.chase[(x*16)&(ChaseBytes/4-1)]
		}
		t1 := rt.TSC()
		d.ctlChase[k] = uint64(t1 - t0)
	}
	d.chaseX = x
}

//go:nosplit
func (d *Drain) chaseTSCFenced() {
	if len(d.chase) == 0 {
		return
	}
	x := d.chaseX
	for k := range d.ctlChase {
		t0 := rt.TSCFenced()
		for range ChaseSteps {
			x = d.chase[(x*16)&(ChaseBytes/4-1)]
		}
		t1 := rt.TSCFenced()
		d.ctlChase[k] = uint64(t1 - t0)
	}
	d.chaseX = x
}

//go:nosplit
func (d *Drain) chaseMonotonic() {
	if len(d.chase) == 0 {
		return
	}
	x := d.chaseX
	for k := range d.ctlChase {
		t0 := rt.Monotonic()
		for range ChaseSteps {
			x = d.chase[(x*16)&(ChaseBytes/4-1)]
		}
		t1 := rt.Monotonic()
		d.ctlChase[k] = uint64(t1 - t0)
	}
	d.chaseX = x
}

// flushExtra records the ping's, the chase's and the recv control's
// samples of the tick.
//
//go:nosplit
func (d *Drain) flushExtra() {
	for _, v := range d.ctlPing[:d.pingN] {
		d.set.Record(record.CacheLine, v)
	}
	for _, v := range d.ctlChase {
		d.set.Record(record.MemChase, v)
	}
	d.flushRecv()
}
