package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/facts"
	"github.com/rtload/rtload/compare/load"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/interop"
	"github.com/rtload/rtload/plot"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/session"
)

// TestOneNumberPerQuantity computes every output from one real run and
// checks that they give the same p50, p99, p99.9 and max for the same
// quantity: summary.json, the text report, intervals.jsonl, the live line,
// compare, explain, plot, the Prometheus endpoint, the interop files and
// the wakeup log itself. The interval is the trial's length, so each
// trial's one interval record covers exactly the trial's samples.
func TestOneNumberPerQuantity(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	spec, err := session.LoadSpec("laight-450", []string{"duration=2s", "interval=2s", "warmup=200ms", "rounds=1", "noise[0].threads=1"})
	if err != nil {
		t.Fatal(err)
	}
	trials, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	d, _, err := store.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv, err := exporter.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var live bytes.Buffer
	ll := session.NewLiveLine(&live, false)
	var ivs []results.Interval
	sum, err := engine.Run(context.Background(), spec, trials, engine.Options{OutDir: dir, Results: d, Exporter: srv,
		OnInterval: func(iv results.Interval) { ivs = append(ivs, iv); ll.Update(iv) }})
	if err != nil {
		t.Fatal(err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.SetSpec(specJSON); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	if _, err := interop.WriteInterop(d.Dir, sum); err != nil {
		t.Fatal(err)
	}
	s, err := store.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Trials) != 2 || len(ivs) != 2 {
		t.Fatalf("%d trials, %d intervals; want 2 and 2", len(s.Trials), len(ivs))
	}
	metrics := scrapeMetrics(t, srv.Addr())
	var text bytes.Buffer
	if err := report.Report(&text, s); err != nil {
		t.Fatal(err)
	}
	runs, err := load.Runs([]string{dir}, []string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	cmpRes, err := facts.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	expl, err := explain.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := plot.Load([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wakeText := reportBlock(t, text.String(), "wakeup latency (µs")
	callText := reportBlock(t, text.String(), "per-call stats (")
	for i, tr := range s.Trials {
		r := tr.Readers[0]
		w, pc := r.WakeupLatency, r.PerCallTicks
		t.Logf("%s: wakeup p50 %d p99 %d p99.9 %d max %d ns; per call p50 %d p99 %d max %d ticks",
			tr.Variant, w.P50Ns, w.P99Ns, w.P999Ns, w.MaxNs, pc.P50Ticks, pc.P99Ticks, pc.MaxTicks)
		if w.Count == 0 || pc.Count == 0 || r.RingDropped != 0 {
			t.Fatalf("%s: nothing measured, or wakeup records dropped (%d); trial marks %+v", tr.Variant, r.RingDropped, tr.Marks)
		}
		for _, q := range []results.Quantity{results.P50, results.P99, results.P999, results.Max} {
			us := report.Microseconds(w.Ns(q))
			agree(t, tr.Variant, "wakeup "+q.String()+" µs", us, map[string]string{
				"report":          wakeText[q.String()][i],
				"intervals.jsonl": report.Microseconds(ivs[i].WakeupLatency.Ns(q)),
				"compare":         fmt.Sprintf("%.1f", pct(cmpRes.Columns[i].WakeupUs, q)),
				"plot":            report.Microseconds(cols[i].WakeupLatency.Ns(q)),
			})
			ticks := strconv.FormatFloat(pc.Ticks(q), 'f', 0, 64)
			agree(t, tr.Variant, "per-call "+q.String()+" ticks", ticks, map[string]string{
				"report":          callText[q.String()][i],
				"intervals.jsonl": strconv.FormatFloat(ivs[i].PerCallTicks.Ticks(q), 'f', 0, 64),
				"compare":         strconv.FormatFloat(pct(cmpRes.Columns[i].PerCallTicks, q), 'f', 0, 64),
			})
		}
		// The exact max of the linear histogram is the HdrHistogram's.
		if r.PerCall.All.Max != pc.MaxTicks {
			t.Errorf("%s: per-call max %d in the linear histogram, %d in the HDR summary", tr.Variant, r.PerCall.All.Max, pc.MaxTicks)
		}
		// explain, the live line, the wakeup log, the exporter, interop.
		e := expl[i].Wakeups
		if e == nil || e.P50 != w.P50Ns || e.P99 != w.P99Ns || e.Max != w.MaxNs {
			t.Errorf("%s: explain %+v, summary p50 %d p99 %d max %d", tr.Variant, e, w.P50Ns, w.P99Ns, w.MaxNs)
		}
		if want := fmt.Sprintf("wakeup p99 %sµs max %sµs", report.Microseconds(w.Ns(results.P99)), report.Microseconds(w.Ns(results.Max))); !strings.Contains(live.String(), want) {
			t.Errorf("%s: live line lacks %q:\n%s", tr.Variant, want, live.String())
		}
		if want := fmt.Sprintf("call p99 %d ticks", pc.P99Ticks); !strings.Contains(live.String(), want) {
			t.Errorf("%s: live line lacks %q", tr.Variant, want)
		}
		rows, _, err := wakelog.ReaderWakeups(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		if l := testutil.WakeupLatencyOf(rows); l.P50Ns != w.P50Ns || l.P99Ns != w.P99Ns || l.P999Ns != w.P999Ns || l.MaxNs != w.MaxNs {
			t.Errorf("%s: the wakeup log gives %+v", tr.Variant, l)
		}
		var logMax float64
		for _, x := range cols[i].Wakeups {
			logMax = max(logMax, x.LatencyUs)
		}
		// plot holds µs (ns / 1e3, a float64): back in ns it is the log's
		// integer only after rounding (130.853 × 1e3 is not 130853 in
		// float64).
		if math.Round(logMax*1e3) != float64(w.MaxNs) {
			t.Errorf("%s: plot's logged max %.3f µs, summary %d ns", tr.Variant, logMax, w.MaxNs)
		}
		labels := fmt.Sprintf(`reader="rt",round="%d",scenario="laight-450",variant="%s"`, tr.Round, tr.Variant)
		if got := metrics["rtload_interval_wakeup_latency_max_seconds{"+labels+"}"]; got != float64(w.MaxNs)/1e9 {
			t.Errorf("%s: exporter interval max %v s, summary %d ns", tr.Variant, got, w.MaxNs)
		}
		// The exporter's per-call buckets are the report's table rows.
		all := r.PerCall.All
		var cum uint64
		for b, n := range all.Counts {
			cum += n
			le := float64(all.Origin) - 1
			if b > 0 {
				le = float64(all.Lower(b) + all.Width - 1)
			}
			if b == 0 && all.Origin == 0 {
				continue
			}
			key := "rtload_recv_call_cost_ticks_bucket{le=\"" + strconv.FormatFloat(le, 'g', -1, 64) + "\"," + labels + "}"
			if got, ok := metrics[key]; !ok || got != float64(cum) {
				t.Errorf("%s: exporter bucket le=%v: %v (present %v), table rows give %d", tr.Variant, le, got, ok, cum)
				break
			}
		}
		if got := metrics["rtload_recv_call_cost_ticks_count{"+labels+"}"]; got != float64(all.Total) {
			t.Errorf("%s: exporter count %v, table total %d", tr.Variant, got, all.Total)
		}
	}
	checkInteropMax(t, dir, s)
	checkClosing(t, dir, s, cmpRes)
}

// checkClosing: the closing block run and report print (at every level)
// gives each variant's mean per-call cost as the report's "mean ns/call"
// and its wakeup latency p99 as summary.json, and the seed's change with
// the interval compare --format json holds for it.
func checkClosing(t *testing.T, dir string, s *results.Summary, res *compare.Result) {
	t.Helper()
	var b bytes.Buffer
	if err := session.WriteRun(&b, s, dir, "", report.Quiet); err != nil {
		t.Fatal(err)
	}
	closing := b.String()
	t.Logf("closing block:\n%s", closing)
	var full bytes.Buffer
	if err := report.Report(&full, s); err != nil {
		t.Fatal(err)
	}
	var meanNs []string // the report's "mean ns/call" cells
	for _, l := range strings.Split(full.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "mean" && f[1] == "ns/call" {
			meanNs = f[2:]
		}
	}
	if len(meanNs) != len(s.Trials) {
		t.Fatalf("report's mean ns/call row %q", meanNs)
	}
	for i, tr := range s.Trials {
		r := tr.Readers[0]
		wantMean := meanNs[i]
		wantP99 := report.Microseconds(r.WakeupLatency.Ns(results.P99))
		want := fmt.Sprintf("%s: mean per-call cost %s ns, wakeup latency p99 %s µs\n", tr.Variant, wantMean, wantP99)
		if !strings.Contains(closing, want) {
			t.Errorf("%s: closing block lacks %q (report and summary.json)", tr.Variant, want)
		}
	}
	var doc bytes.Buffer
	if err := compare.WriteJSON(&doc, res); err != nil {
		t.Fatal(err)
	}
	var back compare.Result // the numbers as compare --format json prints them
	if err := json.Unmarshal(doc.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, m := range back.Metrics {
		if m.Name != "mean per-call cost" || m.Unit != "ns" || m.Verdict == compare.VerdictBaseline {
			continue
		}
		iv := m.Interval
		if iv == nil || iv.PointPct == nil || iv.LowPct == nil || iv.HighPct == nil {
			if !strings.Contains(closing, "recvmsg vs recvfrom, per call: no interval") {
				t.Errorf("no interval in compare's JSON, and the closing block does not say so:\n%s", closing)
			}
			continue
		}
		want := fmt.Sprintf("recvmsg %+.1f%% per call [%+.1f, %+.1f] vs recvfrom, n = %s: ", *iv.PointPct, *iv.LowPct, *iv.HighPct, iv.N)
		if !strings.Contains(closing, want) {
			t.Errorf("closing block lacks compare --format json's %q", want)
		}
	}
	if !strings.HasSuffix(closing, "results: "+dir+"\n") {
		t.Errorf("closing block does not end on the results directory")
	}
}

// agree fails unless every output printed want.
func agree(t *testing.T, variant, what, want string, got map[string]string) {
	t.Helper()
	for out, v := range got {
		if v != want {
			t.Errorf("%s %s: summary.json %s, %s %s", variant, what, want, out, v)
		}
	}
}

// pct reads quantity q of compare's percentiles.
func pct(p compare.Percentiles, q results.Quantity) float64 {
	switch q {
	case results.P50:
		return p.P50
	case results.P90:
		return p.P90
	case results.P99:
		return p.P99
	case results.P999:
		return p.P999
	}
	return p.Max
}

// reportBlock finds the report's block whose title starts with title and
// returns its rows by first word: row name → one cell per column.
func reportBlock(t *testing.T, text, title string) map[string][]string {
	t.Helper()
	i := strings.Index(text, "\n"+title)
	if i < 0 {
		t.Fatalf("report has no block %q", title)
	}
	block := text[i+1:]
	if j := strings.Index(block, "\n\n"); j >= 0 {
		block = block[:j]
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(block, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[1] == "ticks" || f[1] == "ns" { // "p50 ticks  2817  3201"
			f = append(f[:1], f[2:]...)
		}
		rows[f[0]] = f[1:]
	}
	return rows
}

// scrapeMetrics reads /metrics into name{labels} → value.
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[sortLabels(line[:i])] = v
	}
	return out
}

// sortLabels puts a series' le label first and the rest in name order, as
// the test's keys have them.
func sortLabels(series string) string {
	name, rest, ok := strings.Cut(series, "{")
	if !ok {
		return series
	}
	labels := strings.Split(strings.TrimSuffix(rest, "}"), ",")
	var le []string
	var others []string
	for _, l := range labels {
		if strings.HasPrefix(l, "le=") {
			le = append(le, l)
		} else {
			others = append(others, l)
		}
	}
	return name + "{" + strings.Join(append(le, others...), ",") + "}"
}

// checkInteropMax: wakeup.hlog's Interval_Max and cyclictest's Max
// Latencies are the summary's exact max.
func checkInteropMax(t *testing.T, dir string, s *results.Summary) {
	t.Helper()
	f, err := interop.ReadHlogFile(filepath.Join(dir, interop.WakeupHlogFile))
	if err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(filepath.Join(dir, interop.WakeupCyclictestFile))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	_, meta, err := interop.ReadCyclictestHist(fd)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range s.Trials {
		w := tr.Readers[0].WakeupLatency
		if f.Intervals[i].Max != w.MaxNs || meta.Max[i] != uint64(w.MaxNs)/1000 {
			t.Errorf("%s: hlog max %d ns, cyclictest max %d µs; summary %d ns", tr.Variant, f.Intervals[i].Max, meta.Max[i], w.MaxNs)
		}
	}
}
