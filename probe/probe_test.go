package probe_test

import (
	"math"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

const seedCount = 450

func clock(t testing.TB) *rt.Clock { return testutil.AutoClock(t) }

// newDrain builds a Drain with the seed's histogram layout.
func newDrain(t testing.TB, fds []int, rx udp.Receiver) *probe.Drain {
	t.Helper()
	return probe.NewDrain(probe.DrainConfig{FDs: fds, Receiver: rx, Clock: clock(t), Set: record.NewSet(seedLayout)})
}

// seedLayout is seed 000's per-call bucket layout (128-tick buckets from 64,
// overflow at 8256).
var seedLayout = record.Layout{Width: 128, Origin: 64, Overflow: 8256}

// lin returns d's linear recorder of class c.
func lin(d *probe.Drain, c record.Class) *record.Linear { return d.Set().Linear(c) }

func openGroup(t testing.TB, count int) (*udp.Group, *udp.Sender) {
	t.Helper()
	g, err := udp.Open(udp.Config{Count: count, RcvBuf: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	s, err := udp.NewSender(g, 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return g, s
}

// waitQueued waits (at most 2 s) until every socket has a datagram queued
// (SIOCINQ > 0), so a single Step sees everything that was sent.
func waitQueued(t testing.TB, fds []int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for i, fd := range fds {
		for n := 0; n < 1e6; n++ {
			q, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
			if err != nil {
				t.Fatalf("socket %d: SIOCINQ: %v", i, err)
			}
			if q > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("socket %d: nothing queued after 2 s", i)
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestDrainStep450(t *testing.T) {
	g, s := openGroup(t, seedCount)
	d := newDrain(t, g.FDs(), udp.NewRecvFrom(2048))
	d.Measure = true
	if n, err := s.Send(seq(seedCount), rt.Monotonic()); n != seedCount || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	waitQueued(t, g.FDs())
	d.Step()

	c := d.Counts()
	if c.Messages != seedCount || c.Bytes != 64*seedCount || c.Lost != 0 || c.Reordered != 0 || c.Short != 0 || c.Errors != 0 {
		t.Errorf("Counts = %+v; want %d messages of 64 bytes, nothing lost, reordered, short or failed", c, seedCount)
	}
	if got := d.SocketsRead(); got != seedCount {
		t.Errorf("SocketsRead = %d, want %d", got, seedCount)
	}
	if tk := d.LastTick(); tk != (probe.Tick{Messages: seedCount, Calls: 2 * seedCount, EAGAIN: seedCount}) {
		t.Errorf("LastTick = %+v; want one data and one EAGAIN call per socket", tk)
	}
	if c.Calls != 2*seedCount || c.Data != seedCount || c.EAGAIN != seedCount {
		t.Errorf("Calls %d Data %d EAGAIN %d; want %d, %d, %d", c.Calls, c.Data, c.EAGAIN, 2*seedCount, seedCount, seedCount)
	}
	all, data, eagain := lin(d, record.CallAll).Total(), lin(d, record.CallData).Total(), lin(d, record.CallEAGAIN).Total()
	if all != c.Calls || data+eagain != all || data != c.Data || eagain != c.EAGAIN {
		t.Errorf("histogram totals All %d Data %d EAGAIN %d; Counts Calls %d Data %d EAGAIN %d",
			all, data, eagain, c.Calls, c.Data, c.EAGAIN)
	}
	if n := d.Set().HDR(record.CallAll).Histogram().TotalCount(); uint64(n) != all {
		t.Errorf("AllHDR count %d, All %d", n, all)
	}
	if n := d.Set().HDR(record.OneWayDelay).Histogram().TotalCount(); n != seedCount {
		t.Errorf("Delay count %d, want %d", n, seedCount)
	}
	for i := range g.FDs() {
		if d.Received(i) != 1 || d.Expected(i) != s.SentTo(i) {
			t.Fatalf("socket %d: received %d, expects seq %d, sender sent %d", i, d.Received(i), d.Expected(i), s.SentTo(i))
		}
	}

	// Outside the measured window the accounting goes on, the histograms stop.
	d.Measure = false
	d.Step()
	if tk := d.LastTick(); tk != (probe.Tick{Calls: seedCount, EAGAIN: seedCount}) {
		t.Errorf("empty Step: LastTick = %+v", tk)
	}
	if lin(d, record.CallAll).Total() != all || d.Counts().Calls != c.Calls {
		t.Errorf("unmeasured Step recorded: All %d → %d, Calls %d → %d", all, lin(d, record.CallAll).Total(), c.Calls, d.Counts().Calls)
	}
}

// fakeRx is a udp.Receiver over payloads queued per fd: each Recv returns
// the next one, then EAGAIN. It fakes at the Receiver seam, not the kernel.
type fakeRx struct {
	q   map[int][][]byte
	cur []byte
}

var _ udp.Receiver = (*fakeRx)(nil)

func (f *fakeRx) Recv(fd int) (int, int, unix.Errno) {
	if len(f.q[fd]) == 0 {
		return 0, 0, unix.EAGAIN
	}
	f.cur, f.q[fd] = f.q[fd][0], f.q[fd][1:]
	return 1, len(f.cur), 0
}

func (f *fakeRx) Msg(int) []byte { return f.cur }

func payload(seq uint64) []byte {
	b := make([]byte, 32)
	udp.PutHeader(b, udp.Header{Seq: seq, SentNs: rt.Monotonic()})
	return b
}

func TestDrainSequence(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		seqs                   []uint64 // arrival order on one socket; ^0 = a 5-byte runt
		lost, reordered, short uint64
		expect                 uint64
		dups                   uint64
	}{
		{"in order", []uint64{0, 1, 2, 3}, 0, 0, 0, 4, 0},
		{"2 and 3 swapped: the gap at 2 is forgiven when 2 arrives", []uint64{0, 1, 3, 2}, 0, 1, 0, 4, 0},
		{"gap of 4", []uint64{0, 5}, 4, 0, 0, 6, 0},
		{"first message lost", []uint64{1, 2}, 1, 0, 0, 3, 0},
		{"duplicate is a duplicate, not a reordering", []uint64{0, 1, 1}, 0, 0, 0, 2, 1},
		{"duplicate does not forgive a gap: 0,2,2 lost 1", []uint64{0, 2, 2}, 1, 0, 0, 3, 1},
		{"late arrival after a gap, then its duplicate", []uint64{0, 3, 1, 1, 2}, 0, 2, 0, 4, 1},
		{"runt has no header", []uint64{0, ^uint64(0), 1}, 0, 0, 1, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rx := &fakeRx{q: map[int][][]byte{}}
			for _, s := range tc.seqs {
				if s == ^uint64(0) {
					rx.q[7] = append(rx.q[7], make([]byte, 5))
					continue
				}
				rx.q[7] = append(rx.q[7], payload(s))
			}
			d := newDrain(t, []int{7}, rx)
			d.Measure = true
			d.Step()
			c := d.Counts()
			if c.Lost != tc.lost || c.Reordered != tc.reordered || c.Short != tc.short || c.Duplicates != tc.dups {
				t.Errorf("Lost %d Reordered %d Short %d Duplicates %d; want %d %d %d %d", c.Lost, c.Reordered, c.Short, c.Duplicates, tc.lost, tc.reordered, tc.short, tc.dups)
			}
			if c.Messages != uint64(len(tc.seqs)) || d.Expected(0) != tc.expect {
				t.Errorf("Messages %d, Expected %d; want %d, %d", c.Messages, d.Expected(0), len(tc.seqs), tc.expect)
			}
			if d.Set().HDR(record.OneWayDelay).Histogram().TotalCount() != int64(len(tc.seqs))-int64(tc.short) {
				t.Errorf("Delay count %d", d.Set().HDR(record.OneWayDelay).Histogram().TotalCount())
			}
		})
	}
}

func TestDrainErrno(t *testing.T) {
	// A socket error other than EAGAIN ends that socket's drain and is counted.
	d := newDrain(t, []int{-1}, udp.NewRecvFrom(2048))
	d.Measure = true
	d.Step()
	c := d.Counts()
	if c.Errors != 1 || c.LastErrno != unix.EBADF || c.EAGAIN != 0 || c.Calls != 1 {
		t.Errorf("Counts = %+v; want 1 call, 1 error EBADF", c)
	}
	if lin(d, record.CallAll).Total() != 1 || lin(d, record.CallEAGAIN).Total() != 0 || lin(d, record.CallData).Total() != 0 {
		t.Errorf("All %d EAGAIN %d Data %d; want 1 0 0", lin(d, record.CallAll).Total(), lin(d, record.CallEAGAIN).Total(), lin(d, record.CallData).Total())
	}
}

func TestDrainStepAllocsEmpty(t *testing.T) {
	g, _ := openGroup(t, seedCount)
	for _, r := range []struct {
		name string
		rx   udp.Receiver
	}{{"recvfrom", udp.NewRecvFrom(2048)}, {"recvmsg", udp.NewRecvMsg(2048)}, {"recvmmsg8", udp.NewRecvMMsg(2048, 8)}} {
		t.Run(r.name, func(t *testing.T) {
			d := newDrain(t, g.FDs(), r.rx)
			d.Measure = true
			if a := testing.AllocsPerRun(100, d.Step); a != 0 {
				t.Errorf("Step allocs %v on %d empty sockets, want 0", a, seedCount)
			}
			if c := d.Counts(); c.EAGAIN != 101*seedCount || c.Messages != 0 {
				t.Errorf("Counts = %+v; want %d EAGAIN calls", c, 101*seedCount)
			}
			// Every call is a cold EAGAIN; the first 3 of each Step are First.
			if lin(d, record.CallCold).Total() != 101*seedCount || lin(d, record.CallWarm).Total() != 0 {
				t.Errorf("Cold %d Warm %d; want %d 0", lin(d, record.CallCold).Total(), lin(d, record.CallWarm).Total(), 101*seedCount)
			}
			if lin(d, record.CallFirst).Total() != 101*probe.FirstCalls || lin(d, record.CallFirst).Total()+lin(d, record.CallRest).Total() != lin(d, record.CallAll).Total() {
				t.Errorf("First %d Rest %d All %d; want First %d, First+Rest = All", lin(d, record.CallFirst).Total(), lin(d, record.CallRest).Total(), lin(d, record.CallAll).Total(), 101*probe.FirstCalls)
			}
		})
	}
}

// rawSender sends one datagram to each of a group's sockets with sendmmsg(2)
// from buffers built once: unlike udp.Sender (whose netpoller wait
// allocates) it allocates nothing per call, so it can refill sockets inside
// AllocsPerRun without hiding the Step's own allocations.
type rawSender struct {
	fd   int
	sas  []unix.RawSockaddrInet4
	buf  []byte
	iov  unix.Iovec
	hdrs []mmsghdr
	seq  uint64
}

// mmsghdr is struct mmsghdr of sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

func newRawSender(t testing.TB, g *udp.Group) *rawSender {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	s := &rawSender{fd: fd, buf: make([]byte, 64), sas: make([]unix.RawSockaddrInet4, len(g.Addrs())), hdrs: make([]mmsghdr, len(g.Addrs()))}
	s.iov.Base = &s.buf[0]
	s.iov.SetLen(len(s.buf))
	for i, ap := range g.Addrs() {
		s.sas[i].Family = unix.AF_INET
		s.sas[i].Addr = ap.Addr().As4()
		p := (*[2]byte)(unsafe.Pointer(&s.sas[i].Port))
		p[0], p[1] = byte(ap.Port()>>8), byte(ap.Port())
		s.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&s.sas[i]))
		s.hdrs[i].hdr.Namelen = unix.SizeofSockaddrInet4
		s.hdrs[i].hdr.Iov = &s.iov
		s.hdrs[i].hdr.SetIovlen(1)
	}
	return s
}

// send delivers message seq to every socket (all share one buffer, so one
// sequence number per round) and returns how many were sent.
func (s *rawSender) send() int {
	udp.PutHeader(s.buf, udp.Header{Seq: s.seq, SentNs: rt.Monotonic()})
	s.seq++
	n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&s.hdrs[0])), uintptr(len(s.hdrs)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

func TestDrainStepAllocsData(t *testing.T) {
	// Each run sends one message to each of the 450 sockets with a
	// non-allocating sendmmsg, then Steps: every Step reads 450 messages
	// (data path, header check, Delay record) and 450 EAGAINs. The totals
	// checked afterwards prove the data path ran in every run.
	g, _ := openGroup(t, seedCount)
	tx := newRawSender(t, g)
	d := newDrain(t, g.FDs(), udp.NewRecvFrom(2048))
	d.Measure = true
	sent, short := 0, 0
	a := testing.AllocsPerRun(100, func() {
		n := tx.send()
		sent += n
		if n != seedCount {
			short++
		}
		d.Step()
	})
	if a != 0 {
		t.Errorf("send+Step allocs %v per run, want 0", a)
	}
	c := d.Counts()
	if short != 0 || sent != 101*seedCount {
		t.Fatalf("sent %d (%d short rounds), want %d", sent, short, 101*seedCount)
	}
	// Loopback delivery completes inside sendmmsg, so each Step saw its round;
	// allow a straggler or two to show up one Step late, but not missing.
	d.Step()
	if c = d.Counts(); c.Messages != uint64(sent) || c.Lost != 0 || c.Reordered != 0 {
		t.Errorf("Counts = %+v; want %d messages, none lost or reordered", c, sent)
	}
	if c.Data != uint64(sent) || lin(d, record.CallData).Total() != uint64(sent) {
		t.Errorf("Data calls %d, Data histogram %d; want %d", c.Data, lin(d, record.CallData).Total(), sent)
	}
	// One message per socket per Step: data then a warm EAGAIN on each
	// socket; the classes partition All, and so do the positions.
	if lin(d, record.CallWarm).Total()+lin(d, record.CallCold).Total() != c.EAGAIN || lin(d, record.CallData).Total()+lin(d, record.CallWarm).Total()+lin(d, record.CallCold).Total() != lin(d, record.CallAll).Total() {
		t.Errorf("Data %d + Warm %d + Cold %d != All %d (EAGAIN %d)", lin(d, record.CallData).Total(), lin(d, record.CallWarm).Total(), lin(d, record.CallCold).Total(), lin(d, record.CallAll).Total(), c.EAGAIN)
	}
	if lin(d, record.CallWarm).Total() < uint64(sent)-seedCount {
		t.Errorf("Warm %d; want about %d (one per message)", lin(d, record.CallWarm).Total(), sent)
	}
	if lin(d, record.CallFirst).Total()+lin(d, record.CallRest).Total() != lin(d, record.CallAll).Total() || lin(d, record.CallFirst).Total() != 102*probe.FirstCalls {
		t.Errorf("First %d + Rest %d vs All %d; want First %d", lin(d, record.CallFirst).Total(), lin(d, record.CallRest).Total(), lin(d, record.CallAll).Total(), 102*probe.FirstCalls)
	}
}

func TestLoop(t *testing.T) {
	// A 1 ms ticker on a plain goroutine (not real-time) over 3 fake empty
	// sockets: ticks 0–4 warm up, 5–24 are measured, 25–29 are tail, and
	// HardStop ends the loop at tick 29's deadline. The ticker catches up
	// with no backlog limit rather than skipping, so a preemption of this
	// non-RT goroutine (or
	// another process's RT thread on the CPU) delays ticks but cannot drop
	// one from the measured window: the counts below are exact.
	rx := &fakeRx{q: map[int][][]byte{}}
	d := newDrain(t, []int{1, 2, 3}, rx)
	tk := rt.NewTicker(rt.Monotonic()+2*int64(time.Millisecond), int64(time.Millisecond), true)
	tk.SetMaxBacklog(1 << 40) // never skips, however long the goroutine is off its CPU
	l := &probe.Loop{
		Ticker: tk, Probe: d, Drain: d,
		MeasureFrom: tk.Deadline(5), MeasureUntil: tk.Deadline(25), HardStop: tk.Deadline(29),
		Wakeups: record.NewRing[record.Wakeup](64), Rec: &probe.Recorders{Set: d.Set()},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // getrusage(RUSAGE_THREAD) counts one thread's switches
		defer runtime.UnlockOSThread()
		l.Run()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		l.Stop.Store(true)
		t.Fatal("Loop.Run did not end by HardStop within 10 s")
	}
	if l.Errno != 0 {
		t.Fatalf("Errno %v", unix.Errno(l.Errno))
	}
	if l.MeasuredTicks != 20 || l.MissedTicks != 0 {
		t.Errorf("MeasuredTicks %d (missed %d), want 20 (0)", l.MeasuredTicks, l.MissedTicks)
	}
	var wakeups []record.Wakeup
	l.Wakeups.Drain(func(w *record.Wakeup) { wakeups = append(wakeups, *w) })
	if uint64(len(wakeups)) != l.MeasuredTicks || l.Wakeups.Dropped() != 0 {
		t.Errorf("%d wakeups logged (%d dropped), want %d", len(wakeups), l.Wakeups.Dropped(), l.MeasuredTicks)
	}
	if n := l.Rec.Set.HDR(record.WakeupLatency).Histogram().TotalCount(); uint64(n) != l.MeasuredTicks {
		t.Errorf("Latency count %d, MeasuredTicks %d", n, l.MeasuredTicks)
	}
	if n := l.Rec.Set.HDR(record.DrainTime).Histogram().TotalCount(); uint64(n) != l.MeasuredTicks {
		t.Errorf("DrainTime count %d, MeasuredTicks %d", n, l.MeasuredTicks)
	}
	// A preemption of this goroutine makes the ticks after it run back to
	// back: overruns, each at least a period late.
	late := uint64(0)
	for _, w := range wakeups {
		if w.LatencyNs >= int64(time.Millisecond) {
			late++
		}
	}
	if l.Overruns > late {
		t.Errorf("%d overruns, but only %d wakeups a period or more late", l.Overruns, late)
	}
	for i, w := range wakeups {
		if w.Tick != uint64(5+i) || w.DeadlineNs != tk.Deadline(w.Tick) ||
			w.LatencyNs < 0 || w.Calls != 3 || w.EAGAIN != 3 || w.Messages != 0 {
			t.Errorf("wakeup %d = %+v", i, w)
		}
	}
	// A tick whose Wait began before its deadline slept in
	// clock_nanosleep: a voluntary switch, which the per-wakeup
	// getrusage(RUSAGE_THREAD) read must see. (Which ticks those are is
	// the machine's doing: a tick that ran late after a preemption, with
	// the next deadline already past, does not sleep. A tick the thread
	// was preempted in, InvolCS > 0, may have entered its Wait late; so
	// may the tick after one preempted between its wake stamp and its
	// drain: that time is in neither its LatencyNs nor its DrainNs, and
	// its switch is counted in its own record, not the next one's.)
	slept, seen := 0, 0
	for i := 1; i < len(wakeups); i++ {
		prev, w := wakeups[i-1], wakeups[i]
		if prev.DeadlineNs+prev.LatencyNs+prev.DrainNs+50_000 < w.DeadlineNs && w.InvolCS == 0 && prev.InvolCS == 0 {
			slept++
			if w.VolCS > 0 {
				seen++
			}
		}
	}
	if seen != slept {
		t.Errorf("%d of %d wakeups that slept carry a voluntary switch; want all", seen, slept)
	}
	if slept == 0 {
		t.Logf("no tick slept (every one began its wait late or was preempted): the switch counts went unchecked")
	}
	// Measure followed the phase: only measured ticks reached the histograms.
	if c := d.Counts(); c.Calls != 3*l.MeasuredTicks || lin(d, record.CallAll).Total() != c.Calls {
		t.Errorf("Drain measured %d calls (All %d), want 3 × %d", c.Calls, lin(d, record.CallAll).Total(), l.MeasuredTicks)
	}
	if d.Measure {
		t.Error("Drain.Measure still set after the measured window")
	}
	if l.Ticks != 30 {
		t.Errorf("Ticks %d; want 5 warm-up + 20 measured + 5 tail = 30", l.Ticks)
	}
}

// stallProbe is a Ticked probe whose every 8th Step busy-waits 4 ms.
type stallProbe struct{ n, stalls int }

func (p *stallProbe) Step() {
	if p.n++; p.n%8 == 0 {
		p.stalls++
		for end, i := rt.Monotonic()+4*int64(time.Millisecond), 0; i < 1e9 && rt.Monotonic() < end; i++ {
		}
	}
}

func (p *stallProbe) LastTick() probe.Tick { return probe.Tick{} }

func TestLoopMissedSumsToMissedTicks(t *testing.T) {
	// A 1 ms loop whose probe stalls 4 ms every 8th tick: every stall is
	// an overrun. Skip mode misses the ticks; catch-up with a backlog
	// limit of 2 must skip them too. Either way the wakeup log's missed
	// column sums to the loop's MissedTicks, less those missed at the end
	// (a stall across the window's end), and every one of the window's 80
	// deadlines is run or missed.
	for _, catchUp := range []bool{false, true} {
		t.Run(map[bool]string{false: "skip", true: "catchup"}[catchUp], func(t *testing.T) {
			ms := int64(time.Millisecond)
			tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, catchUp)
			tk.SetMaxBacklog(2)
			p := &stallProbe{}
			l := &probe.Loop{Ticker: tk, Probe: p,
				MeasureFrom: tk.Deadline(4), MeasureUntil: tk.Deadline(84), HardStop: tk.Deadline(84),
				Wakeups: record.NewRing[record.Wakeup](128), Rec: probe.NewRecorders(seedLayout)}
			runBoundedLoop(t, l)
			var sum uint64
			l.Wakeups.Drain(func(w *record.Wakeup) { sum += uint64(w.Missed) })
			st := tk.Stats()
			if sum+l.MissedAtEnd != l.MissedTicks || l.MissedTicks == 0 || l.MissedTicks > st.MissedTicks {
				t.Errorf("wakeups' missed sum to %d (+ %d at the end), loop MissedTicks %d (ticker %d); want equal, > 0", sum, l.MissedAtEnd, l.MissedTicks, st.MissedTicks)
			}
			if n := l.MeasuredTicks + l.MissedTicks; n != 80 {
				t.Errorf("wakeups %d + missed %d = %d, want the window's 80 deadlines", l.MeasuredTicks, l.MissedTicks, n)
			}
			// Every stall but one at the very end makes the next tick an
			// overrun (the goroutine's preemptions may make more; how many
			// stalls the window holds depends on how long the goroutine
			// was kept off its CPU).
			if l.Overruns > st.Overruns || st.Overruns+1 < uint64(p.stalls) {
				t.Errorf("loop overruns %d, ticker %d, after %d stalls; want loop ≤ ticker, ticker ≥ stalls-1", l.Overruns, st.Overruns, p.stalls)
			}
			if catchUp && st.BacklogSkips == 0 {
				t.Errorf("catch-up ticker %+v: no backlog skip", st)
			}
		})
	}
}

func TestLoopStop(t *testing.T) {
	// Stop set before Run: one tick, one Step, then out.
	d := newDrain(t, []int{1}, &fakeRx{q: map[int][][]byte{}})
	tk := rt.NewTicker(rt.Monotonic(), int64(time.Millisecond), false)
	l := &probe.Loop{Ticker: tk, Probe: d, Drain: d, HardStop: tk.Deadline(1000),
		Wakeups: record.NewRing[record.Wakeup](4), Rec: &probe.Recorders{Set: d.Set()}}
	l.Stop.Store(true)
	l.Run()
	if l.Ticks != 1 || d.LastTick().Calls != 1 {
		t.Errorf("Ticks %d, last Step calls %d; want 1, 1", l.Ticks, d.LastTick().Calls)
	}
}

// TestLoopHandoff runs a loop with 5 ms intervals against a writer
// goroutine that takes, reads and gives back sets the way engine's writer
// does. Every wakeup is a spike (threshold 1 ns), and the ticker starts 10
// periods in the past, so the first Wait skips ticks. Each handed-over set
// must carry the loop's cumulative counters (the writer never reads the
// Loop's fields while it runs, except the atomic BrokeAt: -race checks), and
// Final's ToNs must be the last tick's deadline, skipped ticks included.
func TestLoopHandoff(t *testing.T) {
	rx := &fakeRx{q: map[int][][]byte{}}
	cur, spare := probe.NewRecorders(seedLayout), probe.NewRecorders(seedLayout)
	d := probe.NewDrain(probe.DrainConfig{FDs: []int{1}, Receiver: rx, Clock: clock(t), Set: cur.Set})
	ms := int64(time.Millisecond)
	tk := rt.NewTicker(rt.Monotonic()-10*ms, ms, false)
	h := probe.NewHandoff(spare)
	l := &probe.Loop{Ticker: tk, Probe: d, Drain: d,
		MeasureFrom: tk.Deadline(0), MeasureUntil: tk.Deadline(40), HardStop: tk.Deadline(44),
		Wakeups: record.NewRing[record.Wakeup](256), Interval: 5 * ms, Handoff: h, Rec: cur, Threshold: 1,
		BreakTrace: true} // no trace fds: only BrokeAt is set, which the writer reads while the loop runs
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	type seen struct {
		from, to     int64
		ticks, spike uint64
		latency      int64
	}
	var sets []seen
	var brokeAt int64
	deadline := time.Now().Add(10 * time.Second)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		brokeAt = l.BrokeAt.Load() // as engine's writer does for each spike
		if set := h.Take(); set != nil {
			sets = append(sets, seen{set.FromNs, set.ToNs, set.Ticks, set.Spikes, set.Set.HDR(record.WakeupLatency).Count()})
			set.Set.Reset()
			h.Give(set)
		}
		if time.Now().After(deadline) {
			l.Stop.Store(true)
			<-done
			t.Fatal("Loop.Run did not end by HardStop within 10 s")
		}
		runtime.Gosched() // poll again for the next set
	}
	if l.Errno != 0 {
		t.Fatalf("Errno %v", unix.Errno(l.Errno))
	}
	final := l.Final()
	sets = append(sets, seen{final.FromNs, final.ToNs, final.Ticks, final.Spikes, final.Set.HDR(record.WakeupLatency).Count()})
	if l.MeasuredTicks == 0 {
		// The goroutine (not real-time) was kept off its CPU past the
		// window's end before its first Wait, which skipped the whole
		// window (once under load: one set, 0 ticks). That is the
		// machine's; the identity still holds: each of the window's 40
		// deadlines is missed, and nothing was handed over.
		if l.MissedTicks != 40 || len(sets) != 1 {
			t.Errorf("no tick measured: missed %d of the window's 40 deadlines, %d sets; want 40, 1", l.MissedTicks, len(sets))
		}
		t.Logf("the first Wait skipped the whole window: %+v", sets)
		return
	}
	if len(sets) < 2 && h.Late.Load() == 0 {
		t.Fatalf("%d sets in a 30 ms window with 5 ms intervals and no late handoff: %+v", len(sets), sets)
	}
	var prev seen
	var latencies int64
	for i, s := range sets {
		if s.ticks < prev.ticks || s.spike < prev.spike || s.to < s.from || (i > 0 && s.from != prev.to) {
			t.Errorf("set %d %+v after %+v: counters must be cumulative, ToNs ≥ FromNs, FromNs the previous ToNs", i, s, prev)
		}
		latencies += s.latency
		prev = s
	}
	if final.Spikes != l.Spikes || final.Ticks != l.MeasuredTicks || uint64(latencies) != l.MeasuredTicks {
		t.Errorf("final spikes %d ticks %d, loop %d %d; latency samples %d over all sets",
			final.Spikes, final.Ticks, l.Spikes, l.MeasuredTicks, latencies)
	}
	// Every wakeup over the 1 ns threshold is a spike: all of them, in
	// practice (a wake stamp taken across a preemption may come out a few
	// hundred ns off, see rt.Ticker.Wait, so the count is checked against
	// the log, not assumed). The first spike broke the trace.
	var first int64
	var rows []record.Wakeup
	var over uint64
	l.Wakeups.Drain(func(w *record.Wakeup) {
		if w.LatencyNs > 1 {
			if first == 0 {
				first = w.DeadlineNs
			}
			over++
		}
		rows = append(rows, *w)
	})
	if l.Spikes != over || over == 0 {
		t.Errorf("Spikes %d; the log has %d wakeups over the 1 ns threshold (of %d)", l.Spikes, over, len(rows))
	}
	// Replay the handoffs from the wakeup log: from the first interval's
	// end on, every measured tick tries one until it succeeds, and each
	// try either hands the set over (a set ends at that tick's deadline)
	// or finds the writer late (Late). How many of each is the writer's
	// and the machine's doing; that they add up is the loop's.
	next, handed, late := tk.Deadline(0)+5*ms, 0, uint64(0)
	for _, w := range rows {
		if w.DeadlineNs < next {
			continue
		}
		if handed < len(sets)-1 && sets[handed].to == w.DeadlineNs {
			handed++
			for next <= w.DeadlineNs {
				next += 5 * ms
			}
		} else {
			late++
		}
	}
	if handed != len(sets)-1 || late != h.Late.Load() {
		t.Errorf("replayed %d handoffs and %d late tries from the wakeup log; the writer took %d sets, the loop counted %d late",
			handed, late, len(sets)-1, h.Late.Load())
	}
	if got := l.BrokeAt.Load(); got == 0 || got != first || brokeAt != 0 && brokeAt != got {
		t.Errorf("BrokeAt %d (writer saw %d); want the first spike's deadline %d", got, brokeAt, first)
	}
	if final.ToNs < tk.Deadline(44) || l.MissedTicks == 0 {
		t.Errorf("final ToNs %d, HardStop %d, missed %d; want the last tick's deadline ≥ HardStop after skipped ticks",
			final.ToNs, tk.Deadline(44), l.MissedTicks)
	}
}

// TestDeadlinesIn counts the deadlines of an arithmetic run that fall in a
// window [from, until): the window's edges, a run straddling either edge
// or both, and runs wholly outside.
func TestDeadlinesIn(t *testing.T) {
	for _, tc := range []struct {
		name                string
		first               int64
		n                   uint64
		period, from, until int64
		want                uint64
	}{
		{"none", 100, 0, 10, 0, 1000, 0},
		{"all inside", 100, 5, 10, 0, 1000, 5},                   // 100…140
		{"before the window", 0, 5, 10, 100, 200, 0},             // 0…40
		{"after the window", 200, 5, 10, 100, 200, 0},            // 200…240: until is outside
		{"across the start", 80, 5, 10, 100, 200, 3},             // 80 90 | 100 110 120
		{"across the end", 170, 5, 10, 100, 200, 3},              // 170 180 190 | 200 210
		{"across both", 50, 20, 10, 100, 200, 10},                // 100…190
		{"from falls between deadlines", 95, 3, 10, 100, 200, 2}, // 95 | 105 115
		{"last one on until", 180, 3, 10, 100, 200, 2},           // 180 190 | 200
		{"one on from", 100, 1, 10, 100, 200, 1},
		{"empty window", 100, 5, 10, 150, 150, 0},
		{"a soak's far until", 0, 1 << 40, 250_000, 0, math.MaxInt64 / 4, 1 << 40},
	} {
		if got := probe.DeadlinesIn(tc.first, tc.n, tc.period, tc.from, tc.until); got != tc.want {
			t.Errorf("%s: DeadlinesIn(%d, %d, %d, [%d, %d)) = %d, want %d", tc.name, tc.first, tc.n, tc.period, tc.from, tc.until, got, tc.want)
		}
	}
}

// stopAfter is a Ticked probe that busy-waits busy on each Step and sets
// stop after n Steps.
type stopAfter struct {
	n, steps int
	busy     int64
	stop     *probe.Flag
}

func (p *stopAfter) Step() {
	for end, i := rt.Monotonic()+p.busy, 0; i < 1e9 && rt.Monotonic() < end; i++ {
	}
	if p.steps++; p.steps == p.n {
		p.stop.Store(true)
	}
}

func (p *stopAfter) LastTick() probe.Tick { return probe.Tick{} }

// TestLoopWindowEdges: wakeups + missed ticks is exactly the window's
// deadlines, whatever the thread was doing at the window's edges. A ticker
// started in the past makes the first Wait skip across an edge; a catch-up
// reader that cannot keep up leaves deadlines due when it stops. Missed
// deadlines outside the window are not the window's; those no measured
// tick could record are MissedAtEnd, in no wakeup record.
func TestLoopWindowEdges(t *testing.T) {
	ms := int64(time.Millisecond)
	run := func(t *testing.T, l *probe.Loop) (missedInLog uint64, rows int) {
		t.Helper()
		runBoundedLoop(t, l)
		l.Wakeups.Drain(func(w *record.Wakeup) { missedInLog += uint64(w.Missed); rows++ })
		if l.Errno != 0 || l.Wakeups.Dropped() != 0 || uint64(rows) != l.MeasuredTicks {
			t.Fatalf("errno %d, %d records dropped, %d rows for %d wakeups", l.Errno, l.Wakeups.Dropped(), rows, l.MeasuredTicks)
		}
		return missedInLog, rows
	}
	t.Run("skip across the window's end", func(t *testing.T) {
		// Tick 0 was due 40 ms ago: the first Wait skips to tick ~40, past
		// the whole window (ticks 5–19). Its 15 deadlines are missed at
		// the end; nothing was measured.
		tk := rt.NewTicker(rt.Monotonic()-40*ms, ms, false)
		l := &probe.Loop{Ticker: tk, Probe: &stallProbe{}, MeasureFrom: tk.Deadline(5), MeasureUntil: tk.Deadline(20), HardStop: tk.Deadline(45),
			Wakeups: record.NewRing[record.Wakeup](64), Rec: probe.NewRecorders(seedLayout)}
		run(t, l)
		if l.MeasuredTicks != 0 || l.MissedTicks != 15 || l.MissedAtEnd != 15 || l.WarmupTicks != 0 || l.TailTicks == 0 {
			t.Errorf("wakeups %d, missed %d (%d at the end), %d warm-up and %d tail ticks; want 0, 15 (15), 0, > 0",
				l.MeasuredTicks, l.MissedTicks, l.MissedAtEnd, l.WarmupTicks, l.TailTicks)
		}
	})
	t.Run("skip across the window's start", func(t *testing.T) {
		// Tick 0 was due 10 ms ago, the window begins at tick 5: the first
		// Wait skips ticks 0 to ~9, of which only 5 and on are the window's.
		tk := rt.NewTicker(rt.Monotonic()-10*ms, ms, false)
		l := &probe.Loop{Ticker: tk, Probe: &stallProbe{}, MeasureFrom: tk.Deadline(5), MeasureUntil: tk.Deadline(60), HardStop: tk.Deadline(64),
			Wakeups: record.NewRing[record.Wakeup](128), Rec: probe.NewRecorders(seedLayout)}
		inLog, _ := run(t, l)
		if n := l.MeasuredTicks + l.MissedTicks; n != 55 || inLog+l.MissedAtEnd != l.MissedTicks || l.MissedTicks == 0 {
			t.Errorf("wakeups %d + missed %d = %d (log %d, at the end %d); want the window's 55 deadlines, the log's and the end's summing to missed",
				l.MeasuredTicks, l.MissedTicks, n, inLog, l.MissedAtEnd)
		}
	})
	t.Run("catch-up behind when it stops", func(t *testing.T) {
		// 3 ms of work every 1 ms, never skipping: the 14th Step sets Stop,
		// so after 15 ticks (45 ms) it stops with ticks 15–19 of the
		// 20-tick window still due.
		tk := rt.NewTicker(rt.Monotonic()+2*ms, ms, true)
		tk.SetMaxBacklog(1 << 40)
		l := &probe.Loop{Ticker: tk, MeasureFrom: tk.Deadline(0), MeasureUntil: tk.Deadline(20), HardStop: tk.Deadline(1000),
			Wakeups: record.NewRing[record.Wakeup](64), Rec: probe.NewRecorders(seedLayout)}
		l.Probe = &stopAfter{n: 14, busy: 3 * ms, stop: &l.Stop}
		inLog, _ := run(t, l)
		if l.MeasuredTicks != 15 || inLog != 0 || l.MissedTicks != 5 || l.MissedAtEnd != 5 {
			t.Errorf("wakeups %d, missed %d in the log, %d in all (%d at the end); want 15, 0, 5 (5)", l.MeasuredTicks, inLog, l.MissedTicks, l.MissedAtEnd)
		}
	})
}
