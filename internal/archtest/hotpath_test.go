package archtest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// hotPath is every function a real-time reader runs between two sleeps.
// Each must be //go:nosplit (no stack-check prologue: no place where the Go
// runtime could preempt or grow the stack), and call only functions of
// this set or the allowed runtime/syscall leaves below.
var hotPath = []string{
	`probe.(*Loop).Run`, `probe.(*Loop).install`, `probe.(*Loop).handover`, `probe.(*Loop).breakTrace`, `probe.(*Handoff).swap`,
	`probe.(*Loop).nextBlock`, `probe.(*Loop).openBlock`, `probe.(*Loop).closeBlock`, `probe.(*Loop).tally`, `probe.(*Tally).add`,
	`probe.floorDiv`, `probe.mod`,
	`probe.(*Loop).end`, `probe.DeadlinesIn`, `rt.(*Ticker).Period`, `rt.(*Ticker).NextDeadline`,
	`probe.(*Flag).Load`, `probe.(*Int64).Load`, `probe.(*Int64).Store`, `probe.(*Uint64).Add`,
	`rt.(*Ticker).Overran`, `rt.(*Ticker).CatchUp`, `record.(*Ring).Put`,
	// A paced sender's loop, with its pacers and the UDP injector's common
	// path (called through interfaces, so listed to be checked).
	`engine.(*sender).loop`, `engine.(*sender).offset`, `engine.(*sender).dueAt`, `rt.SleepUntilRaw`,
	// The gate a reader or sender waits at before its loop.
	`probe.(*Gate).Wait`,
	`pace.Even.Next`, `pace.Even.Due`, `pace.Burst.Next`, `pace.Burst.Due`,
	`udp.(*Sender).Send`, `udp.(*Sender).sendmmsg`, `udp.PutHeader`, `probe.(*Uint64).Load`,
	`probe.(*Drain).Step`, `probe.(*Drain).drainTSC`, `probe.(*Drain).drainTSCFenced`, `probe.(*Drain).drainCycles`, `probe.(*Drain).drainMonotonic`,
	`probe.(*Drain).called`, `probe.(*Drain).events`, `probe.(*Drain).flush`,
	`probe.(*Drain).account`, `probe.(*Drain).sequence`, `probe.(*Drain).LastTick`, `probe.threadSwitches`,
	// The drift controls, after each tick's drain.
	`probe.(*Drain).ControlTick`, `probe.(*Drain).controlsTSC`, `probe.(*Drain).controlsTSCFenced`, `probe.(*Drain).controlsCycles`, `probe.(*Drain).controlsMonotonic`,
	`probe.(*Drain).flushControls`, `probe.nullSyscall`, `probe.userLoop`,
	// The cache-line ping (the reader's reads, the sender's Touch after
	// each batch) and the memory chase.
	`probe.(*Drain).extraControls`, `probe.(*Drain).pingTSC`, `probe.(*Drain).pingTSCFenced`, `probe.(*Drain).pingMonotonic`,
	`probe.(*Drain).chaseTSC`, `probe.(*Drain).chaseTSCFenced`, `probe.(*Drain).chaseMonotonic`, `probe.(*Drain).flushExtra`,
	`probe.(*PingLines).Touch`, `probe.(*PingLines).line`,
	// The recv control: the reader's own socket, its send and the
	// drain's receiver on it.
	`probe.(*Drain).recvTSC`, `probe.(*Drain).recvTSCFenced`, `probe.(*Drain).recvCycles`, `probe.(*Drain).recvMonotonic`,
	`probe.(*Drain).recvEmpty`, `probe.(*Drain).flushRecv`, `udp.(*Self).Send`, `udp.(*Self).FD`,
	`rt.(*Ticker).Wait`, `rt.(*Clock).Now`, `rt.Monotonic`, `rt.rdtscp`, `rt.rdpmc`, `rt.(*pmcReader).read`, `rt.(*Counters).ReadInto`,
	`rt.(*Ticker).advance`, `rt.sleepWake`, `rt.wakeLatency`, `rt.TSC`, `rt.(*Clock).Cycles`,
	// The TSC read where CPUID offers no RDTSCP (LFENCE;RDTSC;LFENCE).
	`rt.TSCFenced`, `rt.rdtscFenced`, `rt.sleepWakeFenced`, `rt.readTSC`,
	`record.(*Linear).Record`, `record.(*HDR).Record`, `record.(*HDR).RecordSigned`, `record.hdrIndex`,
	`record.(*Set).Record`, `record.(*Set).RecordSigned`, `record.(*Set).RecordEvent`,
	`udp.(*RecvFrom).Recv`, `udp.(*RecvFrom).Msg`, `udp.(*RecvMsg).Recv`, `udp.(*RecvMsg).Msg`,
	`udp.(*RecvMMsg).Recv`, `udp.(*RecvMMsg).Msg`, `udp.ReadHeader`,
}

