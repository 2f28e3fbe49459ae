package profile

import (
	"math"
	"strings"
	"testing"
)

// stackUK builds a drain stack from user frames then kernel frames, each
// given outermost first.
func stackUK(count uint64, user, kernel []string) Stack {
	var fr []Frame
	for i := len(kernel) - 1; i >= 0; i-- {
		fr = append(fr, Frame{Func: kernel[i], Kernel: true})
	}
	for i := len(user) - 1; i >= 0; i-- {
		fr = append(fr, Frame{Func: user[i]})
	}
	return Stack{Frames: fr, Phase: PhaseDrain, Count: count}
}

const (
	loopFn   = "github.com/rtload/rtload/probe.(*Drain).Step"
	sys6     = "internal/runtime/syscall/linux.Syscall6"
	recvMsg  = "github.com/rtload/rtload/net/udp.(*RecvMsg).Recv"
	recvFrom = "github.com/rtload/rtload/net/udp.(*RecvFrom).Recv"
)

// liveShape reproduces the shape of a real recvmsg − recvfrom profile
// (profile/sampler's loops on this project's VMs), every sample worth
// 0.25 ns/call on both sides:
//   - different entry paths on both sides of the syscall: Go wrappers
//     (RecvMsg.Recv → syscall.RawSyscall against RecvFrom.Recv →
//     syscall.RawSyscall6) to the common Syscall6, and kernel entry
//     functions (__sys_recvmsg → ___sys_recvmsg → ____sys_recvmsg
//     against __x64_sys_recvfrom → __sys_recvfrom) to the common
//     sock_recvmsg, fdget, fput, move_addr_to_user and import_ubuf
//     (recvmsg reaches that one only rarely, via import_iovec);
//   - each entry path's own code (self samples): 1600 (400 ns/call) on
//     recvmsg's, 850 (212.5) on recvfrom's;
//   - a shared subtree whose cost differs somewhat: __skb_recv_udp
//     2400 against 2000 samples (+100 ns/call), import_ubuf 0 against
//     120 in shared work (−30), kfree deep in udp_recvmsg 20 against 40
//     (−5): Shared = +65;
//   - recvmsg's own work: copy_msghdr_from_user and below it 3830
//     samples (957.5 ns/call), and kfree called by ___sys_recvmsg 400
//     (100), which recvfrom calls only deep in udp_recvmsg: Own = 1057.5;
//   - strays: ___sys_recvmsg in 3 recvfrom samples (one-sided still),
//     and one recvfrom sample with kfree right under __sys_recvfrom
//     (below the pairing floor).
//
// Total = 3025 − 1715 = 1310 = Own (1057.5 − 0.25) + Entry (400 − 212.25)
// + Shared 65. The total exceeds each entry function's inclusive
// difference (__sys_recvfrom −994, ____sys_recvmsg +835) and the shared
// work below them differs significantly, so the rule before entry
// paths were paired reported both as seats.
func liveShape() (a, b Variant) {
	const d = "do_syscall_64"
	ua, ub := []string{loopFn, recvMsg, "syscall.RawSyscall", sys6}, []string{loopFn, recvFrom, "syscall.RawSyscall6", sys6}
	ka := func(fs ...string) []string { return append([]string{d, "__sys_recvmsg"}, fs...) }
	kb := func(fs ...string) []string { return append([]string{d, "__x64_sys_recvfrom", "__sys_recvfrom"}, fs...) }
	a = variant("recvmsg", 3025,
		stackUK(600, ua, nil),
		stackUK(150, ua[:2], nil),
		stackUK(1730, ua, []string{d}),
		stackUK(450, ua, ka()),
		stackUK(500, ua, ka("___sys_recvmsg")),
		stackUK(500, ua, ka("___sys_recvmsg", "____sys_recvmsg")),
		stackUK(2400, ua, ka("___sys_recvmsg", "____sys_recvmsg", "sock_recvmsg", "udp_recvmsg", "__skb_recv_udp")),
		stackUK(300, ua, ka("___sys_recvmsg", "____sys_recvmsg", "sock_recvmsg")),
		stackUK(20, ua, ka("___sys_recvmsg", "____sys_recvmsg", "sock_recvmsg", "udp_recvmsg", "skb_attempt_defer_free", "kfree")),
		stackUK(120, ua, ka("___sys_recvmsg", "____sys_recvmsg", "move_addr_to_user")),
		stackUK(500, ua, ka("fdget")),
		stackUK(300, ua, ka("fput")),
		stackUK(1200, ua, ka("___sys_recvmsg", "copy_msghdr_from_user")),
		stackUK(2000, ua, ka("___sys_recvmsg", "copy_msghdr_from_user", "import_iovec", "__import_iovec", "copy_iovec_from_user")),
		stackUK(30, ua, ka("___sys_recvmsg", "copy_msghdr_from_user", "import_iovec", "__import_iovec", "import_ubuf")),
		stackUK(600, ua, ka("___sys_recvmsg", "copy_msghdr_from_user", "_copy_from_user")),
		stackUK(400, ua, ka("___sys_recvmsg", "kfree")),
		stackUK(300, ua, []string{d, "exit_to_user_mode_loop", "schedule", "__schedule", "finish_task_switch.isra.0"}),
	)
	b = variant("recvfrom", 1715,
		stackUK(600, ub, nil),
		stackUK(100, ub[:2], nil),
		stackUK(100, ub[:3], nil),
		stackUK(1730, ub, []string{d}),
		stackUK(50, ub, kb()[:2]),
		stackUK(596, ub, kb()),
		stackUK(2000, ub, kb("sock_recvmsg", "udp_recvmsg", "__skb_recv_udp")),
		stackUK(300, ub, kb("sock_recvmsg")),
		stackUK(40, ub, kb("sock_recvmsg", "udp_recvmsg", "skb_attempt_defer_free", "kfree")),
		stackUK(120, ub, kb("move_addr_to_user")),
		stackUK(120, ub, kb("import_ubuf")),
		stackUK(500, ub, kb("fdget")),
		stackUK(300, ub, kb("fput")),
		stackUK(300, ub, []string{d, "exit_to_user_mode_loop", "schedule", "__schedule", "finish_task_switch.isra.0"}),
		stackUK(3, ub, []string{d, "___sys_recvmsg"}),
		stackUK(1, ub, kb("kfree")),
	)
	return a, b
}

