package seccomp

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
)

// Profile is a filter's kind: None (no filter), RuntimeDefault or
// AllowAll.
type Profile int

// The profiles.
const (
	None Profile = iota
	RuntimeDefault
	AllowAll
)

// String names p as the scenario spells it: "none", "runtime-default",
// "allow-all".
func (p Profile) String() string {
	switch p {
	case None:
		return "none"
	case RuntimeDefault:
		return "runtime-default"
	case AllowAll:
		return "allow-all"
	}
	return fmt.Sprintf("profile(%d)", int(p))
}

// Config is one filter. The zero value is no filter.
type Config struct {
	Profile Profile
	// Instructions is the length of an AllowAll program, MinAllowAll–
	// MaxInstructions; ignored by the other profiles.
	Instructions int
}

// MaxInstructions is the longest program the kernel loads (BPF_MAXINSNS,
// include/uapi/linux/bpf_common.h).
const MaxInstructions = 4096

// MinAllowAll is the shortest AllowAll program: its fixed part (load the
// architecture, check it, refuse another, ALLOW) and no no-op.
const MinAllowAll = 4

// ErrNotSupported: the filters are compiled for x86_64 only (the
// architecture and system call numbers they check).
var ErrNotSupported = errors.New("not supported")

// The values a filter returns (include/uapi/linux/seccomp.h) and the
// offsets of seccomp_data's fields.
const (
	retAllow = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno = 0x00050000 // SECCOMP_RET_ERRNO | errno
	eperm    = 1
	enosys   = 38
	offNr    = 0 // seccomp_data.nr
	offArch  = 4 // seccomp_data.arch
	// x32SyscallBit marks x32 system call numbers, which share
	// AUDIT_ARCH_X86_64 with the native ones (__X32_SYSCALL_BIT).
	x32SyscallBit = 0x40000000
	// maxChunk is the most number checks one ALLOW return serves: a
	// conditional jump skips at most 255 instructions.
	maxChunk = 254
)

// Program compiles c into the instructions the kernel loads (nil for
// None). Errors: an unknown profile, Instructions out of range for
// AllowAll, ErrNotSupported off x86_64.
func Program(c Config) ([]bpf.RawInstruction, error) {
	var prog []bpf.Instruction
	switch c.Profile {
	case None:
		return nil, nil
	case RuntimeDefault:
		if auditArch == 0 {
			return nil, fmt.Errorf("seccomp %s: %w on this architecture (x86_64 only)", c.Profile, ErrNotSupported)
		}
		prog = runtimeDefault()
	case AllowAll:
		if auditArch == 0 {
			return nil, fmt.Errorf("seccomp %s: %w on this architecture (x86_64 only)", c.Profile, ErrNotSupported)
		}
		if c.Instructions < MinAllowAll || c.Instructions > MaxInstructions {
			return nil, fmt.Errorf("seccomp allow-all: %d instructions out of range (allowed: %d–%d)", c.Instructions, MinAllowAll, MaxInstructions)
		}
		prog = allowAll(c.Instructions)
	default:
		return nil, fmt.Errorf("seccomp: unknown profile %d", int(c.Profile))
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("seccomp %s: assemble: %w", c.Profile, err)
	}
	return raw, nil
}

// archCheck loads the architecture and returns ERRNO(EPERM) for any but
// x86_64's: 3 instructions.
func archCheck() []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno | eperm},
	}
}

// allowAll is the AllowAll program of n instructions: the architecture
// check, n − MinAllowAll no-ops (A += 0), ALLOW.
func allowAll(n int) []bpf.Instruction {
	prog := archCheck()
	for range n - MinAllowAll {
		prog = append(prog, bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: 0})
	}
	return append(prog, bpf.RetConstant{Val: retAllow})
}

// runtimeDefault is the RuntimeDefault program: the architecture check;
// load the number; ERRNO(EPERM) for x32 numbers; ERRNO(ENOSYS) for
// clone3 (the profile's own rule, so that a C library falls back to
// clone); one equality check per allowed number, ascending, in chunks of
// at most maxChunk that jump to an ALLOW after them; ERRNO(EPERM) for the
// rest.
func runtimeDefault() []bpf.Instruction {
	prog := append(archCheck(),
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
		bpf.RetConstant{Val: retErrno | eperm},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: sysClone3, SkipFalse: 1},
		bpf.RetConstant{Val: retErrno | enosys},
	)
	nrs := RuntimeDefaultNumbers()
	for len(nrs) > 0 {
		chunk := nrs[:min(len(nrs), maxChunk)]
		nrs = nrs[len(chunk):]
		for i, nr := range chunk {
			// True: past the rest of the chunk and its fall-through
			// instruction, to its ALLOW.
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: uint8(len(chunk) - i)})
		}
		if len(nrs) > 0 {
			prog = append(prog, bpf.Jump{Skip: 1}) // on to the next chunk
		} else {
			prog = append(prog, bpf.RetConstant{Val: retErrno | eperm}) // the default action
		}
		prog = append(prog, bpf.RetConstant{Val: retAllow})
	}
	return prog
}

// RuntimeDefaultNumbers are the x86_64 system call numbers RuntimeDefault
// allows, ascending (nil off x86_64): every name of runtimeDefaultNames
// and runtimeDefaultConditional this architecture has (a name it lacks,
// such as chown32, is skipped, as libseccomp skips it).
func RuntimeDefaultNumbers() []uint32 {
	var nrs []uint32
	for _, names := range [][]string{runtimeDefaultNames, runtimeDefaultConditional} {
		for _, n := range names {
			if nr, ok := sysnum[n]; ok && !slices.Contains(nrs, nr) {
				nrs = append(nrs, nr)
			}
		}
	}
	slices.Sort(nrs)
	return nrs
}

// Allowed reports whether RuntimeDefault allows the system call name on
// this architecture, and whether the architecture has it at all.
func Allowed(name string) (allowed, known bool) {
	nr, known := sysnum[name]
	return known && slices.Contains(RuntimeDefaultNumbers(), nr), known
}
