package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tiers (issue 30). Every test is in one tier, named by the requirements
// it declares through Requires:
//
//   - fast: it declares none of the requirements below. It needs no root,
//     no real-time thread and no system service; `make test-fast` (go test
//     -short ./...) runs every fast test, as any user, in under a minute.
//   - realtime: it requires Root, a capability (Cap), DevNetTun or
//     RealTime: the privileged packages' tests, most of which run
//     SCHED_FIFO threads pinned to CPU 1 (`make test-rt`).
//   - system: it requires System: podman, the real-SSH fleet, the
//     real-verdict check tests (`make test-system`).
//
// `go test -short` is the fast tier: every realtime and system requirement
// is unmet under it, and Long tests skip. RTLOAD_TEST_TIERS (a comma list
// of fast, realtime and system; unset or empty: all three) narrows a run
// to its tiers: a realtime or system test outside them skips, its reason
// starting "tier:" (testsum counts those apart instead of listing each).
// A fast test declares nothing, so a run of another tier cannot leave it
// out; that costs little, and it holds everywhere anyway.
//
// Every realtime test, and every system test that declares a realtime
// requirement too (root for its real runs), runs holding the real-time
// test lock (RealTimeLock): no two of them, in any package or process,
// ever run at once, so none competes with another for CPU 1, and no test scenario
// needs a priority above another test's to get its CPU. What shares the
// machine with them then is the machine's own load, which each test's
// assertions must hold under (identities, bounds, marks).
const (
	TierFast     = "fast"
	TierRealtime = "realtime"
	TierSystem   = "system"
)

// TiersEnv is the environment variable that narrows a run to some tiers.
const TiersEnv = "RTLOAD_TEST_TIERS"

// tierOn reports whether tier is among the tiers of this run, and if not,
// why (a skip reason starting "tier:").
func tierOn(tier string) string {
	if testing.Short() && tier != TierFast {
		return fmt.Sprintf("tier: %s test; -short runs the fast tier only (make test-%s runs it)", tier, tierTarget(tier))
	}
	v := strings.TrimSpace(os.Getenv(TiersEnv))
	if v == "" {
		return ""
	}
	for _, s := range strings.Split(v, ",") {
		if strings.TrimSpace(s) == tier {
			return ""
		}
	}
	return fmt.Sprintf("tier: %s test; %s=%s leaves it out (make test-%s runs it)", tier, TiersEnv, v, tierTarget(tier))
}

func tierTarget(tier string) string {
	if tier == TierRealtime {
		return "rt"
	}
	return tier
}

// RealTime marks a test that runs real-time threads (SCHED_FIFO, pinned)
// without needing root itself: met whenever the realtime tier runs, and
// then the test holds the real-time test lock.
var RealTime = Req{name: "real-time tier", tier: TierRealtime, lock: true}

// System marks a test of a system service or a whole real verdict
// (podman, sshd and ansible, a real `rtload check`): the system tier.
var System = Req{name: "system tier", tier: TierSystem}

// Long marks a fast test that takes seconds (a simulation, a bomb, a
// build): it skips under -short, so that `make test-fast` stays under a
// minute, and runs in `make test`'s fast stage. why says what makes it
// long.
// A run of other tiers only (RTLOAD_TEST_TIERS without fast: make test-rt,
// test-system) leaves it out too: it has been run by the fast tier's.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("tier: long fast test (%s); -short leaves it out, make test runs it", why)
		return
	}
	if why := tierOn(TierFast); why != "" {
		t.Skipf("tier: long fast test (%s); %s=%s leaves it out", why, TiersEnv, os.Getenv(TiersEnv))
	}
}

// lockPath is the real-time test lock's file (a variable for this
// package's own tests).
var lockPath = defaultLockPath

// defaultLockPath is /run's (root's own directory) for root, the
// temporary directory's, per user, otherwise.
func defaultLockPath() string {
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
			return "/run/rtload-test-realtime.lock"
		}
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rtload-test-realtime-%d.lock", os.Geteuid()))
}

