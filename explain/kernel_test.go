package explain

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestKernelLiveFixture explains a profiled run whose profiles are the
// recorded real recvmsg and recvfrom drain profiles: recvmsg − recvfrom
// is attributed to recvmsg's own work below ___sys_recvmsg
// (copy_msghdr_from_user), with ns per call and sample counts, the
// hardened-usercopy hook is named with its state in the run's kernel, and
// the profiler's cost is printed. The text is a golden file.
func TestKernelLiveFixture(t *testing.T) {
	dir := t.TempDir()
	s := testutil.ProfiledSummary(t, dir, map[string]string{"recvfrom": "recvfrom", "recvmsg": "recvmsg"})
	// The run's own note (the sampler's fallback) is printed once, a
	// variant's own under it.
	fallback := "event auto: cycles not supported; sampled cpu-clock instead"
	s.Profiles[0].Notes = []string{fallback}
	s.Profiles[1].Notes = []string{"recvmsg's own note", fallback}
	testutil.WriteSummary(t, dir, s)
	k, err := KernelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k == nil || len(k.Variants) != 2 || len(k.Diffs) != 1 {
		t.Fatalf("kernel = %+v, want 2 variants, 1 difference", k)
	}
	d := k.Diffs[0]
	if d.A != "recvmsg" || d.B != "recvfrom" || d.Err != "" {
		t.Fatalf("diff %s − %s (%s), want recvmsg − recvfrom", d.A, d.B, d.Err)
	}
	var seat *profile.Seat
	for i, st := range d.Attribution.Seats {
		if st.Func == "copy_msghdr_from_user" && st.Kind == profile.SeatOwn {
			seat = &d.Attribution.Seats[i]
		}
	}
	if seat == nil || !seat.Diff.Significant() || seat.Diff.Value <= 0 || seat.SamplesA == 0 || seat.SamplesB != 0 {
		t.Errorf("no significant seat of recvmsg's own work at copy_msghdr_from_user: %+v", d.Attribution.Seats)
	}
	for _, f := range d.Funcs {
		if !f.Kernel || !f.Diff.Significant() {
			t.Errorf("listed function %s: kernel %v, diff %+v: want kernel and significant", f.Func, f.Kernel, f.Diff)
		}
	}
	if len(k.Costs) != 2 || k.Costs[1].Variant != "recvmsg" || k.Costs[1].P50Change() < 0.015 || k.Costs[1].P50Change() > 0.025 {
		t.Errorf("profiler costs %+v, want recvfrom and recvmsg at about +2%%", k.Costs)
	}
	var b bytes.Buffer
	if err := WriteKernel(&b, k); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, fallback) != 1 || !strings.Contains(out, "  note: "+fallback+"\n") || !strings.Contains(out, "    note: recvmsg's own note\n") {
		t.Errorf("notes: the run's once at the top, the variant's under it:\n%s", out)
	}
	for _, want := range []string{
		"recvmsg − recvfrom: ",
		"___sys_recvmsg → copy_msghdr_from_user (",
		"CONFIG_HARDENED_USERCOPY (checks every copy_to/from_user object against slab and stack bounds):",
		"on (CONFIG_HARDENED_USERCOPY=y, no hardened_usercopy= on the command line) in recvmsg's kernel",
		"the profiler's cost (per-call cost of all calls, timed trials vs profiled trials, TSC ticks):",
		"kernel functions whose drain cost differs most, recvmsg − recvfrom",
		"files: profile-recvmsg.pb.gz, profile-recvmsg.folded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	golden(t, "kernel-live", b.Bytes())
}

// TestKernelOneVariant: with one profiled variant there is nothing to
// attribute; the text says so and lists that drain's costliest kernel
// functions. A profile that cannot be read is named with its error.
func TestKernelOneVariant(t *testing.T) {
	dir := t.TempDir()
	s := testutil.ProfiledSummary(t, dir, map[string]string{"recvmsg": "recvmsg"})
	k := KernelOf(s, func(name string) ([]byte, error) { return store.ReadProfileFile(dir, name) })
	var b bytes.Buffer
	if err := WriteKernel(&b, k); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one variant profiled (recvmsg): no other variant to attribute a difference against",
		"kernel functions with the most drain samples of their own"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if len(k.Diffs) != 0 || len(k.Variants[0].Top) == 0 {
		t.Errorf("diffs %d, top %d: want none and some", len(k.Diffs), len(k.Variants[0].Top))
	}
	s.Profiles[0].Pprof = "profile-missing.pb.gz"
	k = KernelOf(s, func(name string) ([]byte, error) { return []byte("not a profile"), nil })
	b.Reset()
	if err := WriteKernel(&b, k); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "profile not read: profile-missing.pb.gz: ") {
		t.Errorf("unreadable profile not named:\n%s", b.String())
	}
}

// TestKernelProfileBounded: a profile whose frames would pass the limit
// (issue 34: one location of L lines referenced S times; 198 gzipped
// bytes took explain past 8 GB and compare past 4 GB) is a note on its
// variant naming the file and the limit, and reading it builds little;
// so is a profile stored without gzip past the limit of what one may
// inflate to (issue 34: one of 72 MB, not inflated, skipped the bound).
func TestKernelProfileBounded(t *testing.T) {
	dir := t.TempDir()
	s := testutil.ProfiledSummary(t, dir, map[string]string{"recvfrom": "recvfrom", "recvmsg": "recvmsg"})
	testutil.WriteSummary(t, dir, s)
	bomb := testutil.PprofFrameBomb(2000, 2000) // 4 M frames
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bomb)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, s.Profiles[0].Pprof), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, s.Profiles[1].Pprof)
	os.Remove(big)
	if err := os.WriteFile(big, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, results.MaxProfileInflatedBytes+1); err != nil {
		t.Fatal(err)
	}
	var k *Kernel
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	k, err = KernelDir(dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		s.Profiles[0].Pprof + ": 4000001 frames (each referenced location's lines times its references), more than the limit of 262144",
		s.Profiles[1].Pprof + ": 16777217 bytes, larger than the limit of 16 MiB for a profile",
	}
	for i, v := range k.Variants {
		if v.Profile != nil || !strings.Contains(v.Err, want[i]) {
			t.Errorf("variant %s: err %q, want %q", v.VariantProfile.Variant, v.Err, want[i])
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing both profiles allocated %d MiB", alloc>>20)
	}
}