// allowedCalls are callees outside the hot path that cannot preempt: the
// runtime's bounds-check panics and write barriers (assembly), the vDSO
// clock, raw system calls, sync/atomic's pointer operations (nosplit, in
// the runtime: checked below), the TSC and PMC reads (assembly), and the loop's
// one deliberate SafePoint. The user-page reader's indirect call to its
// test fake (nil in every reader rtload builds) is not a CALL to a symbol
// and is not listed.
var allowedCalls = regexp.MustCompile(`^(runtime\.(panic[A-Za-z0-9]*|gcWriteBarrier[0-9]*|nanotime|atomicwb)|syscall\.RawSyscall6?|golang\.org/x/sys/unix\.RawSyscall6?|internal/runtime/syscall(/linux)?\.Syscall6|sync/atomic\.(Swap|Store|Load|CompareAndSwap|Add)(Pointer|Uintptr|Uint64|Int64|Uint32|Int32)|github\.com/rtload/rtload/rt\.(rdtscp|rdtscFenced|rdpmc|sleepWake|sleepWakeFenced)|github\.com/rtload/rtload/probe\.SafePoint)(\.abi0)?$`)

// mustDisassemble are hot-path functions that must show up in the
// disassembly (never inlined away): the loop, the sleep and the assembly
// routines (listed by objdump with their .abi0 suffix), so that the test
// provably checked them.
var mustDisassemble = []string{`probe.(*Loop).Run`, `rt.(*Ticker).Wait`, `rt.sleepWake`, `rt.rdtscp`, `engine.(*sender).loop`, `udp.(*Sender).Send`,
	`rt.sleepWakeFenced`, `rt.rdtscFenced`, `probe.(*Drain).drainTSC`, `probe.(*Drain).drainTSCFenced`, `probe.(*Drain).drainCycles`, `probe.(*Drain).drainMonotonic`, `probe.(*Drain).flush`,
	`probe.(*Loop).nextBlock`, `probe.(*Loop).openBlock`, `probe.(*Loop).closeBlock`,
	`probe.(*Drain).controlsTSC`, `probe.(*Drain).controlsTSCFenced`, `probe.(*Drain).controlsCycles`, `probe.(*Drain).controlsMonotonic`, `probe.userLoop`,
	`probe.(*Drain).recvTSC`, `probe.(*Drain).recvTSCFenced`, `probe.(*Drain).recvCycles`, `probe.(*Drain).recvMonotonic`}

// offPathCalls are the functions a hot path calls off its common path,
// where the Go runtime may preempt: each is a separate, non-inlined call
// so that the common path keeps no preemption point.
var offPathCalls = map[string]string{
	"engine.pacerNext":       "a Poisson pacer (math/rand, math.Log)",
	"engine.pacerDue":        "a Poisson pacer (math/rand, math.Log)",
	"engine.sleepOther":      "a SCHED_OTHER sender's sleep, through the runtime so that a stop-the-world never waits for it",
	"udp.(*Sender).sendCold": "a full send queue (the netpoller waits) or a failed sendmmsg",
	"probe.SafePoint":        "the deliberate preemption point, only when a soak's writer collects garbage",
}

// shapeRe matches a generic instantiation's shape in a symbol name.
var shapeRe = regexp.MustCompile(`\[[^\]]*\]`)

// raceCalls are the race detector's own entry points, which a -race build
// puts into every instrumented function: NOSPLIT assembly that calls the
// race runtime on the system stack, never a preemption point.
var raceCalls = regexp.MustCompile(`^runtime\.race(funcenter|funcexit|read|write|readrange|writerange)$`)

