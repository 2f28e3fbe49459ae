package testutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestRequiresListsEveryUnmet(t *testing.T) {
	var r skipRecorder
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
