package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzLoad feeds arbitrary bytes to Load. It must never panic, and any spec
// that loads and validates must expand, and its clone and every trial must
// validate again. Seeds: ../configs/*.yaml and testdata/fuzz/*.yaml.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{
		filepath.Join("..", "configs", "*.yaml"),
		filepath.Join("testdata", "fuzz", "*.yaml"),
		filepath.Join("testdata", "*.yaml"),
	} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		"",
		"---\n",
		"readers: [{}]\n",
		"readers: [{}]\n---\nreaders: [{}]\n",
		"a: &a [*a, *a]\n",
		"readers: [&r {cpu: 1}, *r, *r]\nvariants: [{name: v, set: {readers[2].policy: other}}]\n",
		"endpoints: [{count: 1}]\nreaders: [{endpoints: [ep0]}]\nvariants: [{name: a, set: {\"endpoints[0].port\": 65535}}, {name: b, set: {readers[0].priority: 99}}]\n",
		"rounds: 1000\nreaders: [{}]\nvariants: [{name: a}, {name: b}]\n",
		"traffic: [{size: 1GiB, rate: 1e308}]\n",
		"duration: 9223372036854775807ns\nreaders: [{period: 100us}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		host := Host{NumCPU: 2}
		lenient, lerr := LoadLenient("fuzz.yaml", data)
		s, err := Load("fuzz.yaml", data)
		// LoadLenient holds what Load refuses for Validate: Validate of
		// its spec never panics, and passes only when Load's does.
		if lerr == nil {
			verr := lenient.Validate(host)
			if err != nil && verr == nil {
				t.Fatalf("Load refuses (%v), LoadLenient's spec validates\n%s", err, data)
			}
		} else if err == nil {
			t.Fatalf("LoadLenient refuses (%v), Load does not\n%s", lerr, data)
		}
		if err != nil {
			if s != nil {
				t.Fatalf("Load returned a spec with error %v", err)
			}
			return
		}
		if err := s.Validate(host); err != nil {
			return
		}
		trials, err := s.Expand()
		if err != nil {
			t.Fatalf("valid spec does not expand: %v\n%s", err, data)
		}
		timed := 0
		for i, tr := range trials {
			if !tr.Profiled {
				timed++
			} else if i == 0 || trials[i-1].Profiled || trials[i-1].Variant != tr.Variant {
				t.Fatalf("profiled trial %d does not follow its variant's timed trial", i)
			}
		}
		if want := s.Rounds.planned() * max(1, len(s.Variants)); timed != want {
			t.Fatalf("%d timed trials, want %d", timed, want)
		}
		if err := s.Clone().Validate(host); err != nil {
			t.Fatalf("clone of a valid spec fails: %v\n%s", err, data)
		}
		// Rounds repeat the first round; validate one round of trials.
		// Odd rounds run the variants in reverse order (ABBA), each
		// profiled twin right after its timed trial.
		perRound := len(trials) / s.Rounds.planned()
		for i, tr := range trials {
			j := i % perRound
			if tr.Round%2 == 1 {
				j = perRound - 1 - j
				if s.Profile.Enabled {
					j = j ^ 1 // the pair (timed, profiled) keeps its order
				}
			}
			if tr.Index != i || tr.Round != i/perRound || tr.Variant != trials[j].Variant {
				t.Fatalf("trial %d = {Index %d, Round %d, Variant %q}: out of order", i, tr.Index, tr.Round, tr.Variant)
			}
			if i >= perRound {
				continue
			}
			// The trial already carries its overrides; validate it
			// without re-applying the other variants on top.
			c := tr.Spec.Clone()
			c.Variants = nil
			if err := c.Validate(host); err != nil {
				t.Fatalf("trial %d (%s) of a valid spec fails: %v\n%s", tr.Index, tr.Variant, err, data)
			}
		}
	})
}

// FuzzApply feeds arbitrary --set lists (one path=value per line) to Apply
// on the seed scenario. It must never panic; an Apply that fails keeps the
// good entries and leaves a spec that still validates or reports; and a
// spec that applies and validates must expand into trials that validate.
func FuzzApply(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "laight-450.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"duration=2s",
		"duration=0\ninterval=1s",
		"readers[0].method=recvmmsg\nreaders[0].batch=64",
		"readers[0].policy=other",
		"readers[0].policy=fifo\nreaders[0].priority=99",
		"readers[0].endpoints=socks,socks",
		"readers[0].endpoints=",
		"noise[0].kind=messaging\nnoise[0].fds=2",
		"noise[0].cpus=0,1,0",
		"traffic[0].cpu=1\ntraffic[0].cpu=null",
		"endpoints[0].kind=tap\nendpoints[0].address=",
		"variants[1].set=x",
		"name=../x",
		"rounds=1000",
		"report.overflow=64",
		"readers[0].period=100us",
		"a.b[0].c=1",
		"readers[9999999999999999999].cpu=1",
		"=",
		"[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sets string) {
		s, err := Load("seed.yaml", seed)
		if err != nil {
			t.Fatal(err)
		}
		host := Host{NumCPU: 2}
		list := strings.Split(sets, "\n")
		if len(list) > 64 {
			list = list[:64]
		}
		applyErr := s.Apply(list)
		if applyErr != nil && !errors.Is(applyErr, ErrInvalid) {
			t.Fatalf("Apply error is not ErrInvalid: %v", applyErr)
		}
		before := s.Clone()
		verr := s.Validate(host)
		if diff := cmp.Diff(before, s, cmp.AllowUnexported(Spec{})); diff != "" {
			t.Fatalf("Validate mutated the spec (-before +after):\n%s", diff)
		}
		if applyErr != nil || verr != nil {
			return
		}
		trials, err := s.Expand()
		if err != nil {
			t.Fatalf("valid spec does not expand: %v\nsets %q", err, list)
		}
		for _, tr := range trials[:len(trials)/s.Rounds.planned()] {
			c := tr.Spec.Clone()
			c.Variants = nil
			if err := c.Validate(host); err != nil {
				t.Fatalf("trial %s of a valid spec fails: %v\nsets %q", tr.Variant, err, list)
			}
		}
	})
}
