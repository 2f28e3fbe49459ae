package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// writeScenario writes a scenario file into a test directory.
func writeScenario(t *testing.T, name, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidateRequirements: a scenario whose requirements this machine
// does not meet is refused with each one named and how to meet it (exit
// 3); --allow-degraded lists them and goes on.
func TestValidateRequirements(t *testing.T) {
	missing := writeScenario(t, "missing.yaml", "requires:\n  config: [CONFIG_RTLOAD_NO_SUCH_OPTION=y]\n  kernel: '>= 2.6'\n  cpus: 1\nreaders: [{}]\n")
	r := rtload(t, nil, "validate", missing)
	if r.code != ExitPrivilege || !strings.Contains(r.stderr, "does not meet 1 requirement") ||
		!strings.Contains(r.stderr, "CONFIG_RTLOAD_NO_SUCH_OPTION=y: ") || !strings.Contains(r.stderr, "to meet it: ") {
		t.Errorf("exit %d, want %d naming CONFIG_RTLOAD_NO_SUCH_OPTION:\n%s%s", r.code, ExitPrivilege, r.stdout, r.stderr)
	}
	r = rtload(t, nil, "validate", missing, "--allow-degraded")
	if r.code != 0 || !strings.Contains(r.stdout, "requirement not met (--allow-degraded: the results are marked degraded): CONFIG_RTLOAD_NO_SUCH_OPTION=y") ||
		!strings.Contains(r.stdout, ": ok") {
		t.Errorf("--allow-degraded: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	met := writeScenario(t, "met.yaml", "requires: {kernel: '>= 2.6', cpus: 1}\nreaders: [{}]\n")
	if r := rtload(t, nil, "validate", met); r.code != 0 || !strings.Contains(r.stdout, "requirements met on this machine: kernel >= 2.6, cpus 1") {
		t.Errorf("met: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// run refuses before anything is created; --allow-degraded runs and
	// records each unmet requirement in summary.json.
	t.Run("run", func(t *testing.T) {
		testutil.Requires(t, testutil.Root, testutil.CPUs(2))
		out := t.TempDir()
		r := rtload(t, nil, "run", missing, "--duration", "300ms", "--out", out, "-q")
		if _, err := os.Stat(filepath.Join(out, "summary.json")); r.code != ExitPrivilege || err == nil {
			t.Errorf("run: exit %d (summary written: %v), want %d before anything is written\n%s", r.code, err == nil, ExitPrivilege, r.stderr)
		}
		r = rtload(t, nil, "run", missing, "--duration", "300ms", "--out", out, "-q", "--allow-degraded")
		var sum struct {
			Degraded bool     `json:"degraded"`
			Reasons  []string `json:"degraded_reasons"`
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if err := json.Unmarshal(b, &sum); r.code != 0 || err != nil || !sum.Degraded || len(sum.Reasons) == 0 ||
			!strings.HasPrefix(sum.Reasons[0], "requirement not met: CONFIG_RTLOAD_NO_SUCH_OPTION=y: ") {
			t.Errorf("run --allow-degraded: exit %d, %v, summary %+v\n%s", r.code, err, sum, r.stderr)
		}
	})
	// The shipped seed-001 pair: exactly one of init-off and init-on-free
	// holds on any one boot, and the refusal names the parameter.
	off, free := rtload(t, nil, "validate", "cook-hackbench-init-off"), rtload(t, nil, "validate", "cook-hackbench-init-on-free")
	if (off.code == 0) == (free.code == 0) {
		t.Errorf("init-off exit %d, init-on-free exit %d: want one of them refused\n%s\n%s", off.code, free.code, off.stderr, free.stderr)
	}
	for _, res := range []result{off, free} {
		if res.code != 0 && (res.code != ExitPrivilege || !strings.Contains(res.stderr, "init_on_")) {
			t.Errorf("refusal exit %d does not name init_on_*:\n%s", res.code, res.stderr)
		}
	}
}

// TestCPUAutoTaskset runs rtload under taskset -c 0: cpu: auto picks CPU
// 0, and a fixed cpu: 1 is refused with the allowed set named. As root it
// also runs the timer-only scenario with cpu: auto and reads back where
// the reader ran.
func TestCPUAutoTaskset(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil || runtime.NumCPU() < 2 {
		t.Skip("needs taskset (util-linux) and 2 CPUs")
	}
	under0 := func(args ...string) result {
		t.Helper()
		return rtloadVia(t, taskset, append([]string{"-c", "0", binary}, args...)...)
	}
	auto := writeScenario(t, "auto.yaml", "readers: [{name: rt, cpu: auto}]\n")
	if r := under0("validate", auto); r.code != 0 || !strings.Contains(r.stdout, "readers[0] (rt): cpu auto → 0: the only allowed CPU") {
		t.Errorf("auto under taskset -c 0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := rtload(t, nil, "validate", auto); r.code != 0 || !strings.Contains(r.stdout, "cpu auto → ") {
		t.Errorf("auto: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	fixed := writeScenario(t, "fixed.yaml", "readers: [{name: rt, cpu: 1}]\n")
	r := under0("validate", fixed)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "readers[0].cpu: CPU 1 is not one this process may use (allowed: 0, the CPUs this process may use") {
		t.Errorf("fixed cpu 1 under taskset -c 0: exit %d, want %d with the set named\n%s%s", r.code, ExitUsage, r.stdout, r.stderr)
	}
	t.Run("run as root", func(t *testing.T) {
		testutil.Requires(t, testutil.Root, testutil.CPUs(2))
		out := t.TempDir()
		r = under0("run", "timer-only", "--set", "readers[0].cpu=auto", "--duration", "300ms", "--out", out, "-q")
		if r.code != 0 {
			t.Fatalf("run under taskset -c 0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		var sum struct {
			Spec struct {
				Readers []struct {
					CPU     int  `json:"cpu"`
					CPUAuto bool `json:"cpu_auto"`
				} `json:"readers"`
			} `json:"spec"`
			Trials []struct {
				Readers []struct {
					Applied struct {
						CPUs []int `json:"cpus"`
					} `json:"applied"`
				} `json:"readers"`
			} `json:"trials"`
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		if rd := sum.Spec.Readers; len(rd) != 1 || rd[0].CPU != 0 || !rd[0].CPUAuto {
			t.Errorf("summary spec readers %+v, want cpu 0 chosen by auto", rd)
		}
		if len(sum.Trials) == 0 || len(sum.Trials[0].Readers) == 0 || len(sum.Trials[0].Readers[0].Applied.CPUs) != 1 || sum.Trials[0].Readers[0].Applied.CPUs[0] != 0 {
			t.Errorf("reader ran on %+v, want CPU 0 (read back)", sum.Trials)
		}
	})
}
