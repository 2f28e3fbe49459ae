package session

import (
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/scenario"
)

func TestSoakPlan(t *testing.T) {
	vs := func(names ...string) []scenario.Variant {
		var out []scenario.Variant
		for _, n := range names {
			out = append(out, scenario.Variant{Name: n})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		spec scenario.Spec
		want string
	}{
		{"two variants, 60 s slices, 5 s warm-up",
			scenario.Spec{Variants: vs("recvfrom", "recvmsg"), Slice: scenario.Duration(time.Minute), Warmup: scenario.Duration(5 * time.Second)},
			"variants recvfrom, recvmsg alternate in 1m0s slices, each 55s measured after 5s warm-up (recvfrom, recvmsg, recvfrom, …) until stopped; " +
				"Ctrl-C (or SIGTERM) ends the run and writes complete results for every slice that ran, the current one up to the stop; a second Ctrl-C exits at once"},
		{"three variants, no warm-up", scenario.Spec{Variants: vs("a", "b", "c"), Slice: scenario.Duration(time.Second)},
			"variants a, b, c alternate in 1s slices (a, b, c, a, …) until stopped; " +
				"Ctrl-C (or SIGTERM) ends the run and writes complete results for every slice that ran, the current one up to the stop; a second Ctrl-C exits at once"},
		{"slice 0", scenario.Spec{Variants: vs("a", "b")},
			"1 trial, variant a, until stopped (slice: 0, so b never runs); Ctrl-C (or SIGTERM) ends it and writes its complete results; a second Ctrl-C exits at once"},
		{"no variants", scenario.Spec{},
			"1 trial, until stopped; Ctrl-C (or SIGTERM) ends it and writes its complete results; a second Ctrl-C exits at once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := soakPlan(&tt.spec); got != tt.want {
				t.Errorf("soakPlan:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPlanSaysWhatSetChanged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sets  []string
		check bool   // check's own settings (processes, profile)
		want  string // "": no such line
	}{
		{"--set", []string{"readers[0].cpu=0", "noise[0].threads=2"}, false,
			"changed by --set (the description above is the scenario's own): readers[0].cpu=0, noise[0].threads=2\n"},
		{"check's own settings", nil, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ReadSpec("laight-450")
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlan(spec, Overrides{Sets: tc.sets, Check: tc.check, CheckProcesses: 200})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			printPlan(&b, p.Spec, len(p.Trials), nil, false)
			line := ""
			for _, l := range strings.SplitAfter(b.String(), "\n") {
				if strings.HasPrefix(l, "changed by --set") {
					line = l
				}
			}
			if line != tc.want {
				t.Errorf("plan's --set line %q, want %q\n%s", line, tc.want, b.String())
			}
			if !strings.Contains(b.String(), "reader on CPU 1") {
				t.Errorf("the description is not the scenario's own:\n%s", b.String())
			}
		})
	}
}
