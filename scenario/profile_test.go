package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProfileSection decodes each spelling of the profile section into
// what the engine reads, defaults filled.
func TestProfileSection(t *testing.T) {
	for _, tt := range []struct {
		name string
		yaml string
		sets []string
		want Profile
	}{
		// Left out: off, and nothing filled (--set profile.enabled=true fills them).
		{"absent", "", nil, Profile{}},
		{"shorthand true", "profile: true\n", nil, Profile{Enabled: true, Event: ProfileEventAuto, Frequency: DefaultProfileFrequency}},
		{"shorthand false", "profile: false\n", nil, Profile{}},
		// A section without enabled is on.
		{"section", "profile: {event: cpu-clock, frequency: 20000}\n", nil, Profile{Enabled: true, Event: ProfileEventCPUClock, Frequency: 20000}},
		{"empty section", "profile: {}\n", nil, Profile{Enabled: true, Event: ProfileEventAuto, Frequency: DefaultProfileFrequency}},
		{"section switched off", "profile: {enabled: false, event: cycles}\n", nil, Profile{Event: ProfileEventCycles}},
		// rtload run --profile.
		{"--set enabled", "", []string{"profile.enabled=true"}, Profile{Enabled: true, Event: ProfileEventAuto, Frequency: DefaultProfileFrequency}},
		// A field set on the command line turns it on too.
		{"--set event", "", []string{"profile.event=cycles"}, Profile{Enabled: true, Event: ProfileEventCycles, Frequency: DefaultProfileFrequency}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(baseDoc+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(tt.sets); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Profile); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
			if err := s.Validate(Host{NumCPU: 2}); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestProfileValidate(t *testing.T) {
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"unknown event", baseDoc + "profile: {event: branches}\n", `x.yaml:4:18: profile.event: unknown event "branches" (allowed: auto, cpu-clock, cycles)`},
		{"frequency too high", baseDoc + "profile: {frequency: 1000000}\n", "profile.frequency: 1000000 out of range (allowed: 10–100000)"},
		{"shorthand not a boolean", baseDoc + "profile: yes please\n", `x.yaml:4:10: profile.enabled: expected a boolean, got "yes please" (allowed: true, false)`},
		{"unknown key", baseDoc + "profile: {period: 10}\n", `profile.period: unknown field "period" (allowed: enabled, event, frequency)`},
		{"soak", "duration: 0s\n" + baseDoc + "profile: true\n", "profile.enabled: profiled trials need a duration: a soak (duration 0) never reaches them"},
		{"no readers", "probes: [{kind: file_write}]\nprofile: true\n", "profile.enabled: no readers to profile (allowed: a scenario with readers)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err == nil {
				err = s.Validate(Host{NumCPU: 2})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want containing %q", err, tt.want)
			}
		})
	}
}

// TestExpandProfiled: each timed trial is followed by its profiled twin,
// a deep copy of the same variant.
func TestExpandProfiled(t *testing.T) {
	s, err := LoadFile("testdata/laight-450.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]string{"profile.enabled=true"}); err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Index, Round    int
		Variant, Method string
		Profiled        bool
	}
	var got []row
	for _, tr := range trials {
		got = append(got, row{tr.Index, tr.Round, tr.Variant, tr.Spec.Readers[0].Method.String(), tr.Profiled})
	}
	want := []row{
		{0, 0, "recvfrom", "recvfrom", false},
		{1, 0, "recvfrom", "recvfrom", true},
		{2, 0, "recvmsg", "recvmsg", false},
		{3, 0, "recvmsg", "recvmsg", true},
		// ABBA: round 1 runs recvmsg first, each twin after its trial.
		{4, 1, "recvmsg", "recvmsg", false},
		{5, 1, "recvmsg", "recvmsg", true},
		{6, 1, "recvfrom", "recvfrom", false},
		{7, 1, "recvfrom", "recvfrom", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trials (-want +got):\n%s", diff)
	}
	trials[1].Spec.Readers[0].Endpoints[0] = "changed"
	if trials[0].Spec.Readers[0].Endpoints[0] != "socks" {
		t.Errorf("a profiled trial shares its timed twin's reader endpoints")
	}
}
