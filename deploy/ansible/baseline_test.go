package ansible

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
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

// checkBaselines runs the playbook with a baseline per host, so that each
// runs rtload check, and checks that every exit code reaches status.json
// and status.txt. The verdicts are made certain, whatever the machine
// does, by the baselines themselves:
//
//	host0       host0's results with every wakeup latency × 1000: not slower, 0
//	host1       the same ÷ 1000: slower, 1 (through sudo, on its own filesystem)
//	host2       a run without wakeup logs: no metric has a CI, 125
//	evil-links  host0's results plus a link to the controller's secret:
//	            refused on the controller (invalid), nothing copied
func (f *fleet) checkBaselines(t *testing.T, res string) {
	t.Helper()
	host0 := filepath.Join(res, "host0", f.kernel)
	slow := forgeBaseline(t, host0, filepath.Join(f.dir, "base-slow"), 1000, 1)
	fast := forgeBaseline(t, host0, filepath.Join(f.dir, "base-fast"), 1, 1000)
	nolog := filepath.Join(f.dir, "base-nolog")
	f.rtload(t, "run", "timer-only", "--duration", "1s", "--no-wakeup-log", "-q", "--out", nolog)
	linky := forgeBaseline(t, host0, filepath.Join(f.dir, "base-linky"), 1, 1)
	if err := os.Symlink(f.secret, filepath.Join(linky, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	trust := strings.Contains(f.rtload(t, "check", "--help"), "--trust-baseline")

	inv := f.inventory(t, "inventory-gate.yml", map[string]map[string]any{
		"host0": {"rtload_check_baseline": slow}, "host1": {"rtload_check_baseline": fast},
		"host2": {"rtload_check_baseline": nolog}, "evil-links": {"rtload_check_baseline": linky},
	})
	gate := filepath.Join(f.dir, "results-gate")
	out, rc := f.playbook(t, "-i", inv, "--limit", "host0,host1,host2,evil-links", "-e", "rtload_results_dir="+gate)
	if want := "1 of 4 hosts without usable results: evil-links: invalid"; rc != 2 || !strings.Contains(out, want) {
		t.Errorf("ansible-playbook with baselines: exit %d, want 2 and %q:\n%s", rc, want, out)
	}
	st, byHost, txt := readStatus(t, gate)
	for _, w := range []struct {
		host, state string
		rc          int
	}{{"host0", "ok", 0}, {"host1", "slower", 1}, {"host2", "cannot-judge", 125}} {
		s := byHost[w.host]
		if s.State != w.state || s.RC == nil || *s.RC != w.rc || s.Gate != fmt.Sprintf("rtload check: exit %d", w.rc) {
			t.Errorf("%s: state %q rc %v gate %q, want %q, %d (rtload check: exit %d); msg %q", w.host, s.State, deref(s.RC), s.Gate, w.state, w.rc, w.rc, s.Msg)
		}
		if len(s.Argv) < 3 || s.Argv[1] != "check" || slices.Contains(s.Argv, "--trust-baseline") != trust {
			t.Errorf("%s: ran %q, want rtload check BASELINE (--trust-baseline: %v, as the binary has it)", w.host, s.Argv, trust)
		}
		if s.Results == "" {
			t.Errorf("%s: no results fetched from its check", w.host)
		}
	}
	if want := "checks: host0 exit 0 (ok), host1 exit 1 (slower), host2 exit 125 (cannot-judge)"; !strings.Contains(txt, want) {
		t.Errorf("status.txt has no line %q", want)
	}
	for _, want := range []string{"rtload check: exit 0: gate: PASS", "rtload check: exit 1: gate: SLOWER", "rtload check: exit 125: gate: CANNOT JUDGE"} {
		if !strings.Contains(strings.Join(strings.Fields(txt), " "), want) {
			t.Errorf("status.txt does not show %q", want)
		}
	}
	checkWhole(t, st, txt)
	// The linked baseline: refused before anything is copied.
	if s := byHost["evil-links"]; s.State != "invalid" || !containsAll(s.Msg, "refused, nothing copied", `"notes.txt": a symbolic link`) {
		t.Errorf("evil-links: state %q msg %q, want invalid naming notes.txt as a link", s.State, s.Msg)
	}
	if left, _ := filepath.Glob(filepath.Join(f.host("evil-links").dir, "work", "baseline-*")); len(left) > 0 {
		t.Errorf("evil-links: a baseline was copied: %q", left)
	}
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
