package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/rtload/rtload/rt"
	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Dir is where named namespaces are bind-mounted: the directory iproute2
// (`ip netns`) and github.com/vishvananda/netns use. /var/run is usually a
// symlink to /run; rtload always spells it /run/netns.
const Dir = "/run/netns"

// NS is a named network namespace, bind-mounted at Dir/<name> the way
// `ip netns add` does it, so it outlives every thread and socket in it
// until Close (or Sweep, if the run dies) removes the mount.
type NS struct {
	name string
	path string

	mu     sync.Mutex
	closed bool
}

// New creates the namespace Name(os.Getpid(), runID), brings its loopback
// device up and returns it. No thread of the process other than a
// short-lived, dedicated one ever enters it, and that one goes back to its
// original namespace before New returns (or exits, if it cannot).
//
// Without CAP_SYS_ADMIN the error is a *rt.PrivilegeError (errors.Is
// rt.ErrNoPrivilege). A name already in use gives an error naming its
// path (errors.Is fs.ErrExist). On any error nothing is left behind.
func New(runID string) (*NS, error) {
	if !validRunID(runID) {
		return nil, fmt.Errorf("netns: run id %q: want %d lowercase hex digits (NewRunID)", runID, runIDLen)
	}
	return newNamed(Name(os.Getpid(), runID))
}

// newNamed creates and mounts the namespace name, which New and the tests
// choose; it does not check that ParseName accepts it.
func newNamed(name string) (*NS, error) {
	n := &NS{name: name, path: filepath.Join(Dir, name)}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := n.create()
		errc <- err
		if restored {
			runtime.UnlockOSThread()
		}
		// Otherwise the thread is still in the new namespace: no
		// UnlockOSThread, so it exits with this goroutine.
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return n, nil
}

// create runs on a locked thread: unshare(CLONE_NEWNET), bind-mount the
// thread's new namespace at n.path, bring lo up, and setns back. restored
// is false when the thread could not return to its original namespace.
func (n *NS) create() (restored bool, err error) {
	saved, err := vnetns.Get()
	if err != nil {
		return true, fmt.Errorf("netns %s: open this thread's namespace: %w", n.name, err)
	}
	defer saved.Close()

	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return true, n.syscallError("unshare(CLONE_NEWNET)", err)
	}
	// The thread is now in the new, still anonymous namespace.
	err = n.mount()
	if err == nil {
		if err = n.loUp(); err != nil {
			err = errors.Join(err, n.remove())
		}
	}
	if serr := vnetns.Set(saved); serr != nil {
		// The thread stays in the new namespace; its caller does not
		// unlock it, so it dies with its goroutine.
		serr = fmt.Errorf("netns %s: return to the original namespace: %w", n.name, os.NewSyscallError("setns", serr))
		if err == nil {
			err = errors.Join(serr, n.remove())
		} else {
			err = errors.Join(err, serr)
		}
		return false, err
	}
	return true, err
}

// mount bind-mounts the calling thread's namespace at n.path, creating the
// file (never reusing one) and Dir as needed. On error nothing is left.
func (n *NS) mount() error {
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return fmt.Errorf("netns %s: %w", n.name, err)
	}
	// O_EXCL: a name in use (ours from an earlier run, or anyone's) is
	// never mounted over. The PathError names the path.
	f, err := os.OpenFile(n.path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("netns %s: %w", n.name, err)
	}
	f.Close()
	if err := unix.Mount("/proc/thread-self/ns/net", n.path, "none", unix.MS_BIND, ""); err != nil {
		err = n.syscallError("mount --bind /proc/thread-self/ns/net "+n.path, err)
		return errors.Join(err, os.Remove(n.path))
	}
	return nil
}

// loUp sets the namespace's loopback device up through a route netlink
// socket opened inside it.
func (n *NS) loUp() error {
	h, err := n.handle(unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("netns %s: lo: %w", n.name, err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("netns %s: lo up: %w", n.name, err)
	}
	return nil
}

// syscallError names op, and turns EPERM and EACCES into a
// *rt.PrivilegeError: a namespace needs CAP_SYS_ADMIN, and
// --allow-degraded has nothing to fall back to.
func (n *NS) syscallError(op string, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("netns %s: %w (private network namespaces need root; --allow-degraded cannot replace them)",
			n.name, &rt.PrivilegeError{Op: op, Cap: "CAP_SYS_ADMIN", Err: err})
	}
	return fmt.Errorf("netns %s: %w", n.name, os.NewSyscallError(op, err))
}

