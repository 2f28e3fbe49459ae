package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const seccompReader = baseEP + baseTr + "readers:\n  - endpoints: [e]\n"

// TestSeccompSection decodes each spelling of readers[i].seccomp into
// what the engine reads, defaults filled.
func TestSeccompSection(t *testing.T) {
	for _, tt := range []struct {
		name string
		yaml string
		sets []string
		want Seccomp
	}{
		{"absent: no filter", "", nil, Seccomp{Profile: SeccompNone}},
		{"shorthand", "    seccomp: runtime-default\n", nil, Seccomp{Profile: SeccompRuntimeDefault}},
		{"section", "    seccomp: {profile: runtime-default}\n", nil, Seccomp{Profile: SeccompRuntimeDefault}},
		// allow-all takes its default length; it is the only profile with one.
		{"allow-all, default length", "    seccomp: allow-all\n", nil, Seccomp{Profile: SeccompAllowAll, Instructions: defaultSeccompInstructions}},
		{"allow-all, 1024", "    seccomp: {profile: allow-all, instructions: 1024}\n", nil, Seccomp{Profile: SeccompAllowAll, Instructions: 1024}},
		{"--set profile", "", []string{"readers[0].seccomp.profile=allow-all"}, Seccomp{Profile: SeccompAllowAll, Instructions: defaultSeccompInstructions}},
		{"--set the section: its profile", "", []string{"readers[0].seccomp=runtime-default"}, Seccomp{Profile: SeccompRuntimeDefault}},
		{"--set both", "", []string{"readers[0].seccomp.profile=allow-all", "readers[0].seccomp.instructions=4096"}, Seccomp{Profile: SeccompAllowAll, Instructions: 4096}},
		// The defaulted length goes with its profile.
		{"--set back to none", "    seccomp: allow-all\n", []string{"readers[0].seccomp.profile=none"}, Seccomp{Profile: SeccompNone}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(seccompReader+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(tt.sets); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Readers[0].Seccomp); diff != "" {
				t.Errorf("seccomp (-want +got):\n%s", diff)
			}
			if err := s.Validate(Host{NumCPU: 2}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestSeccompValidate(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"unknown profile", seccompReader + "    seccomp: docker\n", nil,
			`x.yaml:5:14: readers[0].seccomp.profile: unknown profile "docker" (allowed: none, runtime-default, allow-all)`},
		{"unknown key", seccompReader + "    seccomp: {profile: allow-all, insns: 8}\n", nil,
			`readers[0].seccomp.insns: unknown field "insns" (allowed: profile, instructions)`},
		{"too long", seccompReader + "    seccomp: {profile: allow-all, instructions: 4097}\n", nil,
			"x.yaml:5:49: readers[0].seccomp.instructions: 4097 out of range (allowed: 4–4096)"},
		{"shorter than its fixed part", seccompReader + "    seccomp: {profile: allow-all, instructions: 3}\n", nil,
			"readers[0].seccomp.instructions: 3 out of range (allowed: 4–4096)"},
		{"length without allow-all", seccompReader + "    seccomp: {profile: runtime-default, instructions: 64}\n", nil,
			"readers[0].seccomp.instructions: instructions 64 with profile runtime-default (allowed: profile: allow-all"},
		{"--set unknown profile", seccompReader, []string{"readers[0].seccomp.profile=strict"},
			`--set readers[0].seccomp.profile: unknown profile "strict" (allowed: none, runtime-default, allow-all)`},
		{"--set the section", seccompReader, []string{"readers[0].seccomp=docker"},
			`--set readers[0].seccomp.profile: unknown profile "docker" (allowed: none, runtime-default, allow-all)`},
		// A filter cannot come off a thread: seccomp variants run a trial each.
		{"interleaved", seccompReader + "duration: 1s\ninterleave: 100ms\nvariants:\n  - {name: a, set: {readers[0].seccomp.profile: none}}\n  - {name: b, set: {readers[0].seccomp.profile: runtime-default}}\n", nil,
			"variants[1].set.readers[0].seccomp.profile: cannot interleave: a seccomp filter cannot be removed from a thread, so each variant needs a reader thread of its own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err == nil {
				err = s.Apply(tt.sets)
			}
			if err == nil {
				err = s.Validate(Host{NumCPU: 2})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

// TestSeccompInterleaveAuto: interleave: auto runs seccomp variants one
// trial each and says why.
func TestSeccompInterleaveAuto(t *testing.T) {
	s, err := Load("x.yaml", []byte(seccompReader+"duration: 1s\ninterleave: auto\nvariants:\n  - {name: a, set: {readers[0].seccomp: none}}\n  - {name: b, set: {readers[0].seccomp: runtime-default}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(Host{NumCPU: 2}); err != nil {
		t.Fatal(err)
	}
	block, note := s.InterleaveBlock()
	if block != 0 || !strings.Contains(note, "a seccomp filter cannot be removed from a thread") {
		t.Errorf("block %v, note %q; want 0 and why", block, note)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range trials {
		got = append(got, tr.Variant+":"+tr.Spec.Readers[0].Seccomp.Profile.String())
	}
	if diff := cmp.Diff([]string{"a:none", "b:runtime-default"}, got); diff != "" {
		t.Errorf("trials (-want +got):\n%s", diff)
	}
}
