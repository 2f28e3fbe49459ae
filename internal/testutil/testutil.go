// Package testutil holds test helpers: Requires skips a test listing every
// unmet requirement (acln0/perf's requires), and Main is a TestMain that
// fails the run when a test leaks file descriptors (cilium's testmain).
//
// Only _test.go files import it.
package testutil

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Req is one requirement of a test. The zero value is always met.
type Req struct {
	// name is what the skip message calls the requirement.
	name string
	// unmet returns why the requirement is not met, or "" when it is
	// (nil: always met).
	unmet func() string
	// tier is the tier a test declaring it is in (TierRealtime,
	// TierSystem; "" for none: such a requirement alone leaves the test
	// fast).
	tier string
	// lock says that a test declaring it runs holding the real-time test
	// lock: every requirement of the realtime tier (root, a capability,
	// the tun device, RealTime). System alone does not (a test of a tool,
	// such as the Ansible modules, runs no real-time thread).
	lock bool
}

func (r Req) String() string { return r.name }

// Root requires an effective uid of 0: the realtime tier.
var Root = Req{name: "root", tier: TierRealtime, lock: true, unmet: func() string {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Sprintf("root: running as euid %d", uid)
	}
	return ""
}}

// DevNetTun requires /dev/net/tun to open read-write (tap devices).
var DevNetTun = Req{name: "/dev/net/tun", tier: TierRealtime, lock: true, unmet: func() string {
	f, err := os.OpenFile("/dev/net/tun", os.O_RDWR, 0)
	if err != nil {
		return "/dev/net/tun: " + err.Error()
	}
	f.Close()
	return ""
}}

// CPUs requires at least n CPUs (runtime.NumCPU, which honours the
// process's affinity mask).
func CPUs(n int) Req {
	return Req{name: fmt.Sprintf("%d CPUs", n), unmet: func() string {
		if got := runtime.NumCPU(); got < n {
			return fmt.Sprintf("%d CPUs: have %d", n, got)
		}
		return ""
	}}
}

// capBits are the capabilities tests ask for, by capability(7) number.
var capBits = map[string]uint{
	"CAP_NET_ADMIN": 12,
	"CAP_IPC_LOCK":  14,
	"CAP_SYS_ADMIN": 21,
	"CAP_SYS_NICE":  23,
}

// Cap requires capability name (e.g. "CAP_SYS_NICE") in the effective set
// (CapEff in /proc/self/status). An unknown name is never met.
func Cap(name string) Req {
	return Req{name: name, tier: TierRealtime, lock: true, unmet: func() string {
		bit, ok := capBits[name]
		if !ok {
			return name + ": unknown capability (testutil knows CAP_NET_ADMIN, CAP_IPC_LOCK, CAP_SYS_ADMIN, CAP_SYS_NICE)"
		}
		eff, err := capEff()
		if err != nil {
			return name + ": " + err.Error()
		}
		if eff&(1<<bit) == 0 {
			return fmt.Sprintf("%s: not in the effective set (CapEff %016x)", name, eff)
		}
		return ""
	}}
}

// capEff reads the effective capability mask of this process.
func capEff() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return parseCapEff(string(b))
}

// parseCapEff finds the "CapEff:\t<hex>" line of a /proc/<pid>/status text.
func parseCapEff(status string) (uint64, error) {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("CapEff %q: %w", strings.TrimSpace(v), err)
			}
			return m, nil
		}
	}
	return 0, fmt.Errorf("no CapEff line in /proc/self/status")
}

// Unmet returns, in order, why each unmet requirement is not met; it is
// empty when all are met.
func Unmet(reqs ...Req) []string {
	var why []string
	for _, r := range reqs {
		if r.unmet == nil {
			continue
		}
		if s := r.unmet(); s != "" {
			why = append(why, s)
		}
	}
	return why
}

// Requires skips t when its tier is not run (tierOn: -short, or
// RTLOAD_TEST_TIERS) or any requirement is unmet, listing every unmet one
// with its reason; a realtime or system test then takes the real-time
// test lock for its whole run (RealTimeLock) when a requirement asks for
// it (Root, Cap, DevNetTun, RealTime; not System alone).
//
// A test that takes the lock is not parallel: a test paused by t.Parallel
// while holding it would keep the serial real-time tests of its package
// waiting, and parallel tests blocked on it hold the -parallel slots its
// own parallel subtests need (TestLabel's subtests waited so for 20
// minutes behind its siblings).
func Requires(t testing.TB, reqs ...Req) {
	t.Helper()
	tier := TierOf(reqs...)
	if why := tierOn(tier); why != "" {
		t.Skip(why)
		return
	}
	if why := Unmet(reqs...); len(why) > 0 {
		t.Skipf("unmet requirements: %s", strings.Join(why, "; "))
		return
	}
	for _, r := range reqs {
		if r.lock {
			RealTimeLock(t)
			break
		}
	}
}

// TierOf is the tier of a test declaring reqs: system over realtime over
// fast.
func TierOf(reqs ...Req) string {
	tier := TierFast
	for _, r := range reqs {
		switch r.tier {
		case TierSystem:
			return TierSystem
		case TierRealtime:
			tier = TierRealtime
		}
	}
	return tier
}
