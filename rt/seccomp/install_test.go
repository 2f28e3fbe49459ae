package seccomp

import (
	"errors"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// onFilteredThread runs f on a new thread under cfg's filter, with the
// thread's status before and after Install, and lets the thread exit
// locked (it is never reused). It returns Install's error.
func onFilteredThread(t *testing.T, cfg Config, f func(before, after Status)) error {
	t.Helper()
	prog, err := Program(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the filter stays; the thread exits with this goroutine.
		tid := unix.Gettid()
		before, err := ReadStatus(tid)
		if err == nil {
			err = Install(prog)
		}
		if err != nil {
			done <- err
			return
		}
		after, err := ReadStatus(tid)
		if err != nil {
			done <- err
			return
		}
		f(before, after)
		done <- nil
	}()
	return <-done
}

// TestInstall: the filter is on the calling thread only (its Seccomp
// mode 2, one filter more than it inherited, no_new_privs set), refuses
// what it should there, and no other thread of the process has it. No
// privilege is needed: no_new_privs stands in for CAP_SYS_ADMIN.
func TestInstall(t *testing.T) {
	requireAmd64(t)
	self, err := ReadStatus(unix.Gettid())
	if err != nil {
		t.Skipf("no seccomp status here: %v", err)
	}
	for _, cfg := range []Config{{Profile: RuntimeDefault}, {Profile: AllowAll, Instructions: 64}} {
		t.Run(cfg.Profile.String(), func(t *testing.T) {
			var otherTID int
			err := onFilteredThread(t, cfg, func(before, after Status) {
				if after.Mode != 2 || after.Filters != before.Filters+1 || !after.NoNewPrivs {
					t.Errorf("after Install: %+v (before %+v), want mode 2, one filter more, no_new_privs", after, before)
				}
				if _, _, e := unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0); e != 0 {
					t.Errorf("getppid: %v", e)
				}
				// unshare(0) changes nothing and succeeds unfiltered; the
				// default profile refuses unshare without CAP_SYS_ADMIN.
				_, _, e := unix.RawSyscall(unix.SYS_UNSHARE, 0, 0, 0)
				if want := map[Profile]unix.Errno{RuntimeDefault: unix.EPERM}[cfg.Profile]; e != want {
					t.Errorf("unshare(0): errno %v, want %v", e, want)
				}
				otherTID = unix.Getpid() // the main thread, never this one
			})
			if err != nil {
				t.Fatal(err)
			}
			other, err := ReadStatus(otherTID)
			if err != nil {
				t.Fatal(err)
			}
			if other.Filters != self.Filters || other.Mode != self.Mode {
				t.Errorf("main thread: %+v, want as before (%+v): the filter leaked to another thread", other, self)
			}
		})
	}
}

func TestInstallRefusesLong(t *testing.T) {
	err := Install(make([]bpf.RawInstruction, MaxInstructions+1))
	if err == nil || errors.Is(err, unix.EINVAL) {
		t.Errorf("%v, want refused before the kernel", err)
	}
}
