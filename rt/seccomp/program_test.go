package seccomp

import (
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

// run runs prog in x/net/bpf's VM on a seccomp_data of system call nr
// from arch and returns the filter's action. The VM loads words in
// network byte order, so the fields are written big-endian here.
func run(t *testing.T, prog []bpf.RawInstruction, nr, arch uint32) uint32 {
	t.Helper()
	ins, ok := bpf.Disassemble(prog)
	if !ok {
		t.Fatalf("program does not disassemble: %v", ins)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	data := make([]byte, 64) // struct seccomp_data
	binary.BigEndian.PutUint32(data[offNr:], nr)
	binary.BigEndian.PutUint32(data[offArch:], arch)
	got, err := vm.Run(data)
	if err != nil {
		t.Fatalf("run nr %d: %v", nr, err)
	}
	return uint32(got)
}

func requireAmd64(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("the filters are compiled for x86_64; this is %s", runtime.GOARCH)
	}
}

const auditArchI386 = 0x40000003

func TestAllowAllLength(t *testing.T) {
	requireAmd64(t)
	for _, n := range []int{MinAllowAll, 5, 64, 256, 1024, MaxInstructions} {
		prog, err := Program(Config{Profile: AllowAll, Instructions: n})
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if len(prog) != n {
			t.Errorf("allow-all %d: %d instructions", n, len(prog))
		}
		if got := run(t, prog, sysnum["recvfrom"], auditArch); got != retAllow {
			t.Errorf("allow-all %d: recvfrom gets %#x, want ALLOW", n, got)
		}
		if got := run(t, prog, 11, auditArchI386); got != retErrno|eperm {
			t.Errorf("allow-all %d: an i386 call gets %#x, want ERRNO(EPERM)", n, got)
		}
	}
	for _, n := range []int{0, MinAllowAll - 1, MaxInstructions + 1} {
		_, err := Program(Config{Profile: AllowAll, Instructions: n})
		if err == nil || !strings.Contains(err.Error(), "out of range (allowed: 4–4096)") {
			t.Errorf("allow-all %d: %v, want out of range", n, err)
		}
	}
}

// TestRuntimeDefaultProgram: the program's length is what its layout says
// (3 to check the architecture, 5 for the number, x32 and clone3, one per
// allowed number, 2 per chunk), and it answers as the profile does.
func TestRuntimeDefaultProgram(t *testing.T) {
	requireAmd64(t)
	prog, err := Program(Config{Profile: RuntimeDefault})
	if err != nil {
		t.Fatal(err)
	}
	nrs := RuntimeDefaultNumbers()
	chunks := (len(nrs) + maxChunk - 1) / maxChunk
	if want := 3 + 5 + len(nrs) + 2*chunks; len(prog) != want {
		t.Errorf("%d instructions, want %d", len(prog), want)
	}
	// The figures the docs state: 298 numbers, 310 instructions.
	if len(nrs) != 298 || len(prog) != 310 {
		t.Errorf("%d numbers allowed, %d instructions: update the docs (docs/scenario.md, rt/seccomp) if the list changed", len(nrs), len(prog))
	}
	for _, tc := range []struct {
		name string
		nr   uint32
		arch uint32
		want uint32
	}{
		{"recvfrom", sysnum["recvfrom"], auditArch, retAllow},
		{"recvmsg", sysnum["recvmsg"], auditArch, retAllow},
		{"getppid: the null syscall", sysnum["getppid"], auditArch, retAllow},
		{"read: the lowest number", 0, auditArch, retAllow},
		{"the highest number allowed", nrs[len(nrs)-1], auditArch, retAllow},
		{"clone, argument filter simplified", sysnum["clone"], auditArch, retAllow},
		{"clone3: ENOSYS, as the profile says", sysClone3, auditArch, retErrno | enosys},
		{"mount: CAP_SYS_ADMIN only", 165, auditArch, retErrno | eperm},
		{"perf_event_open: CAP_PERFMON only", 298, auditArch, retErrno | eperm},
		{"kexec_load: never", 246, auditArch, retErrno | eperm},
		{"an x32 read (number 0 | the x32 bit)", x32SyscallBit, auditArch, retErrno | eperm},
		{"an i386 call", 3, auditArchI386, retErrno | eperm},
		{"past every number", 1 << 20, auditArch, retErrno | eperm},
	} {
		if got := run(t, prog, tc.nr, tc.arch); got != tc.want {
			t.Errorf("%s (nr %d): %#x, want %#x", tc.name, tc.nr, got, tc.want)
		}
	}
	// Every allowed number, and its neighbours that are not.
	for _, nr := range nrs {
		if got := run(t, prog, nr, auditArch); got != retAllow {
			t.Errorf("nr %d: %#x, want ALLOW", nr, got)
		}
		if !slices.Contains(nrs, nr+1) && nr+1 != sysClone3 {
			if got := run(t, prog, nr+1, auditArch); got != retErrno|eperm {
				t.Errorf("nr %d (not allowed): %#x, want ERRNO(EPERM)", nr+1, got)
			}
		}
	}
}

// TestRuntimeDefaultCoversReaderThread: every system call a reader's
// thread makes once its filter is on is allowed, so that a filtered
// reader measures and exits as any other. Its own (engine, probe, rt):
// the recv calls, clock_nanosleep, the getppid control, reading procfs at
// the end (openat, read, close, fstat), closing its perf events. The Go
// runtime's on a locked thread (runtime/sys_linux_amd64.s, os_linux.go):
// futex to park and wake, signal handling and preemption (rt_sigreturn,
// rt_sigprocmask, sigaltstack, tgkill, getpid, gettid), memory
// (mmap, munmap, madvise, mprotect), sched_yield, nanosleep,
// sched_getaffinity, and exit when the goroutine ends. The root test
// TestReaderUnderSeccomp runs a whole trial under the filter.
func TestRuntimeDefaultCoversReaderThread(t *testing.T) {
	requireAmd64(t)
	for _, name := range []string{
		"recvfrom", "recvmsg", "recvmmsg", "clock_nanosleep", "getppid", "clock_gettime",
		"openat", "read", "close", "fstat", "newfstatat", "lseek", "fcntl", "epoll_ctl", "ioctl", "prctl", "sched_getattr",
		"futex", "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack", "tgkill", "getpid", "gettid",
		"mmap", "munmap", "madvise", "mprotect", "sched_yield", "nanosleep", "sched_getaffinity", "exit", "exit_group", "write",
	} {
		allowed, known := Allowed(name)
		if !known || !allowed {
			t.Errorf("%s: allowed %v, known on x86_64 %v", name, allowed, known)
		}
	}
	for _, name := range []string{"perf_event_open", "mount", "unshare", "bpf", "setns"} {
		if allowed, _ := Allowed(name); allowed {
			t.Errorf("%s allowed: the default profile refuses it without CAP_SYS_ADMIN", name)
		}
	}
}

// constAllow is kernel/seccomp.c's seccomp_is_const_allow: whether the
// kernel can tell at attach time that prog allows nr on arch whatever the
// arguments, and then skips the program for nr (the action cache, Linux
// 5.11+). It follows the kernel's switch: absolute loads of nr and arch,
// the jumps, AND, returns; anything else stops it.
func constAllow(prog []bpf.RawInstruction, nr, arch uint32) bool {
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Op {
		case 0x20: // BPF_LD | BPF_W | BPF_ABS
			switch ins.K {
			case offNr:
				a = nr
			case offArch:
				a = arch
			default:
				return false
			}
		case 0x06: // BPF_RET | BPF_K
			return ins.K == retAllow
		case 0x05: // BPF_JMP | BPF_JA
			pc += int(ins.K)
		case 0x15, 0x35, 0x25, 0x45: // BPF_JMP | BPF_JEQ, JGE, JGT, JSET | BPF_K
			var res bool
			switch ins.Op {
			case 0x15:
				res = a == ins.K
			case 0x35:
				res = a >= ins.K
			case 0x25:
				res = a > ins.K
			case 0x45:
				res = a&ins.K != 0
			}
			if res {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		case 0x54: // BPF_ALU | BPF_AND | BPF_K
			a &= ins.K
		default:
			return false
		}
	}
	return false
}

// TestActionCache: what the docs say of the kernel's action cache holds
// for these programs: it decides runtime-default's allowed calls ahead,
// and allow-all's only without a no-op.
func TestActionCache(t *testing.T) {
	requireAmd64(t)
	rd, _ := Program(Config{Profile: RuntimeDefault})
	for _, name := range []string{"recvfrom", "getppid", "clock_nanosleep"} {
		if !constAllow(rd, sysnum[name], auditArch) {
			t.Errorf("runtime-default: %s is not decided ahead", name)
		}
	}
	if constAllow(rd, 165, auditArch) {
		t.Error("runtime-default: mount decided ALLOW")
	}
	min, _ := Program(Config{Profile: AllowAll, Instructions: MinAllowAll})
	if !constAllow(min, sysnum["getppid"], auditArch) {
		t.Error("allow-all 4: not decided ahead")
	}
	one, _ := Program(Config{Profile: AllowAll, Instructions: MinAllowAll + 1})
	if constAllow(one, sysnum["getppid"], auditArch) {
		t.Error("allow-all 5: decided ahead, so its no-ops would never run")
	}
}

func TestProgramErrors(t *testing.T) {
	if p, err := Program(Config{}); p != nil || err != nil {
		t.Errorf("none: %v, %v; want no program", p, err)
	}
	if _, err := Program(Config{Profile: 7}); err == nil {
		t.Error("unknown profile accepted")
	}
	if runtime.GOARCH != "amd64" {
		if _, err := Program(Config{Profile: RuntimeDefault}); !errors.Is(err, ErrNotSupported) {
			t.Errorf("runtime-default on %s: %v, want ErrNotSupported", runtime.GOARCH, err)
		}
	}
}

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Status
		err      string
	}{
		{"filtered", "Name:\trtl-rd/rt\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n", Status{Mode: 2, Filters: 1, NoNewPrivs: true}, ""},
		{"none", "NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n", Status{}, ""},
		{"before 5.9: no filter count", "Seccomp:\t2\n", Status{Mode: 2, Filters: -1}, ""},
		{"no CONFIG_SECCOMP", "Name:\tx\n", Status{Mode: -1, Filters: -1}, "no Seccomp line"},
		{"garbage", "Seccomp:\tlots\n", Status{Mode: -1, Filters: -1}, `"lots" is not a count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tc.in))
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
