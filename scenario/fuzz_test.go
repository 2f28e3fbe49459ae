package scenario

import (
	"os"
	"path/filepath"
	"testing"
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
		s, err := Load("fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatalf("Load returned a spec with error %v", err)
			}
			return
		}
		host := Host{NumCPU: 2}
		if err := s.Validate(host); err != nil {
			return
		}
		trials, err := s.Expand()
		if err != nil {
			t.Fatalf("valid spec does not expand: %v\n%s", err, data)
		}
		if want := s.Rounds * max(1, len(s.Variants)); len(trials) != want {
			t.Fatalf("%d trials, want %d", len(trials), want)
		}
		if err := s.Clone().Validate(host); err != nil {
			t.Fatalf("clone of a valid spec fails: %v\n%s", err, data)
		}
		// Rounds repeat the first round; validate one round of trials.
		perRound := len(trials) / s.Rounds
		for i, tr := range trials {
			if tr.Index != i || tr.Round != i/perRound || tr.Variant != trials[i%perRound].Variant {
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