// TestHotPathHasNoPreemptionPoint disassembles the rtload binary and checks
// the real-time loop: the Go runtime must never be able to stop a reader
// between two sleeps except at probe.SafePoint, so it never shows up in a
// histogram as if it were the kernel. The -race build is checked too:
// `make test` runs every real-time test in it, and a preemption point
// there (sync/atomic's typed methods are calls with a stack check under
// the race detector) once let the runtime park a reader for 849 ms on a
// loaded machine, emptying a trial.
func TestHotPathHasNoPreemptionPoint(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("disassembly checked on amd64")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	for _, build := range []struct {
		name  string
		flags []string
	}{{"plain", nil}, {"race", []string{"-race"}}} {
		t.Run(build.name, func(t *testing.T) {
			// internal/testutil's Long, by hand: archtest imports only
			// the standard library.
			if len(build.flags) > 0 && testing.Short() {
				t.Skip("tier: long fast test (a build with " + strings.Join(build.flags, " ") + ": minutes on 2 busy CPUs); -short leaves it out, make test runs it")
			}
			checkHotPath(t, gobin, build.flags)
		})
	}
}

// checkHotPath builds cmd/rtload with flags and checks its hot path.
func checkHotPath(t *testing.T, gobin string, flags []string) {
	bin := filepath.Join(t.TempDir(), "rtload")
	root := moduleRoot(t)
	args := append(append([]string{"build"}, flags...), "-o", bin, filepath.Join(root, "cmd", "rtload"))
	if out, err := exec.Command(gobin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	var names []string
	for _, f := range hotPath {
		// A generic type's methods are listed with their shape:
		// record.(*Ring[go.shape.struct { … }]).Put.
		q := regexp.QuoteMeta(f)
		if i := strings.Index(q, `\)\.`); strings.Contains(q, `\(\*`) && i > 0 {
			q = q[:i] + `(\[[^\]]*\])?` + q[i:]
		}
		names = append(names, q)
	}
	out, err := exec.Command(gobin, "tool", "objdump", "-s", `(rtload/(net/|internal/)?(`+strings.Join(names, "|")+`)(\.abi0)?|^sync/atomic\.(SwapPointer|StorePointer))$`, bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	funcs := map[string][]string{}
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "TEXT "); ok {
			cur = strings.Fields(rest)[0]
			cur = strings.TrimSuffix(cur, "(SB)")
			continue
		}
		if cur != "" && strings.TrimSpace(line) != "" {
			funcs[cur] = append(funcs[cur], line)
		}
	}
	found := 0
	callRe := regexp.MustCompile(`\tCALL ([^\s(]+(?:\([^)]*\))?[^\s(]*)\(SB\)`)
	for name, lines := range funcs {
		short := shapeRe.ReplaceAllString(strings.TrimPrefix(name, "github.com/rtload/rtload/"), "")
		short = strings.TrimPrefix(strings.TrimPrefix(short, "net/"), "internal/")
		found++
		for _, l := range lines {
			if strings.Contains(l, "morestack") || strings.Contains(l, "CMPQ SP, 0x10(R14)") {
				t.Errorf("%s has a stack-check prologue (a preemption point): mark it //go:nosplit\n  %s", short, strings.TrimSpace(l))
				break
			}
		}
		for _, l := range lines {
			m := callRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			callee := shapeRe.ReplaceAllString(m[1], "")
			if raceCalls.MatchString(callee) && len(flags) > 0 {
				continue
			}
			if allowedCalls.MatchString(callee) {
				if strings.HasSuffix(callee, "SafePoint") && !strings.HasSuffix(name, "(*Loop).Run") && !strings.HasSuffix(name, "(*sender).loop") {
					t.Errorf("%s calls SafePoint; only Loop.Run and the sender's loop may", short)
				}
				continue
			}
			if _, ok := offPathCalls[strings.TrimPrefix(strings.TrimPrefix(callee, "github.com/rtload/rtload/"), "net/")]; ok {
				continue
			}
			ok := false
			for _, f := range hotPath {
				if strings.HasSuffix(callee, "/"+f) || strings.HasSuffix(callee, "."+strings.SplitN(f, ".", 2)[1]) && strings.Contains(callee, strings.SplitN(f, ".", 2)[0]) {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("%s calls %s, which is neither on the hot path nor allowed", short, callee)
			}
		}
	}
	for _, f := range mustDisassemble {
		ok := false
		for name := range funcs {
			ok = ok || strings.HasSuffix(strings.TrimSuffix(name, ".abi0"), "/"+f)
		}
		if !ok {
			t.Errorf("%s not in the disassembly (inlined or renamed?): it must be checked", f)
		}
	}
	if found < 10 {
		t.Fatalf("objdump found %d of %d hot-path functions (inlined ones are fine, but this is too few): %v", found, len(hotPath), keys(funcs))
	}
	t.Logf("checked %d functions", found)
}

func keys(m map[string][]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