// Name returns the namespace's name, e.g. "rtl4242-0badc0de".
func (n *NS) Name() string { return n.name }

// Path returns Dir/<name>, the bind mount that keeps the namespace alive
// and that setns(2) and `ip netns exec` open.
func (n *NS) Path() string { return n.path }

// Do runs f on a new goroutine locked to an OS thread that has entered the
// namespace, waits for it, and returns f's error. Sockets and tap fds that
// f creates belong to the namespace for their whole life, whichever thread
// uses them later. Goroutines that f starts do not run in the namespace.
//
// Afterwards the thread returns to its original namespace; if it cannot,
// it is never unlocked and exits with the goroutine, so no other goroutine
// ever runs in the namespace by accident. A panic in f is re-raised in the
// caller after the thread is restored. Do is safe for concurrent use.
func (n *NS) Do(f func() error) error {
	type result struct {
		err      error
		panicked bool
		value    any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		saved, err := vnetns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("netns %s: open this thread's namespace: %w", n.name, err)}
			return
		}
		defer saved.Close()
		target, err := vnetns.GetFromPath(n.path)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("netns %s: %w", n.name, &fs.PathError{Op: "open", Path: n.path, Err: err})}
			return
		}
		err = vnetns.Set(target)
		target.Close()
		if err != nil {
			// A failed setns(2) leaves the thread where it was.
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("netns %s: %w", n.name, os.NewSyscallError("setns", err))}
			return
		}

		var r result
		finished := false
		defer func() {
			if !finished {
				// f panicked (recover returns the value) or called
				// runtime.Goexit, e.g. through t.FailNow (recover is nil).
				if r.value = recover(); r.value != nil {
					r.panicked = true
				} else {
					r.err = fmt.Errorf("netns %s: Do: f called runtime.Goexit", n.name)
				}
			}
			if err := vnetns.Set(saved); err != nil {
				// Still in the namespace: no UnlockOSThread, the thread
				// exits with this goroutine.
				r.err = errors.Join(r.err, fmt.Errorf("netns %s: return to the original namespace: %w", n.name, os.NewSyscallError("setns", err)))
				done <- r
				return
			}
			runtime.UnlockOSThread()
			done <- r
		}()
		r.err = f()
		finished = true
	}()
	r := <-done
	if r.panicked {
		panic(r.value)
	}
	return r.err
}

// Handle returns a netlink handle whose sockets (one per family that
// netlink supports: route, xfrm, netfilter) live in the namespace, so no
// request made through it falls back to the caller's namespace. The
// caller closes it.
func (n *NS) Handle() (*netlink.Handle, error) {
	return n.handle()
}

func (n *NS) handle(families ...int) (*netlink.Handle, error) {
	ns, err := vnetns.GetFromPath(n.path)
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", n.name, &fs.PathError{Op: "open", Path: n.path, Err: err})
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, families...)
	if err != nil {
		return nil, fmt.Errorf("netns %s: netlink handle: %w", n.name, err)
	}
	return h, nil
}

// Close deletes the namespace: it detaches the bind mount and removes the
// file. Links inside vanish when the last reference to the namespace
// (a socket, a tap fd, a thread inside) is closed. Close is idempotent,
// safe on a nil *NS, and not an error when the mount is already gone
// (e.g. swept).
func (n *NS) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	if err := n.remove(); err != nil {
		return err
	}
	n.closed = true
	return nil
}

func (n *NS) remove() error {
	if err := removeNamed(n.path); err != nil {
		return fmt.Errorf("netns %s: %w", n.name, err)
	}
	return nil
}

// removeNamed detaches the mount at path and removes the file, following
// no link (umount2 UMOUNT_NOFOLLOW; unlink removes a link, not its
// target). A file that is not a mount point (a run that died between
// creating and mounting it) is removed too; a missing one is not an error.
func removeNamed(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
	if err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return os.NewSyscallError("umount2 "+path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
