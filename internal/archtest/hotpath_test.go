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
	`probe.(*Drain).Step`, `probe.(*Drain).drainTSC`, `probe.(*Drain).drainCycles`, `probe.(*Drain).drainMonotonic`,
	`probe.(*Drain).called`, `probe.(*Drain).events`, `probe.(*Drain).flush`,
	`probe.(*Drain).account`, `probe.(*Drain).sequence`, `probe.(*Drain).LastTick`, `probe.threadSwitches`,
	`rt.(*Ticker).Wait`, `rt.(*Clock).Now`, `rt.Monotonic`, `rt.rdtscp`, `rt.rdpmc`, `rt.(*pmcReader).read`, `rt.(*Counters).ReadInto`,
	`rt.(*Ticker).advance`, `rt.sleepWake`, `rt.wakeLatency`, `rt.TSC`, `rt.(*Clock).Cycles`,
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
var allowedCalls = regexp.MustCompile(`^(runtime\.(panic[A-Za-z0-9]*|gcWriteBarrier[0-9]*|nanotime|atomicwb)|syscall\.RawSyscall6?|golang\.org/x/sys/unix\.RawSyscall6?|internal/runtime/syscall(/linux)?\.Syscall6|sync/atomic\.(Swap|Store|Load|CompareAndSwap)(Pointer|Uintptr|Uint64|Int64|Uint32|Int32)|github\.com/rtload/rtload/rt\.(rdtscp|rdpmc|sleepWake)|github\.com/rtload/rtload/probe\.SafePoint)(\.abi0)?$`)

// mustDisassemble are hot-path functions that must show up in the
// disassembly (never inlined away): the loop, the sleep and the assembly
// routines (listed by objdump with their .abi0 suffix), so that the test
// provably checked them.
var mustDisassemble = []string{`probe.(*Loop).Run`, `rt.(*Ticker).Wait`, `rt.sleepWake`, `rt.rdtscp`,
	`probe.(*Drain).drainTSC`, `probe.(*Drain).drainCycles`, `probe.(*Drain).drainMonotonic`, `probe.(*Drain).flush`,
	`probe.(*Loop).nextBlock`, `probe.(*Loop).openBlock`, `probe.(*Loop).closeBlock`}

// TestHotPathHasNoPreemptionPoint disassembles the rtload binary and checks
// the real-time loop: the Go runtime must never be able to stop a reader
// between two sleeps except at probe.SafePoint, so it never shows up in a
// histogram as if it were the kernel.
func TestHotPathHasNoPreemptionPoint(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("disassembly checked on amd64")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	bin := filepath.Join(t.TempDir(), "rtload")
	root := moduleRoot(t)
	if out, err := exec.Command(gobin, "build", "-o", bin, filepath.Join(root, "cmd", "rtload")).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var names []string
	for _, f := range hotPath {
		names = append(names, regexp.QuoteMeta(f))
	}
	out, err := exec.Command(gobin, "tool", "objdump", "-s", `(rtload/(`+strings.Join(names, "|")+`)(\.abi0)?|^sync/atomic\.(SwapPointer|StorePointer))$`, bin).Output()
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
		short := strings.TrimPrefix(name, "github.com/rtload/rtload/")
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
			callee := m[1]
			if allowedCalls.MatchString(callee) {
				if strings.HasSuffix(callee, "SafePoint") && !strings.HasSuffix(name, "(*Loop).Run") {
					t.Errorf("%s calls SafePoint; only Loop.Run may", short)
				}
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
