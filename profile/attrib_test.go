package profile

import (
	"math"
	"strings"
	"testing"
	"time"
)

// chain builds a drain stack from frames given outermost first (as one
// reads a call path), all kernel.
func chain(count uint64, outerFirst ...string) Stack {
	fr := make([]Frame, len(outerFirst))
	for i, n := range outerFirst {
		fr[len(outerFirst)-1-i] = Frame{Func: n, Kernel: true}
	}
	return Stack{Frames: fr, Phase: PhaseDrain, Count: count}
}

// variant makes a Variant whose measured cost is callNs per call.
func variant(name string, callNs float64, stacks ...Stack) Variant {
	const calls = 1_000_000
	return Variant{Name: name, Profile: &Profile{Stacks: stacks}, Calls: calls, Drain: time.Duration(callNs * calls),
		KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_KASAN": "n"}, Cmdline: map[string]string{}}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// recvfromSide is 10000 drain samples at 1000 ns/call: 0.1 ns/call each.
func recvfromSide() Variant {
	const e, x = "do_syscall_64", "__x64_sys_recvfrom"
	return variant("recvfrom", 1000,
		chain(6000, e, x, "__sys_recvfrom", "sock_recvmsg", "udp_recvmsg"),
		chain(2000, e, x, "__sys_recvfrom"),
		chain(1000, e, x, "__sys_recvfrom", "move_addr_to_user"),
		chain(1000, e),
		Stack{Frames: []Frame{{Func: "github.com/rtload/rtload/rt.(*Ticker).Wait"}}, Phase: PhaseSleep, Count: 5000}, // ignored: not drain
	)
}

// recvmsgSide does recvfromSide's work under other names, plus 3000
// samples (300 ns/call) in copy_msghdr_from_user, a third of them in
// __check_object_size below it: 13000 samples at 1300 ns/call.
func recvmsgSide() Variant {
	const e, s = "do_syscall_64", "__sys_recvmsg"
	return variant("recvmsg", 1300,
		chain(6000, e, s, "___sys_recvmsg", "____sys_recvmsg", "sock_recvmsg", "udp_recvmsg"),
		chain(2000, e, s, "___sys_recvmsg"),
		chain(1000, e, s, "___sys_recvmsg", "____sys_recvmsg", "move_addr_to_user"),
		chain(1000, e),
		chain(2000, e, s, "___sys_recvmsg", "copy_msghdr_from_user"),
		chain(1000, e, s, "___sys_recvmsg", "copy_msghdr_from_user", "_copy_from_user", "__check_object_size"),
	)
}

func TestAttributeRenamedPaths(t *testing.T) {
	at, err := Attribute(recvmsgSide(), recvfromSide(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if at.SamplesA != 13000 || at.SamplesB != 10000 || !near(at.Total, 300, 1e-9) {
		t.Fatalf("samples %d/%d, total %v", at.SamplesA, at.SamplesB, at.Total)
	}
	if len(at.Seats) != 1 {
		t.Fatalf("seats %+v, want only copy_msghdr_from_user\n%s", at.Seats, at.Text())
	}
	s := at.Seats[0]
	if s.Func != "copy_msghdr_from_user" || !near(s.Diff.Value, 300, 1e-6) || s.SamplesA != 3000 || s.SamplesB != 0 || s.SelfA != 2000 {
		t.Errorf("seat %+v", s)
	}
	if !s.Diff.Significant() || s.Diff.Lo < 280 || s.Diff.Hi > 320 {
		t.Errorf("interval %+v: 3000 of 13000 samples should pin 300 ns/call within ±20", s.Diff)
	}
	if got := strings.Join(s.Path, " → "); got != "do_syscall_64 → __sys_recvmsg → ___sys_recvmsg → copy_msghdr_from_user" {
		t.Errorf("path %s", got)
	}
	if len(s.Hooks) != 1 || s.Hooks[0].Option != "CONFIG_HARDENED_USERCOPY" {
		t.Errorf("seat hooks %v", s.Hooks)
	}
	if at.Unexplained != "" || !near(at.Explained, 1, 1e-6) {
		t.Errorf("explained %v, unexplained %q", at.Explained, at.Unexplained)
	}
	if len(at.Hooks) != 1 || at.Hooks[0].SamplesA != 1000 || !near(at.Hooks[0].Diff.Value, 100, 1e-6) || !at.Hooks[0].StateA.On {
		t.Errorf("hooks %+v", at.Hooks)
	}
	text := at.Text()
	for _, want := range []string{
		"recvmsg − recvfrom: +300 ns/call in the drain (1300 vs 1000 ns/call measured; 13000 vs 10000 drain samples)",
		"+300 ns/call (95% ", " in ___sys_recvmsg → copy_msghdr_from_user (3000 vs 0 samples, 2000 vs 0 self); below it _copy_from_user +100; CONFIG_HARDENED_USERCOPY below it",
		"  entry paths (each variant's own road to the callees both reach: sock_recvmsg, move_addr_to_user):\n",
		"    recvmsg: __sys_recvmsg → ___sys_recvmsg → ____sys_recvmsg\n    recvfrom: __x64_sys_recvfrom → __sys_recvfrom\n",
		"  the entry paths' own code: +0.0 ns/call (95% -11 to 11; 2000 vs 2000 samples): within sampling error; recvmsg: ___sys_recvmsg 2000; recvfrom: __sys_recvfrom 2000\n",
		"  work only one side does: +300 ns/call (95% 291 to 309)\n",
		"  shared path, different cost: +0.0 ns/call (95% -13 to 13): within sampling error\n",
		"these explain 100% of the difference",
		"CONFIG_HARDENED_USERCOPY (checks every copy_to/from_user object against slab and stack bounds): +100 ns/call",
		"on (CONFIG_HARDENED_USERCOPY=y, no hardened_usercopy= on the command line) in recvmsg's kernel",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// The function table has both sides' renamed paths with their sign,
	// marked as entry functions.
	for _, f := range at.Funcs {
		if f.Func == "__sys_recvfrom" && (!near(f.Diff.Value, -900, 1e-6) || !f.Entry) {
			t.Errorf("__sys_recvfrom diff %v entry %v, want -900 and an entry function", f.Diff.Value, f.Entry)
		}
		if f.Func == "copy_msghdr_from_user" && f.Entry {
			t.Errorf("copy_msghdr_from_user is marked an entry function")
		}
	}
}

// TestAttributeSamePath: A is B plus __check_object_size under
// udp_recvmsg (a hardened kernel against an unhardened one).
func TestAttributeSamePath(t *testing.T) {
	const e = "do_syscall_64"
	base := []Stack{
		chain(7000, e, "__sys_recvfrom", "sock_recvmsg", "udp_recvmsg", "__skb_recv_udp"),
		chain(2000, e, "__sys_recvfrom", "sock_recvmsg", "udp_recvmsg"),
		chain(1000, e, "__sys_recvfrom"),
	}
	hard := append(append([]Stack{}, base...), chain(1000, e, "__sys_recvfrom", "sock_recvmsg", "udp_recvmsg", "__check_object_size", "check_heap_object"))
	at, err := Attribute(variant("hard", 1100, hard...), variant("unhard", 1000, base...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// __check_object_size passes all of it on to check_heap_object, the
	// deepest function that still holds it.
	if len(at.Seats) != 1 || at.Seats[0].Func != "check_heap_object" || !near(at.Seats[0].Diff.Value, 100, 1e-6) {
		t.Fatalf("seats %+v\n%s", at.Seats, at.Text())
	}
	if got := at.Seats[0].Path; got[len(got)-2] != "__check_object_size" || got[len(got)-3] != "udp_recvmsg" {
		t.Errorf("path %v", got)
	}
	// __skb_recv_udp keeps its share of a longer call: 7000/11000·1100 = 700 = 7000/10000·1000.
	for _, f := range at.Funcs {
		if f.Func == "__skb_recv_udp" && (!near(f.Diff.Value, 0, 1e-6) || f.Diff.Significant()) {
			t.Errorf("__skb_recv_udp %+v: same cost, want 0 and not significant", f.Diff)
		}
	}
}

func TestAttributeCannotExplain(t *testing.T) {
	const e = "do_syscall_64"
	spread := func(total uint64, extra uint64) []Stack {
		var st []Stack
		for i := range 20 {
			n := total / 20
			if i == 0 {
				n += extra
			}
			st = append(st, chain(n, e, "f"+string(rune('a'+i))))
		}
		return st
	}
	tests := []struct {
		name string
		a, b Variant
		want string
	}{
		{"too few samples", variant("a", 1300, recvmsgSide().Profile.Stacks[0]), variant("b", 1000, chain(150, e)),
			"too few drain samples: a has 6000, b has 150 (need 200 each"},
		// Every function 10% dearer: no single share moves beyond its sampling error.
		{"spread over every function", variant("a", 1100, spread(10000, 0)...), variant("b", 1000, spread(10000, 0)...),
			"spread thin: no function's share of the drain differs beyond its sampling error by 5 ns/call or more"},
		// fa gains 500 samples (1000/10500·1200 − 50 ≈ 64 ns/call of 200): found, but not most of it.
		{"one function, a third of it", variant("a", 1200, spread(10000, 500)...), variant("b", 1000, spread(10000, 0)...),
			"spread thin: the 1 seat(s) found explain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := Attribute(tt.a, tt.b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(at.Unexplained, tt.want) {
				t.Errorf("unexplained %q, want containing %q\n%s", at.Unexplained, tt.want, at.Text())
			}
			if !strings.Contains(at.Text(), "the profile cannot explain it: ") {
				t.Errorf("text does not say so:\n%s", at.Text())
			}
		})
	}
	if _, err := Attribute(Variant{Name: "x", Profile: &Profile{}}, recvfromSide(), Options{}); err == nil || !strings.Contains(err.Error(), "attribute x: needs") {
		t.Errorf("no calls: err = %v", err)
	}
}

func TestHookAt(t *testing.T) {
	tests := []struct {
		name   string
		frames []Frame
		want   string // option, "" for none
	}{
		{"hardened usercopy", []Frame{k("__check_object_size"), k("udp_recvmsg")}, "CONFIG_HARDENED_USERCOPY"},
		{"check_heap_object", []Frame{k("check_heap_object"), k("__check_object_size")}, "CONFIG_HARDENED_USERCOPY"},
		{"memset in slab alloc", []Frame{k("memset_orig"), k("slab_post_alloc_hook")}, "CONFIG_INIT_ON_ALLOC_DEFAULT_ON"},
		{"memset in slab free", []Frame{k("memset_orig"), k("slab_free_hook")}, "CONFIG_INIT_ON_FREE_DEFAULT_ON"},
		{"memset elsewhere", []Frame{k("memset_orig"), k("skb_put_zero")}, ""},
		{"kernel_init_pages on alloc", []Frame{k("kernel_init_pages"), k("post_alloc_hook")}, "CONFIG_INIT_ON_ALLOC_DEFAULT_ON"},
		{"kasan", []Frame{k("__asan_load8"), k("udp_recvmsg")}, "CONFIG_KASAN"},
		{"kcsan", []Frame{k("__tsan_read8")}, "CONFIG_KCSAN"},
		{"lockdep", []Frame{k("__lock_acquire.isra.0"), k("lock_acquire")}, "CONFIG_LOCKDEP"},
		{"lockdep_ family", []Frame{k("lockdep_hardirqs_on_prepare")}, "CONFIG_LOCKDEP"},
		{"user frame", []Frame{u("__check_object_size")}, ""},
		{"ordinary", []Frame{k("udp_recvmsg")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ok := HookAt(tt.frames, 0)
			if ok != (tt.want != "") || h.Option != tt.want {
				t.Errorf("HookAt = %q, %v; want %q", h.Option, ok, tt.want)
			}
		})
	}
}

func TestHookState(t *testing.T) {
	hook := func(opt string) Hook {
		for _, h := range Hooks() {
			if h.Option == opt {
				return h
			}
		}
		t.Fatalf("no hook %s", opt)
		return Hook{}
	}
	tests := []struct {
		name            string
		opt             string
		config, cmdline map[string]string
		want            string
	}{
		{"usercopy on", "CONFIG_HARDENED_USERCOPY", map[string]string{"CONFIG_HARDENED_USERCOPY": "y"}, nil,
			"on (CONFIG_HARDENED_USERCOPY=y, no hardened_usercopy= on the command line)"},
		{"usercopy off on the command line", "CONFIG_HARDENED_USERCOPY", map[string]string{"CONFIG_HARDENED_USERCOPY": "y"}, map[string]string{"hardened_usercopy": "off"},
			"off (hardened_usercopy=off on the command line)"},
		{"usercopy default off", "CONFIG_HARDENED_USERCOPY", map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_HARDENED_USERCOPY_DEFAULT_ON": "n"}, nil,
			"off (CONFIG_HARDENED_USERCOPY=y, CONFIG_HARDENED_USERCOPY_DEFAULT_ON not set, no hardened_usercopy= on the command line)"},
		{"usercopy not built", "CONFIG_HARDENED_USERCOPY", map[string]string{"CONFIG_HARDENED_USERCOPY": "n"}, map[string]string{"hardened_usercopy": "on"},
			"off (hardened_usercopy=on but CONFIG_HARDENED_USERCOPY is not y)"},
		{"init_on_alloc by cmdline", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", map[string]string{"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "n"}, map[string]string{"init_on_alloc": "1"},
			"on (init_on_alloc=1 on the command line)"},
		{"lockdep via PROVE_LOCKING", "CONFIG_LOCKDEP", map[string]string{"CONFIG_PROVE_LOCKING": "y"}, nil, "on (CONFIG_PROVE_LOCKING=y)"},
		{"kasan absent from config", "CONFIG_KASAN", map[string]string{}, nil, "off (CONFIG_KASAN not set)"},
		{"config unreadable", "CONFIG_KCSAN", nil, nil, "unknown (kernel config not readable)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hook(tt.opt).State(tt.config, tt.cmdline).String(); got != tt.want {
				t.Errorf("State = %q\nwant    %q", got, tt.want)
			}
		})
	}
}
