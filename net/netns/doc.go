// Package netns owns rtload's private network namespace: its lifecycle,
// its name, and the cleanup of namespaces left by runs that died.
//
// # Lifecycle
//
// New(runID) creates a named namespace the way `ip netns add` does: a
// dedicated, locked thread unshares CLONE_NEWNET, the new namespace is
// bind-mounted at /run/netns/<name> (Dir), its loopback device is set up,
// and the thread returns to its original namespace. Sockets and tap
// devices are then made inside it with Do (for fds) or Handle (for
// netlink). Close detaches the mount and removes the file; the namespace
// itself, and the links in it, go away when the last socket or tap fd in
// it is closed. The package never runs ip(8).
//
// # Names, and why the pid is in them
//
// Every name is Name(pid, runID) = "rtl<pid>-<runID>": Prefix, the pid of
// the process that created it, and a random run id (NewRunID). A run that
// is killed cannot Close, and its bind mount keeps an empty namespace
// alive forever. Because the owner's pid is in the name, Sweep (rtload
// cleanup, or the start of a later run) can tell whose owner is gone
// without any state file. Sweep's rules:
//
//   - Only names that ParseName accepts are considered: "rtl", a pid, "-"
//     and NewRunID's 8 hex digits. Anything else in Dir, including names
//     that merely start with "rtl" ("rtl8192-wifi"), is never touched.
//   - Only what New leaves in Dir is deleted: an empty regular file owned
//     by the effective user (lstat(2); no link is ever followed). A link,
//     directory, file with contents or another user's file of that name is
//     Foreign and left alone.
//   - A namespace is deleted only when its owner is known to be gone
//     (sysinfo.PIDGone): no process with that pid, a zombie, or a pid that
//     is now a thread of another process. When in doubt it is left alone,
//     so a pid reused by an unrelated process delays cleanup but never
//     causes a live run's namespace to be deleted.
//   - Every entry says why it is kept or removed (Entry.Why), so `rtload
//     cleanup` can print it.
//
// # Threads
//
// A network namespace belongs to a thread, not to a process, and Go moves
// goroutines between threads. So nothing here ever changes the namespace
// of the calling thread: New and Do each start a goroutine that calls
// runtime.LockOSThread, enters the namespace with setns(2), does its work
// and setns(2)es back. If going back fails, the goroutine returns without
// UnlockOSThread, and the Go runtime ends the thread instead of handing a
// thread in the wrong namespace to other goroutines. Goroutines started
// from inside Do run on other threads, in the original namespace; the Go
// runtime creates new threads from a clean template thread, never from a
// locked one. An fd, once created, stays in its namespace whichever thread
// uses it, which is why Do is needed only to create sockets, not to use
// them.
//
// # Mounts
//
// The bind mount lives in the caller's mount namespace. Unlike ip(8), New
// does not make Dir a shared mount point, so a namespace created from
// inside a private mount namespace (some systemd units, containers) is not
// visible outside it.
package netns
