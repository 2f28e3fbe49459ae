// Package seccomp builds the seccomp(2) filters a reader thread may run
// under (scenario readers[i].seccomp) and installs one on the calling
// thread only, so that "does the container's seccomp profile slow
// recvmsg?" is a variant of a scenario.
//
// Program is pure: it compiles a Config into classic BPF with
// golang.org/x/net/bpf's assembler. Two profiles:
//
//   - RuntimeDefault: the allowlist of the default seccomp profile of
//     Docker and Podman (RuntimeDefaultSource names the list and its
//     version), as a default `docker run` (default capabilities, kernel ≥
//     4.8) gets it on x86_64, compiled the way libseccomp compiles such a
//     list: the architecture is checked first, x32 system call numbers
//     are refused, then the system call number is compared against each
//     allowed number, and anything else gets ERRNO(EPERM). Argument
//     filters are simplified (RuntimeDefaultSimplified says how).
//   - AllowAll: an architecture check, then no-op instructions, then
//     ALLOW: Config.Instructions in all (4–MaxInstructions, the kernel's
//     BPF_MAXINSNS). The no-op is `A += 0`, an instruction the kernel's
//     constant-action cache (Linux 5.11+, kernel/seccomp.c
//     seccomp_is_const_allow) cannot evaluate ahead: every system call
//     then runs the whole program, so its cost grows with Instructions.
//     RuntimeDefault, like most real profiles, is all loads, jumps and
//     returns: the cache decides an allowed call with no argument filter
//     at attach time, and such a call pays only the seccomp entry work.
//
// Install loads a program on the calling thread (it must be locked to its
// goroutine and never return to the Go runtime's pool: a filter cannot be
// removed): prctl(PR_SET_NO_NEW_PRIVS) and then seccomp(2)
// SECCOMP_SET_MODE_FILTER without SECCOMP_FILTER_FLAG_TSYNC, so no other
// thread of the process is filtered. ReadStatus reads a thread's seccomp
// state back from /proc/self/task/TID/status.
//
// no_new_privs is a per-thread attribute (prctl(2)): it is set on the
// reader's thread only, and the other threads of rtload keep theirs. It is
// inherited by children of that thread (clone, fork) and kept across
// execve, where it stops set-user-ID bits and file capabilities from
// granting privileges. The reader thread creates no thread and runs no
// program: the Go runtime never clones from a thread locked with
// runtime.LockOSThread (newm hands the clone to its template thread, so
// that such a thread's state is not copied), and the thread exits with its
// goroutine. So nothing else in the process is affected. seccomp(2) needs
// it without CAP_SYS_ADMIN; Install sets it always, so that the thread's
// state is the same with and without the capability.
package seccomp
