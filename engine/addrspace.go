package engine

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// An address space that runs out part way is fatal in Go: a thread that
// cannot be made (pthread_create in a cgo build) or a heap arena that
// cannot be mapped ends the process with a runtime dump, no deferred
// cleanup, and a namespace left behind. So a run under RLIMIT_AS (ulimit
// -v) is checked against what it will map before anything exists, and
// refused with the numbers when it does not fit.

// heapReserve is the heap address space a run is given room for beyond
// what is mapped when it starts, besides memory noise and perThreadHeap:
// its buffers, histograms, logs and results, in the Go runtime's 64 MiB
// heap arenas. Measured (VmPeak − VmSize at start, a static build, 1 s
// trials): 2–5 MiB for laight-450-tap, qazi-fstime and tsirkin-tap,
// 68–79 MiB for timer-only, laight-450 and cook-hackbench (419 threads).
const heapReserve = 96 << 20

// perThreadHeap is what the Go runtime allocates from its heap per OS
// thread (the M, its 16 KiB g0 stack, twice that under the race detector,
// and its 32 KiB signal stack), rounded up.
const perThreadHeap = 64 << 10

// threadFactor is how many OS threads a run makes per P it sets
// (gomaxprocsBudget): threads blocked in syscalls hand their P to new
// ones (laight-450: 28 threads at most for a budget of 14, measured).
const threadFactor = 2

// guardBytes is a pthread stack's guard page.
const guardBytes = 4096

// addressNeed is what a run's address space will hold: what is mapped now,
// the stacks and malloc arenas of the threads still to be made (a glibc
// build only), the heap the run may grow, and the memory noise.
type addressNeed struct {
	now                 uint64
	threads             int    // threads still to be made
	stack               uint64 // bytes reserved per thread (0: Go's own thread stacks, from the heap)
	arenas              int    // glibc malloc arenas still to be made
	heap, noise, soakGC uint64
}

func (n addressNeed) total() uint64 {
	return n.now + uint64(n.threads)*n.stack + uint64(n.arenas)*sysinfo.GlibcArenaBytes + n.heap + n.noise + n.soakGC
}

// CheckAddressSpace refuses trials whose run would not fit this process's
// RLIMIT_AS (nothing to check when it is unlimited), before anything is
// built, with an *AddressSpaceError (rt.ErrNotSupported) naming the limit,
// the estimate and the value to raise it to. Run calls it; a caller
// creating files first (a results directory) calls it earlier.
func CheckAddressSpace(trials []scenario.Trial, opt Options) error {
	return checkAddressSpace(trials, soakHeadroom(opt.GCHeadroom), sysinfo.ReadAddressSpace(), runtime.NumCPU())
}

// addressSpaceNeed estimates the address space trials need on a machine
// of ncpu CPUs whose process maps a now, with soak trials letting their
// heap grow by headroom before collecting.
func addressSpaceNeed(trials []scenario.Trial, headroom uint64, a sysinfo.AddressSpace, ncpu int) addressNeed {
	threads := threadFactor * gomaxprocsBudget(trials, ncpu)
	n := addressNeed{now: a.VMSize, heap: heapReserve + uint64(threads)*perThreadHeap}
	if a.Glibc {
		n.threads = max(0, threads-a.Threads)
		n.stack = a.StackBytes + guardBytes
		n.arenas = min(n.threads, max(0, a.ArenaMax-(a.Threads-1))) // the main thread uses the main (brk) arena
	}
	for _, tr := range trials {
		mem, _ := noiseMemory(&tr.Spec)
		n.noise = max(n.noise, mem)
		if tr.Spec.Interval > 0 && !tr.Profiled {
			n.soakGC = headroom
		}
	}
	return n
}

// checkAddressSpace is CheckAddressSpace for the process a.
func checkAddressSpace(trials []scenario.Trial, headroom uint64, a sysinfo.AddressSpace, ncpu int) error {
	if a.Limit == 0 {
		return nil
	}
	n := addressSpaceNeed(trials, headroom, a, ncpu)
	if n.total() <= a.Limit {
		return nil
	}
	parts := []string{fmt.Sprintf("%.2fGiB", float64(n.now)/(1<<30)) + " mapped now (VmSize; the Go runtime reserves most of it at start)"}
	if n.threads > 0 {
		parts = append(parts, fmt.Sprintf("%d more threads' stacks of %s (RLIMIT_STACK: a cgo build's threads are pthreads)", n.threads, bytesText(n.stack-guardBytes)))
	}
	if n.arenas > 0 {
		parts = append(parts, fmt.Sprintf("%d glibc malloc arenas of %s (one per thread, up to MALLOC_ARENA_MAX)", n.arenas, bytesText(sysinfo.GlibcArenaBytes)))
	}
	parts = append(parts, bytesText(n.heap)+" of heap")
	if n.noise > 0 {
		parts = append(parts, bytesText(n.noise)+" of memory noise")
	}
	if n.soakGC > 0 {
		parts = append(parts, bytesText(n.soakGC)+" a soak's heap may grow before it collects")
	}
	raise := n.total() + n.total()/10
	gib := func(b uint64) string { return fmt.Sprintf("%.2fGiB", float64(b)/(1<<30)) }
	msg := fmt.Sprintf("address space: RLIMIT_AS (ulimit -v) is %s (%d KiB), and this run needs about %s: %s; raise the limit to at least %s (ulimit -v %d) or lift it (ulimit -v unlimited)",
		gib(a.Limit), a.Limit>>10, gib(n.total()), strings.Join(parts, ", "), gib(raise), raise>>10)
	if n.threads > 0 || n.arenas > 0 {
		msg += fmt.Sprintf("; a CGO_ENABLED=0 build (make build) makes its threads without pthread stacks or malloc arenas and needs about %s less", bytesText(uint64(n.threads)*n.stack+uint64(n.arenas)*sysinfo.GlibcArenaBytes))
	}
	return &AddressSpaceError{msg}
}

// AddressSpaceError is a run that would not fit RLIMIT_AS
// (CheckAddressSpace). It matches rt.ErrNotSupported (rtload exits 3).
type AddressSpaceError struct{ msg string }

func (e *AddressSpaceError) Error() string { return e.msg }

// Is matches rt.ErrNotSupported.
func (e *AddressSpaceError) Is(target error) bool { return target == rt.ErrNotSupported }