// TestAttributeEntryPathsPaired: the entry functions of two receive
// methods are paired through the callees they share, never seats, even
// though the shared work below them costs more in one variant; the
// seats are recvmsg's own work, and the shared subtree's extra cost is
// reported on its own.
func TestAttributeEntryPathsPaired(t *testing.T) {
	a, b := liveShape()
	at, err := Attribute(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", at.Text())
	if at.SamplesA != 12100 || at.SamplesB != 6860 || !near(at.Total, 1310, 1e-9) {
		t.Fatalf("samples %d/%d, total %v", at.SamplesA, at.SamplesB, at.Total)
	}
	// The parts add up to the total exactly.
	if sum := at.Own.Value + at.Entry.Diff.Value + at.Shared.Value + at.Interrupted.Value; !near(sum, at.Total, 1e-9) {
		t.Errorf("own %v + entry %v + shared %v + interrupted %v = %v, want %v", at.Own.Value, at.Entry.Diff.Value, at.Shared.Value, at.Interrupted.Value, sum, at.Total)
	}
	// The stray kfree (one sample right under __sys_recvfrom) is
	// recvfrom's own work, the stray ___sys_recvmsg entry code on
	// recvfrom's side: 0.25 and 0.75 ns/call (849 samples there).
	if !near(at.Own.Value, 1057.5-0.25, 1e-9) || !near(at.Shared.Value, 65, 1e-9) || !near(at.Entry.Diff.Value, 400-212.25, 1e-9) {
		t.Errorf("own %+v, shared %+v, entry %+v; want 1057.25, 65, 187.75", at.Own, at.Shared, at.Entry.Diff)
	}
	want := []struct {
		kind SeatKind
		fn   string
		diff float64
		path string // the last two elements
	}{
		{SeatOwn, "copy_msghdr_from_user", 957.5, "___sys_recvmsg → copy_msghdr_from_user"},
		{SeatOwn, "kfree", 99.75, "___sys_recvmsg → kfree"}, // less the stray
		{SeatShared, "__skb_recv_udp", 100, "udp_recvmsg → __skb_recv_udp"},
	}
	if len(at.Seats) != len(want) {
		t.Fatalf("%d seats, want %d", len(at.Seats), len(want))
	}
	for i, w := range want {
		s := at.Seats[i]
		path := strings.Join(s.Path[max(0, len(s.Path)-2):], " → ")
		if s.Kind != w.kind || s.Func != w.fn || !near(s.Diff.Value, w.diff, 1e-9) || path != w.path || !s.Diff.Significant() {
			t.Errorf("seat %d: %s %s %+v in %s, want %s %s %+v in %s", i, s.Kind, s.Func, s.Diff.Value, path, w.kind, w.fn, w.diff, w.path)
		}
	}
	if c := at.Seats[0].Callees; len(c) != 2 || c[0].Func != "import_iovec" || !near(c[0].Diff.Value, 507.5, 1e-9) || c[1].Func != "_copy_from_user" || !near(c[1].Diff.Value, 150, 1e-9) {
		t.Errorf("copy_msghdr_from_user's callees %+v, want import_iovec +507.5 and _copy_from_user +150", c)
	}
	if got := strings.Join(at.Seats[2].Path, " → "); !strings.Contains(got, "____sys_recvmsg → sock_recvmsg → udp_recvmsg") {
		t.Errorf("shared seat's path %s, want it through recvmsg's entry path (the dearer side)", got)
	}
	if !near(at.Explained, (957.5+99.75+100+187.75)/1310, 1e-9) || at.Unexplained != "" {
		t.Errorf("explained %v, unexplained %q", at.Explained, at.Unexplained)
	}
	// The entry paths and what pairs them.
	wantPaths := map[string]string{
		"A kernel": "__sys_recvmsg → ___sys_recvmsg → ____sys_recvmsg", "A user": recvMsg + " → syscall.RawSyscall",
		"B kernel": "__x64_sys_recvfrom → __sys_recvfrom", "B user": recvFrom + " → syscall.RawSyscall6",
	}
	for side, paths := range map[string][][]string{"A": at.Entry.PathsA, "B": at.Entry.PathsB} {
		if len(paths) != 2 {
			t.Errorf("%s entry paths %v, want a user and a kernel one", side, paths)
			continue
		}
		for _, p := range paths {
			which := " kernel"
			if strings.Contains(p[0], ".") {
				which = " user"
			}
			if got := strings.Join(p, " → "); got != wantPaths[side+which] {
				t.Errorf("%s%s entry path %s, want %s", side, which, got, wantPaths[side+which])
			}
		}
	}
	for _, v := range []string{"sock_recvmsg", "fdget", "fput", "move_addr_to_user", "import_ubuf", sys6} {
		if !strings.Contains("\x00"+strings.Join(at.Entry.Via, "\x00")+"\x00", "\x00"+v+"\x00") {
			t.Errorf("entry paths pair through %v, want %s among them", at.Entry.Via, v)
		}
	}
	if strings.Contains(strings.Join(at.Entry.Via, " "), "kfree") {
		t.Errorf("kfree pairs the entry paths (%v): recvfrom calls it only below udp_recvmsg, or in a stray sample", at.Entry.Via)
	}
	entry := map[string]bool{}
	for _, f := range at.Funcs {
		entry[f.Func] = f.Entry
		// The trap the rule avoids: an entry function's inclusive
		// difference is mostly shared work counted on one side only.
		if f.Func == "__sys_recvfrom" && f.Diff.Value > -900 {
			t.Errorf("__sys_recvfrom inclusive %+v: the synthetic profile should carry the trap", f.Diff)
		}
	}
	for fn, want := range map[string]bool{"__sys_recvmsg": true, "___sys_recvmsg": true, "____sys_recvmsg": true, "__x64_sys_recvfrom": true,
		"__sys_recvfrom": true, recvMsg: true, recvFrom: true, "syscall.RawSyscall6": true,
		"copy_msghdr_from_user": false, "import_iovec": false, "kfree": false, "sock_recvmsg": false} {
		if entry[fn] != want {
			t.Errorf("%s: entry %v, want %v", fn, entry[fn], want)
		}
	}
	text := at.Text()
	for _, w := range []string{
		"recvmsg − recvfrom: +1310 ns/call in the drain (3025 vs 1715 ns/call measured; 12100 vs 6860 drain samples)\n",
		"  entry paths (each variant's own road to the callees both reach: ",
		"    recvmsg: udp.(*RecvMsg).Recv → syscall.RawSyscall; __sys_recvmsg → ___sys_recvmsg → ____sys_recvmsg\n",
		"    recvfrom: udp.(*RecvFrom).Recv → syscall.RawSyscall6; __x64_sys_recvfrom → __sys_recvfrom\n",
		"  the entry paths' own code: +188 ns/call (95% 165 to 210; 1600 vs 849 samples); ",
		"; recvmsg: ____sys_recvmsg 500, ___sys_recvmsg 500, __sys_recvmsg 450; recvfrom: __sys_recvfrom 596, udp.(*RecvFrom).Recv 100, syscall.RawSyscall6 100\n",
		"  work only one side does: +1057 ns/call (95% ",
		"    +958 ns/call (95% ", " in ___sys_recvmsg → copy_msghdr_from_user (3830 vs 0 samples, 1200 vs 0 self); below it import_iovec +508, _copy_from_user +150\n",
		"    +100 ns/call (95% ", " in ___sys_recvmsg → kfree (400 vs 1 samples, 400 vs 1 self)\n",
		"  shared path, different cost: +65 ns/call (95% ",
		" in udp_recvmsg → __skb_recv_udp (2400 vs 2000 samples, 2400 vs 2000 self)\n",
		"  these explain 103% of the difference\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q", w)
		}
	}
}

