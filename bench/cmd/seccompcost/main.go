// Command seccompcost measures what a seccomp filter adds to a system
// call's cost on a reader-like thread, in-process and interleaved (issue
// 31: which filter gives a +5–8% per-call change, and the entry-change
// case of the drift controls). One thread per filter, each pinned to the
// same CPU at SCHED_FIFO (as a reader), the filter installed on it as
// rtload installs a reader's (rt/seccomp); the threads take turns in
// blocks, each block next to one of the unfiltered thread's in ABBA
// order, and each block times -k calls of each class in one batch:
//
//   - getppid: the null system call (the drift control's);
//   - recvfrom-eagain: recvfrom(2) on an empty UDP socket (EAGAIN);
//   - user-loop: a fixed user-space loop, which no filter should move.
//
// The change of each filter against none is stats.Paired over the block
// pairs (Student's t over batch means of log ratios). A block is short
// and the thread sleeps -gap between blocks, so the CPU is mostly left to
// others; -pairs bounds the run.
//
//	make bench-bin && bin/seccompcost -cpu 1 -pairs 300
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/rt/seccomp"
	"github.com/rtload/rtload/stats"
)

func init() { runtime.LockOSThread() } // main stays on the main thread (cmd/rtload does the same)

// classes are the timed calls of a block, in order.
var classes = []string{"getppid", "recvfrom-eagain", "user-loop"}

// request asks a thread for one block; the reply is the mean ns per call
// of each class.
type request struct{ reply chan [3]float64 }

// filtered is one thread under one filter.
type filtered struct {
	name string
	req  chan request
}

var sink uint64

//go:noinline
func userLoop(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func main() {
	cpu := flag.Int("cpu", 1, "CPU every thread is pinned to")
	prio := flag.Int("priority", 80, "SCHED_FIFO priority of the threads")
	k := flag.Int("k", 400, "calls of each class per block")
	pairs := flag.Int("pairs", 300, "block pairs per filter")
	gap := flag.Duration("gap", 8*time.Millisecond, "sleep between two blocks")
	lens := flag.String("allow-all", "4,5,64,256,1024", "allow-all lengths to measure (instructions, comma-separated)")
	flag.Parse()

	cfgs := []seccomp.Config{{Profile: seccomp.None}, {Profile: seccomp.RuntimeDefault}}
	for _, s := range strings.Split(*lens, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fail(fmt.Errorf("-allow-all %q: %v", s, err))
		}
		cfgs = append(cfgs, seccomp.Config{Profile: seccomp.AllowAll, Instructions: n})
	}
	g, err := udp.Open(udp.Config{Count: 1, Addr: netip.MustParseAddr("127.0.0.1")})
	if err != nil {
		fail(err)
	}
	defer g.Close()
	fd := g.FDs()[0]

	var threads []*filtered
	for _, c := range cfgs {
		f, err := start(c, *cpu, *prio, fd, *k)
		if err != nil {
			fail(err)
		}
		threads = append(threads, f)
	}
	defer func() {
		for _, f := range threads {
			close(f.req)
		}
	}()

	// ABBA: pair i of filter j runs (none, j) for even i, (j, none) for odd.
	base := make([][][3]float64, len(threads)) // [filter][pair] none's block
	with := make([][][3]float64, len(threads)) // [filter][pair] the filter's block
	block := func(f *filtered) [3]float64 {
		r := request{reply: make(chan [3]float64)}
		f.req <- r
		v := <-r.reply
		time.Sleep(*gap)
		return v
	}
	for i := range *pairs {
		for j := 1; j < len(threads); j++ {
			var a, b [3]float64
			if i%2 == 0 {
				a, b = block(threads[0]), block(threads[j])
			} else {
				b, a = block(threads[j]), block(threads[0])
			}
			base[j] = append(base[j], a)
			with[j] = append(with[j], b)
		}
	}
	fmt.Printf("seccomp cost on CPU %d, SCHED_FIFO %d: %d calls per class per block, %d ABBA block pairs per filter, %s between blocks\n",
		*cpu, *prio, *k, *pairs, *gap)
	fmt.Printf("%-24s", "filter (instructions)")
	for _, c := range classes {
		fmt.Printf("  %-34s", c+" ns/call, change [95% CI]")
	}
	fmt.Println()
	for j := range threads {
		fmt.Printf("%-24s", threads[j].name)
		for c := range classes {
			if j == 0 {
				var all []float64
				for jj := 1; jj < len(threads); jj++ {
					for _, v := range base[jj] {
						all = append(all, v[c])
					}
				}
				fmt.Printf("  %-34s", fmt.Sprintf("%.1f", stats.Median(all)))
				continue
			}
			var a, b []float64
			for i := range base[j] {
				a, b = append(a, base[j][i][c]), append(b, with[j][i][c])
			}
			ch := stats.Paired(a, b)
			fmt.Printf("  %-34s", fmt.Sprintf("%.1f, %+.1f%% [%+.1f, %+.1f]", stats.Median(b), 100*ch.Point, 100*ch.Lo, 100*ch.Hi))
		}
		fmt.Println()
	}
}

// start starts the thread of filter c: pinned to cpu at SCHED_FIFO prio,
// the filter installed there, then serving blocks until its request
// channel closes; it exits with its goroutine.
func start(c seccomp.Config, cpu, prio, fd, k int) (*filtered, error) {
	f, err := seccomp.New(c)
	if err != nil {
		return nil, err
	}
	name := c.Profile.String()
	if c.Profile == seccomp.AllowAll {
		name += " " + strconv.Itoa(c.Instructions)
	}
	name += fmt.Sprintf(" (%d)", f.Len())
	ft := &filtered{name: name, req: make(chan request)}
	rx, err := udp.NewReceiverAt(udp.MethodRecvFrom, 2048, 1, 0)
	if err != nil {
		return nil, err
	}
	setup := func(a rt.Applied) error {
		got, err := f.Install(a.TID)
		if err == nil && got != nil && got.NotAsAsked != "" {
			err = fmt.Errorf("%s: %s", name, got.NotAsAsked)
		}
		return err
	}
	_, _, err = rt.Start(rt.Sched{Name: "rtl-sc/" + c.Profile.String(), CPUs: []int{cpu}, Policy: rt.FIFO, Priority: prio}, setup, func(rt.Applied) {
		for r := range ft.req {
			var out [3]float64
			t0 := rt.Monotonic()
			for range k {
				syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
			}
			t1 := rt.Monotonic()
			for range k {
				if _, _, errno := rx.Recv(fd); errno != syscall.EAGAIN {
					panic(fmt.Sprintf("recvfrom on an empty socket: errno %v", errno))
				}
			}
			t2 := rt.Monotonic()
			for range k {
				userLoop(100)
			}
			t3 := rt.Monotonic()
			out[0], out[1], out[2] = float64(t1-t0)/float64(k), float64(t2-t1)/float64(k), float64(t3-t2)/float64(k)
			r.reply <- out
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ft, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "seccompcost:", err)
	os.Exit(1)
}
