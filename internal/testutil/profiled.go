package testutil

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	pprofprofile "github.com/google/pprof/profile"

	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/results"
)

// liveFixture is profile/testdata/attrib-live.json: the recorded real
// drain profiles of a recvmsg and a recvfrom loop (profile/sampler's
// TestAttributeRecvmsgOverRecvfrom -record-fixture) and their calls.
type liveFixture struct {
	Kernel   string `json:"kernel"`
	Variants []struct {
		Name    string `json:"name"`
		Calls   uint64 `json:"calls"`
		DrainNs int64  `json:"drain_cpu_ns"`
	} `json:"variants"`
}

// profileTestdata is profile/testdata, found from this file.
func profileTestdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "profile", "testdata")
}

// ProfiledSummary is SeedSummary with profiled trials and their
// profiles, written into the results directory dir as a profiled run
// writes them: each variant v of SeedSummary gets a profiled trial per
// round (Profiled, index after its timed one's, per-call cost 2% above
// it) and a VariantProfile whose pprof file (profile-v.pb.gz, and the
// folded stacks) is the live fixture's drain profile of method
// fixture[v] ("recvmsg" or "recvfrom"), with that fixture's calls and
// drain time, as a SCHED_FIFO reader's. The env says
// CONFIG_HARDENED_USERCOPY=y. A variant missing from fixture has no
// profile.
func ProfiledSummary(t testing.TB, dir string, fixture map[string]string) *results.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(profileTestdata(), "attrib-live.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx liveFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	s := SeedSummary()
	s.Env = results.Env{Kernel: fx.Kernel, CPUs: 2,
		KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "n"},
		Hardening:    map[string]string{}}
	for i := range s.Trials {
		s.Trials[i].Index = 2 * i
	}
	for i, tr := range s.Trials {
		p := tr
		p.Index, p.Profiled = 2*i+1, true
		p.Readers = append([]results.Reader(nil), tr.Readers...)
		r := &p.Readers[0]
		r.PerCallTicks = scaleTicks(tr.Readers[0].PerCallTicks, 1.02)
		r.WakeupLog = nil
		r.Profile = &results.ReaderProfile{TID: r.Applied.TID, Event: "cpu-clock"}
		s.ProfiledTrials = append(s.ProfiledTrials, p)
	}
	for _, variant := range []string{"recvfrom", "recvmsg"} {
		method, ok := fixture[variant]
		if !ok {
			continue
		}
		vp := writeFixtureProfile(t, dir, variant, method, fx)
		for _, p := range s.ProfiledTrials {
			if p.Variant == variant {
				vp.Trials = append(vp.Trials, p.Index)
			}
		}
		s.Profiles = append(s.Profiles, vp)
	}
	return s
}

// writeFixtureProfile copies the fixture's drain profile of method into
// dir as variant's profile and describes it.
func writeFixtureProfile(t testing.TB, dir, variant, method string, fx liveFixture) results.VariantProfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(profileTestdata(), "attrib-"+method+".pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pprofprofile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.FromPprof(pp)
	if err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded); err != nil {
		t.Fatal(err)
	}
	vp := results.VariantProfile{Variant: variant, Pprof: profile.PprofName(variant), Folded: profile.FoldedName(variant),
		Event: p.Event, Unit: p.Unit, Period: p.Period, Lost: p.Lost, Throttles: p.Throttles, RealTime: true}
	for _, f := range []struct {
		name string
		data []byte
	}{{vp.Pprof, data}, {vp.Folded, folded.Bytes()}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ph := p.PhaseSamples()
	vp.Samples, vp.DrainSamples, vp.SleepSamples, vp.OtherSamples = p.Samples(), ph[profile.PhaseDrain], ph[profile.PhaseSleep], ph[profile.PhaseOther]
	vp.DrainCPUNs = p.PhaseWeight(profile.PhaseDrain)
	for _, v := range fx.Variants {
		if v.Name == method {
			// The loop's CPU time stands for a real-time reader's measured time.
			vp.Calls, vp.DrainNs = v.Calls, v.DrainNs
		}
	}
	if vp.Calls == 0 {
		t.Fatalf("fixture has no variant %s", method)
	}
	return vp
}

// scaleTicks is t with every value times k (its HDR encoding dropped, so
// merges of it are worst-round).
func scaleTicks(t results.TickStats, k float64) results.TickStats {
	sc := func(v uint64) uint64 { return uint64(float64(v) * k) }
	return results.TickStats{Count: t.Count, MinTicks: sc(t.MinTicks), MeanTicks: t.MeanTicks * k, P50Ticks: sc(t.P50Ticks),
		P90Ticks: sc(t.P90Ticks), P99Ticks: sc(t.P99Ticks), P999Ticks: sc(t.P999Ticks), MaxTicks: sc(t.MaxTicks)}
}
