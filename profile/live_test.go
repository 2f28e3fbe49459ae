package profile

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	pprofprofile "github.com/google/pprof/profile"
)

// liveFixture is testdata/attrib-live.json with the two drain profiles it
// names, recorded by profile/sampler's TestAttributeRecvmsgOverRecvfrom
// with -record-fixture from the real recvmsg and recvfrom loops.
type liveFixture struct {
	Recorded string `json:"recorded"`
	Kernel   string `json:"kernel"`
	Variants []struct {
		Name          string  `json:"name"`
		Calls         uint64  `json:"calls"`
		DrainNs       int64   `json:"drain_cpu_ns"`
		WallNsPerCall float64 `json:"wall_ns_per_call"`
	} `json:"variants"`
}

// loadLive returns the fixture's variants, each with its drain time from
// drain (the sampled CPU time, or the wall time of the receive calls).
func loadLive(t *testing.T, wall bool) (a, b Variant) {
	t.Helper()
	raw, err := os.ReadFile("testdata/attrib-live.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx liveFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	var vs []Variant
	for _, v := range fx.Variants {
		f, err := os.Open("testdata/attrib-" + v.Name + ".pb.gz")
		if err != nil {
			t.Fatal(err)
		}
		pp, err := pprofprofile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		p, err := FromPprof(pp)
		if err != nil {
			t.Fatal(err)
		}
		drain := time.Duration(v.DrainNs)
		if wall {
			drain = time.Duration(v.WallNsPerCall * float64(v.Calls))
		}
		vs = append(vs, Variant{Name: v.Name, Profile: p, Calls: v.Calls, Drain: drain})
	}
	if len(vs) != 2 {
		t.Fatalf("fixture has %d variants, want 2", len(vs))
	}
	t.Logf("fixture recorded %s on %s", fx.Recorded, fx.Kernel)
	return vs[0], vs[1]
}

// TestAttributeLiveFixture runs the rule on the recorded real profiles,
// with the sampled CPU time as drain time and with the loops' wall time
// (inflated by preemption on a loaded machine, recvfrom's more than
// recvmsg's, which the notes must say). Either way the seats of own work
// are recvmsg's copy_msghdr_from_user and kfree below ___sys_recvmsg,
// and no seat is an entry function (in the function table the entry
// functions weigh −1226 (__sys_recvfrom) to +1711 (__sys_recvmsg)
// ns/call with CPU time).
func TestAttributeLiveFixture(t *testing.T) {
	for _, wall := range []bool{false, true} {
		a, b := loadLive(t, wall)
		at, err := Attribute(a, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("wall=%v\n%s", wall, at.Text())
		if sum := at.Own.Value + at.Entry.Diff.Value + at.Shared.Value + at.Interrupted.Value; !near(sum, at.Total, 1e-6) {
			t.Errorf("parts add up to %v, total %v", sum, at.Total)
		}
		entry := map[string]bool{}
		for _, f := range at.Funcs {
			if f.Entry {
				entry[f.Func] = true
			}
		}
		for _, f := range []string{"__sys_recvmsg", "___sys_recvmsg", "____sys_recvmsg", "__x64_sys_recvfrom", "__sys_recvfrom"} {
			if !entry[f] {
				t.Errorf("wall=%v: %s is not an entry function", wall, f)
			}
		}
		own := map[string]Seat{}
		for _, s := range at.Seats {
			if entry[s.Func] {
				t.Errorf("wall=%v: seat %s is an entry function", wall, s.Func)
			}
			if s.Kind == SeatOwn {
				own[s.Func] = s
			}
		}
		for _, f := range []string{"copy_msghdr_from_user", "kfree"} {
			s, ok := own[f]
			if !ok || s.Diff.Value <= 0 || !s.Diff.Significant() || s.SamplesB != 0 || s.Path[len(s.Path)-2] != "___sys_recvmsg" {
				t.Errorf("wall=%v: own seat %s: %+v (found %v), want recvmsg's, significant, below ___sys_recvmsg", wall, f, s, ok)
			}
		}
		// The fixture has 836 samples below copy_msghdr_from_user, 11 of
		// them in an interrupt taken there.
		if got := own["copy_msghdr_from_user"].SamplesA; got != 825 {
			t.Errorf("copy_msghdr_from_user has %d samples of own work, the fixture 836 less 11 interrupted", got)
		}
		if wall != (len(at.Notes) == 2 && strings.Contains(at.Notes[1], "recvfrom's measured drain time is 2.1× the CPU time")) {
			t.Errorf("wall=%v: notes %q", wall, at.Notes)
		}
	}
}
