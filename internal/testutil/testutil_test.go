package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

func TestMain(m *testing.M) { Main(m) }

func TestParseCapEff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		want    uint64
		wantErr string
	}{
		{"root in a container (CAP_SYS_RESOURCE dropped)", "CapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\n", 0x1fffeffffff, ""},
		{"only CAP_SYS_NICE", "Name:\tx\nCapEff:\t0000000000800000\n", 1 << 23, ""},
		{"no line", "Name:\tx\n", 0, "no CapEff line"},
		{"garbage", "CapEff:\tzz\n", 0, `CapEff "zz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCapEff(tc.status)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseCapEff = %#x, %v; want %#x", got, err, tc.want)
			}
		})
	}
}

// skipRecorder is a testing.TB whose Skipf records instead of skipping.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (s *skipRecorder) Helper() {}
func (s *skipRecorder) Skipf(format string, args ...any) {
	s.skipped = fmt.Sprintf(format, args...)
}
func (s *skipRecorder) Skip(args ...any) { s.skipped = fmt.Sprint(args...) }

func TestRequiresListsEveryUnmet(t *testing.T) {
	var r skipRecorder
	if testing.Short() {
		Requires(&r, CPUs(1<<20), Cap("CAP_BOGUS"))
		if !strings.HasPrefix(r.skipped, "tier: realtime test; -short") {
			t.Errorf("-short: a capability's test skipped with %q, not its tier", r.skipped)
		}
		return
	}
	t.Setenv(TiersEnv, "") // every tier: the unmet requirements, not a tier, must say why
	Requires(&r, CPUs(1<<20), Cap("CAP_BOGUS"), CPUs(1))
	for _, want := range []string{"1048576 CPUs: have", "CAP_BOGUS: unknown capability"} {
		if !strings.Contains(r.skipped, want) {
			t.Errorf("skip message %q lacks %q", r.skipped, want)
		}
	}
	if strings.Contains(r.skipped, "1 CPUs") {
		t.Errorf("skip message %q lists a met requirement", r.skipped)
	}

	r = skipRecorder{}
	Requires(&r, CPUs(1), Req{})
	if r.skipped != "" {
		t.Errorf("met requirements skipped: %q", r.skipped)
	}
}

func TestRootAndCapAgree(t *testing.T) {
	// Root with a full effective set implies every known capability; the
	// reverse is not checked (capabilities can be granted without root).
	if Root.unmet() != "" {
		t.Skip("not root")
	}
	eff, err := capEff()
	if err != nil {
		t.Fatal(err)
	}
	for name, bit := range capBits {
		if got := Cap(name).unmet(); (got == "") != (eff&(1<<bit) != 0) {
			t.Errorf("Cap(%s) unmet %q but CapEff %#x", name, got, eff)
		}
	}
}

func TestLeaked(t *testing.T) {
	before, err := OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	after, err := OpenFDs()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	after[1000] = "anon_inode:[eventpoll]" // runtime-owned: never reported
	want := []string{"fd " + strconv.Itoa(fd) + " -> /dev/null"}
	if diff := cmp.Diff(want, Leaked(before, after)); diff != "" {
		t.Errorf("Leaked (-want +got):\n%s", diff)
	}
	if got := Leaked(before, before); len(got) != 0 {
		t.Errorf("Leaked(before, before) = %v", got)
	}
}

func TestTierOf(t *testing.T) {
	for _, c := range []struct {
		reqs []Req
		want string
	}{
		{nil, TierFast},
		{[]Req{CPUs(2)}, TierFast},
		{[]Req{Root, CPUs(2)}, TierRealtime},
		{[]Req{Cap("CAP_SYS_NICE")}, TierRealtime},
		{[]Req{DevNetTun}, TierRealtime},
		{[]Req{RealTime}, TierRealtime},
		{[]Req{Root, System}, TierSystem}, // system over realtime
	} {
		if got := TierOf(c.reqs...); got != c.want {
			t.Errorf("TierOf(%v) = %s, want %s", c.reqs, got, c.want)
		}
	}
}

// TestTiersEnv: RTLOAD_TEST_TIERS leaves out the tiers it does not list,
// with a reason testsum recognises ("tier: …"); unset runs every tier.
func TestTiersEnv(t *testing.T) {
	if testing.Short() {
		if why := tierOn(TierRealtime); !strings.HasPrefix(why, "tier: realtime") {
			t.Errorf("-short: tierOn(realtime) = %q", why)
		}
		return
	}
	for _, c := range []struct{ env, tier, want string }{
		{"", TierSystem, ""},
		{"realtime", TierRealtime, ""},
		{"fast, realtime", TierRealtime, ""},
		{"realtime", TierSystem, "tier: system test; RTLOAD_TEST_TIERS=realtime leaves it out (make test-system runs it)"},
		{"system", TierRealtime, "tier: realtime test; RTLOAD_TEST_TIERS=system leaves it out (make test-rt runs it)"},
	} {
		t.Setenv(TiersEnv, c.env)
		if got := tierOn(c.tier); got != c.want {
			t.Errorf("%s=%q: tierOn(%s) = %q, want %q", TiersEnv, c.env, c.tier, got, c.want)
		}
	}
}

// TestRealTimeLock: the lock is held (another description's LOCK_NB
// fails) from RealTimeLock to the end of the test, its subtests run under
// it, and it is free again after.
func TestRealTimeLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rt.lock")
	old := lockPath
	lockPath = func() string { return path }
	defer func() { lockPath = old }()
	tryLock := func() error {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	t.Run("holder", func(t *testing.T) {
		RealTimeLock(t)
		if err := tryLock(); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("while held: flock LOCK_NB = %v, want EWOULDBLOCK", err)
		}
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), "TestRealTimeLock/holder") {
			t.Errorf("lock file names %q, not the holder", b)
		}
		t.Run("subtest", func(t *testing.T) { RealTimeLock(t) }) // under the holder's lock: no deadlock
	})
	if err := tryLock(); err != nil {
		t.Errorf("after the holder ended: flock LOCK_NB = %v", err)
	}
}

// TestMkdirTemp: a directory of the prefix left by a process that no
// longer runs is removed; this process's own and a live one's are kept.
func TestMkdirTemp(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := DeadPID(t)
	left := filepath.Join(os.TempDir(), fmt.Sprintf("rtl-t-%d-x", dead))
	live := filepath.Join(os.TempDir(), fmt.Sprintf("rtl-t-%d-y", os.Getppid()))
	for _, d := range []string{left, live} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	own, err := MkdirTemp("rtl-t-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("%s (pid %d no longer runs) kept: %v", left, dead, err)
	}
	for _, d := range []string{live, own} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if want := fmt.Sprintf("rtl-t-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(own), want) {
		t.Errorf("MkdirTemp made %s, want a name starting %s", own, want)
	}
}

// TestWakeupLatencyOf: a complete wakeup log gives the reader's numbers.
func TestWakeupLatencyOf(t *testing.T) {
	h := record.NewHDR(results.WakeupLatencyRange)
	var rows []record.Wakeup
	for i := range 3000 {
		v := int64(i*i%50_000) - 100 // some negative: recorded as 0
		rows = append(rows, record.Wakeup{Tick: uint64(i), LatencyNs: v})
		h.RecordSigned(v)
	}
	if diff := cmp.Diff(results.LatencyOf(h, false), WakeupLatencyOf(rows)); diff != "" {
		t.Errorf("(-recorder +log):\n%s", diff)
	}
}
