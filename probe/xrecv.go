package probe

import (
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// The recv control (record.RecvData and record.RecvEAGAIN; issue 31,
// bench/DRIFT.md run 4): in run 4 the recv path drifted alone, while the
// null syscall, the user loop, the cache-line ping and the memory chase
// stayed put, so this control is made of the recv path itself. The
// reader owns one more UDP socket (udp.Self, bound to 127.0.0.1 on an
// ephemeral port, made by the engine before the loop, never one of the
// workload's and never changed by a scenario's variants). After its other
// controls, each tick it first empties that socket untimed (the warm-up
// call, as the other controls': normally one EAGAIN call), then runs
// RecvRounds rounds of: send one RecvBytes datagram to the socket (untimed;
// on loopback the receive softirq runs on the reader's own CPU as the
// send returns, so no other CPU is involved), time one call of the
// drain's own Receiver on it (the workload's recv function and buffers:
// the same kernel path, recvfrom, recvmsg or recvmmsg), a data call, and
// time one more, which finds the socket empty, an EAGAIN call.
//
// Each timed call is recorded by what it returned (data into RecvData,
// EAGAIN into RecvEAGAIN, another error into neither), so a datagram the
// kernel delivered late (its softirq deferred to ksoftirqd) shows as a
// round with two EAGAIN calls and one with two data calls, never as a
// data call's cost filed as an EAGAIN call's; a round whose send failed is
// not recorded. What the datagram's path costs the sender (the send and
// its softirq) is in the tick's control time (so in the skip rule), not
// in any sample. Its softirqs are counted on the reader's CPU
// (/proc/softirqs NET_RX): RecvRounds a tick.
//
// Unlike a workload data call, the datagram was built on the reader's own
// CPU just before the call (its skb and payload hot in the reader's
// cache): the control follows the recv path's own code and the reader
// CPU's speed, not the cost of moving the sender's lines between CPUs.
//
// Cost, on the 2-vCPU Xeon VM of bench/DRIFT.md run 4 (BenchmarkRecvControl
// against BenchmarkControls, 3000 ticks each on CPU 0, recvfrom, TSC):
// the 16 rounds add 22.8 µs a tick (47.4 µs with the 64 null syscalls
// and loops, against 24.5 µs without): 0.23% of a 10 ms tick, about
// 1.4 µs a round, most of it the send and its softirq. The calls
// themselves: a data call's p50 265 ns, an EAGAIN call's 142 ns (in a
// 20 s run of bench/drift-450.yaml the workload's were 573 ns and 172 ns).

// RecvRounds is the recv control's rounds a tick (each a send, a timed data
// call and a timed EAGAIN call), RecvBytes its datagrams' payload.
const (
	RecvRounds = 16
	RecvBytes  = 64
)

// recvNotSent marks a round whose send failed: neither call is recorded.
const recvNotSent = unix.Errno(1 << 20)

// recvEmpty reads the control socket until it is empty (at most
// 2·RecvRounds+1 calls), untimed: a datagram left over by a late delivery
// goes, and the first call after the other controls is not timed.
//
//go:nosplit
func (d *Drain) recvEmpty(fd int) {
	for range 2*RecvRounds + 1 {
		if _, _, e := d.rx.Recv(fd); e != 0 {
			return
		}
	}
}

// recvTSC, recvTSCFenced, recvCycles and recvMonotonic are the recv
// control's measured path, one per clock source as the drain's (the same
// reads around the same Receiver call as the drain's recv calls).

//go:nosplit
func (d *Drain) recvTSC() {
	if d.self == nil {
		return
	}
	fd := d.self.FD()
	d.recvEmpty(fd)
	for k := 0; k < RecvRounds; k++ {
		if e := d.self.Send(); e != 0 {
			d.ctlRecvErr[2*k], d.ctlRecvErr[2*k+1] = recvNotSent, recvNotSent
			continue
		}
		t0 := rt.TSC()
		_, _, e := d.rx.Recv(fd)
		t1 := rt.TSC()
		d.ctlRecv[2*k], d.ctlRecvErr[2*k] = uint64(t1-t0), e
		t0 = rt.TSC()
		_, _, e = d.rx.Recv(fd)
		t1 = rt.TSC()
		d.ctlRecv[2*k+1], d.ctlRecvErr[2*k+1] = uint64(t1-t0), e
	}
}

//go:nosplit
func (d *Drain) recvTSCFenced() {
	if d.self == nil {
		return
	}
	fd := d.self.FD()
	d.recvEmpty(fd)
	for k := 0; k < RecvRounds; k++ {
		if e := d.self.Send(); e != 0 {
			d.ctlRecvErr[2*k], d.ctlRecvErr[2*k+1] = recvNotSent, recvNotSent
			continue
		}
		t0 := rt.TSCFenced()
		_, _, e := d.rx.Recv(fd)
		t1 := rt.TSCFenced()
		d.ctlRecv[2*k], d.ctlRecvErr[2*k] = uint64(t1-t0), e
		t0 = rt.TSCFenced()
		_, _, e = d.rx.Recv(fd)
		t1 = rt.TSCFenced()
		d.ctlRecv[2*k+1], d.ctlRecvErr[2*k+1] = uint64(t1-t0), e
	}
}

//go:nosplit
func (d *Drain) recvCycles() {
	if d.self == nil {
		return
	}
	fd := d.self.FD()
	d.recvEmpty(fd)
	for k := 0; k < RecvRounds; k++ {
		if e := d.self.Send(); e != 0 {
			d.ctlRecvErr[2*k], d.ctlRecvErr[2*k+1] = recvNotSent, recvNotSent
			continue
		}
		t0 := d.clock.Cycles()
		_, _, e := d.rx.Recv(fd)
		t1 := d.clock.Cycles()
		d.ctlRecv[2*k], d.ctlRecvErr[2*k] = uint64(t1-t0), e
		t0 = d.clock.Cycles()
		_, _, e = d.rx.Recv(fd)
		t1 = d.clock.Cycles()
		d.ctlRecv[2*k+1], d.ctlRecvErr[2*k+1] = uint64(t1-t0), e
	}
}

//go:nosplit
func (d *Drain) recvMonotonic() {
	if d.self == nil {
		return
	}
	fd := d.self.FD()
	d.recvEmpty(fd)
	for k := 0; k < RecvRounds; k++ {
		if e := d.self.Send(); e != 0 {
			d.ctlRecvErr[2*k], d.ctlRecvErr[2*k+1] = recvNotSent, recvNotSent
			continue
		}
		t0 := rt.Monotonic()
		_, _, e := d.rx.Recv(fd)
		t1 := rt.Monotonic()
		d.ctlRecv[2*k], d.ctlRecvErr[2*k] = uint64(t1-t0), e
		t0 = rt.Monotonic()
		_, _, e = d.rx.Recv(fd)
		t1 = rt.Monotonic()
		d.ctlRecv[2*k+1], d.ctlRecvErr[2*k+1] = uint64(t1-t0), e
	}
}

// flushRecv records the tick's recv-control calls by what each returned.
//
//go:nosplit
func (d *Drain) flushRecv() {
	for i, v := range d.ctlRecv {
		switch d.ctlRecvErr[i] {
		case 0:
			d.set.Record(record.RecvData, v)
		case unix.EAGAIN:
			d.set.Record(record.RecvEAGAIN, v)
		}
	}
}