// TestAttributeSharedNoise: when the shared path's difference is within
// sampling error the text says so instead of naming a function.
func TestAttributeSharedNoise(t *testing.T) {
	a, b := liveShape()
	for i, st := range a.Profile.Stacks {
		if st.Frames[0].Func == "__skb_recv_udp" {
			a.Profile.Stacks[i].Count = 2140 // 65 ns/call cheaper: Shared = 0
		}
	}
	a.Drain -= 65 * 1_000_000 // 260 fewer samples at 0.25 ns/call
	at, err := Attribute(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range at.Seats {
		if s.Kind == SeatShared {
			t.Errorf("shared seat %s %+v: the shared path differs only by noise", s.Func, s.Diff)
		}
	}
	if at.Shared.Significant() || math.Abs(at.Shared.Value) > 1e-6 {
		t.Errorf("shared %+v, want 0 and not significant", at.Shared)
	}
	if text := at.Text(); !strings.Contains(text, "  shared path, different cost: +0.0 ns/call (95% -31 to 31): within sampling error\n") {
		t.Errorf("text does not call the shared difference noise:\n%s", text)
	}
}

// TestPairingShapes covers the corners of the pairing rule on small
// profiles (every sample 0.1 ns/call, the same cost on both sides, so
// nothing but the entry paths differs).
func TestPairingShapes(t *testing.T) {
	tests := []struct {
		name   string
		a, b   []Stack
		via    []string // want among Entry.Via
		pathsA string   // Entry.PathsA joined by " | " and " → "
	}{
		{
			// recvmsg reaches Y right after its entry path, recvfrom
			// through a wrapper W both variants call: W pairs first,
			// then Y through it (the fixpoint).
			name: "through a shared wrapper",
			a:    []Stack{chain(900, "x", "a1", "y"), chain(100, "x", "a1", "w")},
			b:    []Stack{chain(900, "x", "b1", "w", "y"), chain(100, "x", "b1", "w")},
			via:  []string{"y", "w"}, pathsA: "a1",
		},
		{
			// No shared frame above the entry paths: the root pairs them.
			name: "paired at the root",
			a:    []Stack{chain(1000, "a1", "a2", "y", "z")},
			b:    []Stack{chain(1000, "b1", "y", "z")},
			via:  []string{"y"}, pathsA: "a1 → a2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := Attribute(variant("a", 100, tt.a...), variant("b", 100, tt.b...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if at.Own.Value != 0 || len(at.Seats) != 0 || !near(at.Shared.Value, 0, 1e-9) {
				t.Errorf("own %+v, shared %+v, seats %+v: nothing but the entry paths differs\n%s", at.Own, at.Shared, at.Seats, at.Text())
			}
			for _, v := range tt.via {
				if !strings.Contains("\x00"+strings.Join(at.Entry.Via, "\x00")+"\x00", "\x00"+v+"\x00") {
					t.Errorf("via %v, want %s among them", at.Entry.Via, v)
				}
			}
			var ps []string
			for _, p := range at.Entry.PathsA {
				ps = append(ps, strings.Join(p, " → "))
			}
			if got := strings.Join(ps, " | "); got != tt.pathsA {
				t.Errorf("entry paths of a: %s, want %s", got, tt.pathsA)
			}
		})
	}
}

