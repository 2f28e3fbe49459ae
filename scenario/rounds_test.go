package scenario

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRoundsAuto(t *testing.T) {
	src := "readers: [{cpu: 0, period: 10ms}]\nvariants: [{name: a, set: {readers[0].period: 10ms}}, {name: b, set: {readers[0].period: 20ms}}]\nrounds: auto\n"
	s, err := Load("auto.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Rounds != RoundsAuto {
		t.Fatalf("rounds %v, want auto", s.Rounds)
	}
	if err := s.Validate(Host{NumCPU: 2}); err != nil {
		t.Fatal(err)
	}
	// Expand gives the two rounds every auto run makes; the run expands
	// as many as it may run.
	for _, tc := range []struct {
		n, want int
		expand  func() ([]Trial, error)
	}{
		{AutoRounds, 4, s.Expand},
		{5, 10, func() ([]Trial, error) { return s.ExpandRounds(5) }},
	} {
		trials, err := tc.expand()
		if err != nil || len(trials) != tc.want || trials[len(trials)-1].Round != tc.n-1 || trials[1].Variant != "b" {
			t.Errorf("%d rounds: %d trials (err %v), want %d alternating a b", tc.n, len(trials), err, tc.want)
		}
	}
	if _, err := s.ExpandRounds(0); err == nil || !strings.Contains(err.Error(), "rounds: 0 out of range (allowed: 1–1000)") {
		t.Errorf("ExpandRounds(0): %v", err)
	}
	// JSON keeps "auto" (summary.json), numbers stay numbers; both load back.
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"rounds":"auto"`) {
		t.Fatalf("json %s (err %v)", b, err)
	}
	back, err := LoadAsRun("summary.json (spec)", b)
	if err != nil || back.Rounds != RoundsAuto {
		t.Errorf("LoadAsRun: rounds %v, err %v", back.Rounds, err)
	}
	var r Rounds
	if err := json.Unmarshal([]byte("3"), &r); err != nil || r != 3 {
		t.Errorf("unmarshal 3: %v %v", r, err)
	}
	if b, _ := json.Marshal(Rounds(3)); string(b) != "3" {
		t.Errorf("marshal 3: %s", b)
	}
	// --set rounds=auto and back.
	c := s.Clone()
	if err := c.Apply([]string{"rounds=4"}); err != nil || c.Rounds != 4 {
		t.Errorf("--set rounds=4: %v %v", c.Rounds, err)
	}
	if err := c.Apply([]string{"rounds=auto"}); err != nil || c.Rounds != RoundsAuto {
		t.Errorf("--set rounds=auto: %v %v", c.Rounds, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"rounds: many\n", `rounds: expected an integer or auto, got "many" (allowed: 1–1000, or auto)`},
		{"rounds: 0\n", "rounds: 0 out of range (allowed: 1–1000, or auto)"},
		{"rounds: [1]\n", "rounds: expected a count or auto, got a sequence"},
		{"rounds: auto\nrepeat: 3\n", "repeat 3 and rounds -1 differ"},
	} {
		s, err := Load("r.yaml", []byte("readers: [{cpu: 0}]\n"+tc.yaml))
		if err == nil {
			err = s.Validate(Host{NumCPU: 2})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
