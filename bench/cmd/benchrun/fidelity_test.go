package main

import (
	"slices"
	"testing"
)

// TestSelected: a plain run takes every section but the opt-in
// cross-process per-call one; -only names what runs; an A/B of two rtload
// builds takes the cross-process per-call comparison (the in-process one
// compiles this tree's drain in).
func TestSelected(t *testing.T) {
	names := func(c config) (out []string) {
		for _, s := range sections {
			if c.selected(s) {
				out = append(out, s.name)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		c    config
		want []string
	}{
		{"default", config{}, []string{"fidelity", "wakeup", "wakesplit", "overhead", "scale", "methods"}},
		{"-only percall", config{only: []string{"percall"}}, []string{"percall"}},
		{"-only fidelity,wakeup", config{only: []string{"wakeup", "fidelity"}}, []string{"fidelity", "wakeup"}},
		{"-baseline", config{baseline: "old/rtload"}, []string{"percall", "wakeup", "wakesplit", "overhead", "scale", "methods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(tc.c); !slices.Equal(got, tc.want) {
				t.Errorf("sections %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFidelityArgv(t *testing.T) {
	c := config{fidelity: "bin/fidelity", fidelitySyscall: "glibc"}
	c.fidelityRun, c.fidelityBlock = 120e9, 100e6
	got := shell(fidelityArgv(c, 5))
	want := "bin/fidelity -duration 2m0s -block 100ms -spin 5 -sockets 450 -methods recvfrom,recvmsg -cpu 1 -priority 80 -c-syscall glibc -summary=false"
	if got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
}