// TestAttributeInterruptions: timer interrupts and preemption that hit
// one variant's drain more often (a loaded machine) show as such, apart
// from either method's work; an interrupt entry right below the Go
// wrappers pairs nothing.
func TestAttributeInterruptions(t *testing.T) {
	a, b := liveShape()
	irq := []string{"asm_sysvec_apic_timer_interrupt", "irqentry_exit_to_user_mode", "schedule", "__schedule", "finish_task_switch.isra.0"}
	ua, ub := []string{loopFn, recvMsg}, []string{loopFn, recvFrom, "syscall.RawSyscall6", sys6}
	a.Profile.Stacks = append(a.Profile.Stacks, stackUK(40, ua, irq))
	a.Drain += 10 * 1_000_000 // 40 samples at 0.25 ns/call
	b.Profile.Stacks = append(b.Profile.Stacks, stackUK(200, ub[:2], irq), stackUK(200, ub, irq))
	b.Drain += 100 * 1_000_000 // 400 samples
	at, err := Attribute(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if at.InterruptedA != 340 || at.InterruptedB != 700 || !near(at.Interrupted.Value, -90, 1e-9) || !at.Interrupted.Significant() {
		t.Errorf("interrupted %d vs %d, %+v; want 340 vs 700, -90 and significant", at.InterruptedA, at.InterruptedB, at.Interrupted)
	}
	if sum := at.Own.Value + at.Entry.Diff.Value + at.Shared.Value + at.Interrupted.Value; !near(sum, at.Total, 1e-9) {
		t.Errorf("parts add up to %v, total %v", sum, at.Total)
	}
	if strings.Contains(strings.Join(at.Entry.Via, " "), "asm_sysvec") {
		t.Errorf("an interrupt entry pairs the entry paths: %v", at.Entry.Via)
	}
	// Explained counts the interruptions as explained (as load).
	if !near(at.Explained, (957.5+99.75+100+187.75-90)/1220, 1e-9) {
		t.Errorf("explained %v", at.Explained)
	}
	want := "  interrupts, softirqs and preemption during the drain: -90 ns/call (95% "
	if text := at.Text(); !strings.Contains(text, want) || !strings.Contains(text, "; 340 vs 700 samples): the machine's load, not either side's work\n") {
		t.Errorf("text lacks %q…:\n%s", want, text)
	}
	a, b = liveShape()
	if at, _ := Attribute(a, b, Options{}); !strings.Contains(at.Text(), "during the drain: +0.0 ns/call (95% -12 to 12; 300 vs 300 samples): within sampling error\n") {
		t.Errorf("equal interruptions are not called noise:\n%s", at.Text())
	}
}
