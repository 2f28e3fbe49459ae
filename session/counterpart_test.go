package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/configs"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

func baselineOf(t *testing.T, name string, sets ...string) *results.Summary {
	t.Helper()
	data, err := configs.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := scenario.Load("built-in:"+name+".yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Apply(sets); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &results.Summary{Scenario: name, File: "built-in:" + name + ".yaml", Spec: results.Spec(j)}
}

func TestCounterparts(t *testing.T) {
	names := func(s *results.Summary) []string {
		var out []string
		for _, c := range counterpartSpecs(s) {
			out = append(out, c.Name)
		}
		return out
	}
	for _, c := range []struct {
		base string
		want []string
	}{
		{"laight-450-unhardened", []string{"laight-450-hardened"}},
		{"laight-450-hardened", []string{"laight-450-unhardened"}},
		{"cook-hackbench-init-off", []string{"cook-hackbench-init-on-alloc", "cook-hackbench-init-on-free", "cook-hackbench"}}, // cook-hackbench requires nothing
		{"laight-450", nil},
	} {
		if diff := cmp.Diff(c.want, names(baselineOf(t, c.base))); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", c.base, diff)
		}
	}
}

func TestAsCounterpart(t *testing.T) {
	base := baselineOf(t, "laight-450-unhardened", "traffic[0].size=9000", "readers[0].cpu=0")
	var log bytes.Buffer
	spec, err := asCounterpart(&log, "/srv/unhard", base, "laight-450-hardened")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Name != "laight-450-hardened" || spec.Traffic[0].Size != 9000 || spec.Readers[0].CPU.String() != "0" {
		t.Errorf("spec %s, size %v, cpu %v", spec.Name, spec.Traffic[0].Size, spec.Readers[0].CPU)
	}
	if got := requiresText(spec.Requires); !strings.Contains(got, "hardened_usercopy=on") || strings.Contains(got, "=off") {
		t.Errorf("requires %s", got)
	}
	for _, want := range []string{"keeps the baseline's overrides of laight-450-unhardened: readers[0].cpu: 1 → 0, traffic[0].size: 64B → 9KB", "as laight-450-hardened"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	_, err = asCounterpart(&log, "/srv/unhard", base, "laight-450")
	var ue UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not a counterpart") || !strings.Contains(err.Error(), "rtload check /srv/unhard laight-450") {
		t.Errorf("laight-450 as a counterpart: %v", err)
	}
}

func TestRequirementFix(t *testing.T) {
	base := baselineOf(t, "laight-450-unhardened")
	req := &engine.RequirementsError{Scenario: "base/summary.json (spec)", Unmet: []engine.Unmet{{Requirement: "hardened_usercopy=off", Have: "this boot has it on", Fix: "boot with hardened_usercopy=off"}}}
	err := requirementFix(req, "/srv/unhard", base, "")
	if !errors.As(err, new(UsageError)) { // exit ExitUsage
		t.Errorf("%T, want a usage error (exit %d)", err, ExitUsage)
	}
	msg := err.Error()
	if strings.Contains(msg, `\n`) || !strings.Contains(msg, "\n  - hardened_usercopy=off: this boot has it on") {
		t.Errorf("message:\n%s", msg)
	}
	last := msg[strings.LastIndex(msg, "\n")+1:]
	if !strings.HasPrefix(last, "nothing was run (exit 2): ") || !(strings.Contains(last, "--as laight-450-hardened") || strings.Contains(last, "rtload check /srv/unhard SCENARIO")) {
		t.Errorf("last line %q", last)
	}
}
