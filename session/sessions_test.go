package session

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

func TestSessionMismatch(t *testing.T) {
	env := results.Env{Kernel: "6.1.0", KernelVersion: "#1 SMP", Cmdline: "ro quiet", CPUModel: "EPYC", CPUs: 2, Arch: "x86_64", BootID: "a", Hostname: "h"}
	first := &results.Summary{Env: env, Spec: results.Spec(`{"name":"x","processes":4,"rounds":2,"readers":[{"cpu":1,"method":"recvfrom"}]}`)}
	for _, c := range []struct {
		name string
		spec string
		env  func(e *results.Env)
		want []string
	}{
		{"another boot, more processes and rounds", `{"name":"x","processes":10,"rounds":4,"readers":[{"cpu":1,"method":"recvfrom"}]}`,
			func(e *results.Env) { e.BootID, e.Hostname = "b", "h2" }, nil},
		{"another method", `{"name":"x","processes":4,"rounds":2,"readers":[{"cpu":1,"method":"recvmsg"}]}`, nil,
			[]string{"scenario readers[0].method: recvfrom, this run recvmsg"}},
		{"a field added", `{"name":"x","processes":4,"rounds":2,"readers":[{"cpu":1,"method":"recvfrom","priority":70}]}`, nil,
			[]string{"scenario readers[0].priority: (unset), this run 70"}},
		{"another kernel and command line", `{"name":"x","processes":4,"rounds":2,"readers":[{"cpu":1,"method":"recvfrom"}]}`,
			func(e *results.Env) { e.Kernel, e.Cmdline = "6.2.0", "ro quiet hardened_usercopy=off" },
			[]string{`kernel: "6.1.0", this boot "6.2.0"`, `command line: "ro quiet", this boot "ro quiet hardened_usercopy=off"`}},
		{"an escape in a value", `{"name":"x\u001b[2J","processes":4,"rounds":2,"readers":[{"cpu":1,"method":"recvfrom"}]}`, nil,
			[]string{`scenario name: x, this run x\x1b[2J`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := env
			if c.env != nil {
				c.env(&e)
			}
			got := sessionMismatch(first, results.Spec(c.spec), e)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			for _, g := range got {
				if strings.ContainsRune(g, 0x1b) {
					t.Errorf("raw escape in %q", g)
				}
			}
		})
	}
}