// holderEnv names the pid of the process holding the real-time test lock
// for the test that started this process: a test binary a locked test
// runs (as a child, or deeper) runs its own tests under that lock instead
// of waiting for it forever.
const holderEnv = "RTLOAD_TEST_REALTIME_LOCK_HOLDER"

// In one process, sem orders the tests that take the lock (flock(2) would
// too, each test opening its own description, but waiting on a channel
// keeps the wait in Go, where a timeout's dump shows it), and heldBy
// names the test holding it: its subtests run under its lock.
var (
	sem    = make(chan struct{}, 1)
	heldMu sync.Mutex
	heldBy string
)

// RealTimeLock takes the machine-wide real-time test lock for t, blocking
// until it is free, and releases it when t ends (t.Cleanup). It logs who
// held it and for how long t waited. A subtest of the holder, and a test
// whose process the holder started (holderEnv names an ancestor), run
// under the holder's lock.
func RealTimeLock(t testing.TB) {
	t.Helper()
	heldMu.Lock()
	inherited := heldBy != "" && (t.Name() == heldBy || strings.HasPrefix(t.Name(), heldBy+"/"))
	heldMu.Unlock()
	if inherited || underHolder() {
		return
	}
	start := time.Now()
	select {
	case sem <- struct{}{}:
	default:
		heldMu.Lock()
		h := heldBy
		heldMu.Unlock()
		t.Logf("waiting for the real-time test lock, held by %s in this process", h)
		sem <- struct{}{}
	}
	path := lockPath()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		<-sem
		t.Fatalf("real-time test lock %s: %v", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := os.ReadFile(path)
			t.Logf("waiting for the real-time test lock %s, held by %s", path, strings.TrimSpace(string(holder)))
			err = flockRetry(int(f.Fd()))
		}
		if err != nil {
			f.Close()
			<-sem
			t.Fatalf("real-time test lock %s: %v", path, err)
		}
	}
	if w := time.Since(start); w > 100*time.Millisecond {
		t.Logf("took the real-time test lock after %s", w.Round(time.Millisecond))
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d, %s (since %s)\n", os.Getpid(), t.Name(), time.Now().Format(time.TimeOnly))), 0)
	heldMu.Lock()
	heldBy = t.Name()
	heldMu.Unlock()
	prev, had := os.LookupEnv(holderEnv)
	os.Setenv(holderEnv, strconv.Itoa(os.Getpid()))
	t.Cleanup(func() {
		if had {
			os.Setenv(holderEnv, prev)
		} else {
			os.Unsetenv(holderEnv)
		}
		heldMu.Lock()
		heldBy = ""
		heldMu.Unlock()
		_ = f.Truncate(0)
		f.Close() // releases the flock
		<-sem
	})
}

// flockRetry blocks in flock(2) until the lock is taken, across EINTR.
func flockRetry(fd int) error {
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// underHolder reports whether holderEnv names this process's parent or a
// further ancestor (64 generations at most).
func underHolder() bool {
	want, err := strconv.Atoi(os.Getenv(holderEnv))
	if err != nil || want <= 0 || want == os.Getpid() {
		return false
	}
	pid := os.Getppid()
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == want {
			return true
		}
		pid = parentOf(pid)
	}
	return false
}

// parentOf is pid's parent from /proc/PID/stat (0 when unknown).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // comm may hold spaces and ')'
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// MkdirTemp makes a temporary directory named prefix<pid>-<random>, as
// os.MkdirTemp does in the temporary directory, after removing every
// directory of that prefix whose pid no longer runs: what an earlier test
// binary left when it was killed before its cleanup (SIGKILL, a timeout).
// Each removal is reported on stderr.
func MkdirTemp(prefix string) (string, error) {
	RemoveLeftovers(prefix)
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", prefix, os.Getpid()))
}

// RemoveLeftovers removes the directories prefix<pid>-* of the temporary
// directory whose pid no longer runs (kill(pid, 0) says ESRCH), and says
// so on stderr.
func RemoveLeftovers(prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), prefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := os.RemoveAll(d); err == nil {
			fmt.Fprintf(os.Stderr, "testutil: removed %s, left by test process %d that no longer runs\n", d, pid)
		}
	}
}
