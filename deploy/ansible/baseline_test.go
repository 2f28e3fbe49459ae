package ansible

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
)

// baselineDirs are the baselines the good hosts check against, on the
// controller.
type baselineDirs struct {
	// slow is a run of timer-only with every wakeup latency × 1000: any
	// rerun is faster, so check says not slower (0). fast is the same
	// ÷ 1000: any rerun is slower beyond the threshold with its whole CI (1).
	slow, fast string
	// nolog is a run without wakeup logs: with one round no metric has a
	// confidence interval, so check cannot judge (125).
	nolog string
	// linky is the run plus notes.txt, a link to the controller's secret.
	linky string
}

// baselines runs timer-only twice on the machine (1 s each, one without
// wakeup logs) and makes the baselines from them.
func (f *fleet) baselines(t *testing.T) baselineDirs {
	t.Helper()
	run := filepath.Join(f.dir, "base-run")
	f.rtload(t, "run", "timer-only", "--duration", "1s", "-q", "--out", run)
	b := baselineDirs{
		slow:  forgeBaseline(t, run, filepath.Join(f.dir, "base-slow"), 1000, 1),
		fast:  forgeBaseline(t, run, filepath.Join(f.dir, "base-fast"), 1, 1000),
		nolog: filepath.Join(f.dir, "base-nolog"),
		linky: forgeBaseline(t, run, filepath.Join(f.dir, "base-linky"), 1, 1),
	}
	f.rtload(t, "run", "timer-only", "--duration", "1s", "--no-wakeup-log", "-q", "--out", b.nolog)
	if err := os.Symlink(f.secret, filepath.Join(b.linky, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLines checks that status.txt gives each check's exit code, in the
// row's gate line (with the verdict rtload printed) and in the summary
// line.
func checkLines(t *testing.T, txt string) {
	t.Helper()
	if want := "checks: host0 exit 0 (ok), host1 exit 1 (slower), host2 exit 125 (cannot-judge)"; !strings.Contains(txt, want) {
		t.Errorf("status.txt has no line %q", want)
	}
	flat := strings.Join(strings.Fields(txt), " ")
	for _, want := range []string{"rtload check: exit 0: gate: PASS", "rtload check: exit 1: gate: SLOWER", "rtload check: exit 125: gate: CANNOT JUDGE"} {
		if !strings.Contains(flat, want) {
			t.Errorf("status.txt does not show %q", want)
		}
	}
}

// checkChecks checks the hosts that ran rtload check: its exit code is
// their rc, they were given --trust-baseline exactly when the binary has
// it (the baseline is the operator's), and host3's baseline, holding a
// link, was refused on the controller before anything was copied.
func (f *fleet) checkChecks(t *testing.T, st map[string]hostStatus, res string, base baselineDirs) {
	t.Helper()
	trust := strings.Contains(f.rtload(t, "check", "--help"), "--trust-baseline")
	for host, rc := range map[string]int{"host0": 0, "host1": 1, "host2": 125} {
		s := st[host]
		if s.RC == nil || *s.RC != rc {
			t.Errorf("%s: rc %v, want %d; msg %q", host, deref(s.RC), rc, s.Msg)
		}
		if len(s.Argv) < 3 || s.Argv[1] != "check" || slices.Contains(s.Argv, "--trust-baseline") != trust {
			t.Errorf("%s: ran %q, want rtload check BASELINE (--trust-baseline: %v, as the binary has it)", host, s.Argv, trust)
		}
	}
	if s := st["host3"]; !containsAll(s.Msg, base.linky+" refused, nothing copied", `"notes.txt": a symbolic link`) {
		t.Errorf("host3: msg %q, want %s refused naming notes.txt as a link", s.Msg, base.linky)
	}
	if left, _ := filepath.Glob(filepath.Join(res, "*", "baseline-*.tar.gz")); len(left) > 0 {
		t.Errorf("the baselines packed for the hosts were left on the controller: %q", left)
	}
	h := f.host("host3")
	if left, _ := filepath.Glob(filepath.Join(h.dir, "work", "baseline-*")); len(left) > 0 {
		t.Errorf("host3: a baseline was copied: %q", left)
	}
	// No host received the controller's secret.
	for _, h := range f.hosts {
		f.checkTree(t, h.dir, false)
	}
	f.checkTree(t, filepath.Join(f.host("host1").root(), "var/lib/rtload"), false)
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// rtload runs the test's binary on the machine (at most a minute) and
// returns its output.
func (f *fleet) rtload(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, f.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rtload %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// forgeBaseline copies the results directory src to dst with every wakeup
// latency multiplied by mul/div: in each reader's per-wakeup logs and in
// summary.json's wakeup_latency, rebuilt from the scaled rows (stats and
// HdrHistogram alike, through results.LatencyOf). Everything else in
// summary.json is kept as written. It returns dst.
func forgeBaseline(t *testing.T, src, dst string, mul, div int64) string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(src, results.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var sum map[string]any
	if err := dec.Decode(&sum); err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{results.SummaryFile: true}
	trials, _ := sum["trials"].([]any)
	for _, tr := range trials {
		readers, _ := tr.(map[string]any)["readers"].([]any)
		for _, rd := range readers {
			r := rd.(map[string]any)
			logs, _ := r["wakeup_log"].([]any)
			if len(logs) == 0 {
				t.Fatalf("%s: a reader without wakeup logs cannot be forged", src)
			}
			var all []int64
			for _, l := range logs {
				name := l.(string)
				all = append(all, scaleLog(t, filepath.Join(src, name), filepath.Join(dst, name), mul, div)...)
				done[name] = true
			}
			h := record.NewHDR(slices.Max(all) + 1)
			for _, v := range all {
				h.Record(uint64(max(v, 0)))
			}
			b, err := json.Marshal(results.LatencyOf(h, true))
			if err != nil {
				t.Fatal(err)
			}
			var lat any
			if err := json.Unmarshal(b, &lat); err != nil {
				t.Fatal(err)
			}
			r["wakeup_latency"] = lat
		}
	}
	out, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dst, results.SummaryFile), string(out)+"\n", 0o644)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if done[e.Name()] || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), string(b), 0o644)
	}
	return dst
}

// scaleLog writes the per-wakeup CSV src (gzipped when it ends in .gz) to
// dst with its latency_ns column multiplied by mul/div, and returns the
// scaled latencies.
func scaleLog(t *testing.T, src, dst string, mul, div int64) []int64 {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	gz := strings.HasSuffix(src, ".gz")
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %v (%d rows)", src, err, len(rows))
	}
	col := slices.Index(rows[0], "latency_ns")
	if col < 0 {
		t.Fatalf("%s: no latency_ns column in %q", src, rows[0])
	}
	var vals []int64
	for _, row := range rows[1:] {
		v, err := strconv.ParseInt(row[col], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		v = v * mul / div
		row[col] = strconv.FormatInt(v, 10)
		vals = append(vals, v)
	}
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, dst, buf.String(), 0o644)
	return vals
}
