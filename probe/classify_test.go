package probe_test

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/record"
)

// TestClassify checks each call's class and position bucket.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name                    string
		pos                     uint32
		errno                   unix.Errno
		got                     bool
		warm, cold, first, rest uint64
	}{
		{"first call, data", 0, 0, false, 0, 0, 1, 0},
		{"third call, cold EAGAIN", probe.FirstCalls - 1, unix.EAGAIN, false, 0, 1, 1, 0},
		{"fourth call, warm EAGAIN", probe.FirstCalls, unix.EAGAIN, true, 1, 0, 0, 1},
		{"later call, data after data", 100, 0, true, 0, 0, 0, 1},
		{"other error: no class but position", 5, unix.ECONNREFUSED, false, 0, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := probe.NewDrain(probe.DrainConfig{Set: record.NewSet(record.Layout{Width: 1, Overflow: 10})})
			d.Classify(c.pos, 7, c.errno, c.got)
			got := [4]uint64{lin(d, record.CallWarm).Total(), lin(d, record.CallCold).Total(), lin(d, record.CallFirst).Total(), lin(d, record.CallRest).Total()}
			if want := [4]uint64{c.warm, c.cold, c.first, c.rest}; got != want {
				t.Errorf("warm, cold, first, rest = %v; want %v", got, want)
			}
		})
	}
	// Classes left out of the set are skipped (drains built without context).
	probe.NewDrain(probe.DrainConfig{Set: record.NewSetOf(seedLayout, nil)}).Classify(0, 1, unix.EAGAIN, true)
}

func TestClassifyAllocs(t *testing.T) {
	d := probe.NewDrain(probe.DrainConfig{Set: record.NewSet(seedLayout)})
	if a := testing.AllocsPerRun(100, func() { d.Classify(4, 1400, unix.EAGAIN, true) }); a != 0 {
		t.Errorf("classify allocs %v, want 0", a)
	}
}

// BenchmarkClassify is the cost the per-call context adds to each measured
// recv call (two histogram records and the branches choosing them),
// outside the timed call.
func BenchmarkClassify(b *testing.B) {
	d := probe.NewDrain(probe.DrainConfig{Set: record.NewSet(seedLayout)})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		errno := unix.Errno(0)
		if i&1 == 1 {
			errno = unix.EAGAIN
		}
		d.Classify(uint32(i&7), uint64(i&4095)+1000, errno, i&2 == 2)
	}
}

// BenchmarkDrainStepContext drains 450 empty sockets per op with and
// without the context histograms; ns/call is the per-call cost, so the
// difference between the two is what the classification adds per call.
func BenchmarkDrainStepContext(b *testing.B) {
	g, _ := openGroup(b, seedCount)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			set := record.NewSet(seedLayout)
			if !on {
				set = record.NewSetOf(seedLayout, []record.Class{record.CallAll, record.CallData, record.CallEAGAIN, record.OneWayDelay})
			}
			d := probe.NewDrain(probe.DrainConfig{FDs: g.FDs(), Receiver: udp.NewRecvFrom(2048), Clock: clock(b), Set: set})
			d.Measure = true
			b.ReportAllocs()
			for b.Loop() {
				d.Step()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*seedCount), "ns/call")
		})
	}
}

// TestThreadSwitches checks getrusage(RUSAGE_THREAD): a sleep is a
// voluntary switch of the calling thread, and the read allocates nothing.
func TestThreadSwitches(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ru unix.Rusage
	v0, _, errno := probe.ThreadSwitches(&ru)
	if errno != 0 {
		t.Fatal(os.NewSyscallError("getrusage", errno))
	}
	unix.Nanosleep(&unix.Timespec{Nsec: 1e6}, nil)
	if v1, _, _ := probe.ThreadSwitches(&ru); v1 <= v0 {
		t.Errorf("voluntary switches %d → %d across a sleep; want more", v0, v1)
	}
	if a := testing.AllocsPerRun(100, func() { probe.ThreadSwitches(&ru) }); a != 0 {
		t.Errorf("allocs %v, want 0", a)
	}
}

// BenchmarkThreadSwitches is the per-tick cost of reading the reader
// thread's context switches (one getrusage(RUSAGE_THREAD) per wakeup).
func BenchmarkThreadSwitches(b *testing.B) {
	var ru unix.Rusage
	b.ReportAllocs()
	for b.Loop() {
		probe.ThreadSwitches(&ru)
	}
}
