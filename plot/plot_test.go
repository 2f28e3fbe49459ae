package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
)

// minImageBytes is the smallest plausible image: three panels with axes,
// text and a few hundred points are well above it (about 100 KB as PNG),
// while an empty canvas is smaller.
const minImageBytes = 10 << 10

// writeRun writes a results directory of variants × rounds trials, run
// A B A B, each reader logging n wakeups 1 ms apart; slow shifts every
// cost and latency up so columns differ.
func writeRun(t *testing.T, variants []string, rounds, n int, slow uint64) string {
	t.Helper()
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	s := &results.Summary{
		Scenario: "synthetic", Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Clock: results.ClockInfo{Kind: "tsc", Unit: "TSC ticks", Hz: 2e9, Invariant: true},
	}
	deadline := int64(1_000_000_000)
	for round := range rounds {
		for _, v := range variants {
			all := record.NewLinear(128, 64, 8256)
			hdr := record.NewHDR(int64(10 * time.Second))
			name := fmt.Sprintf("wakeups-%02d-%s-r%d-rt", len(s.Trials), v, round)
			w, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: name})
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				all.Record(300 + slow + uint64(i%50)*37)
				lat := int64(5000+slow*10) + int64(i%17)*300
				if i == n/2 {
					lat = 250_000 // a spike
				}
				hdr.RecordSigned(lat)
				if err := w.Write(&record.Wakeup{Tick: uint64(i), DeadlineNs: deadline, LatencyNs: lat, Calls: 3}); err != nil {
					t.Fatal(err)
				}
				deadline += int64(time.Millisecond)
			}
			all.Record(9000) // overflow
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			deadline += int64(200 * time.Millisecond) // setup between trials
			snap := all.Snapshot("ticks")
			s.Trials = append(s.Trials, results.Trial{
				Index: len(s.Trials), Round: round, Variant: v,
				Readers: []results.Reader{{
					Name: "rt", Method: v, Sockets: 4,
					PerCall:       results.PerCall{Unit: "ticks", All: snap, Data: snap, EAGAIN: record.Snapshot{}},
					WakeupLatency: results.LatencyOf(hdr, true),
					WakeupLog:     w.Stats().Files,
				}},
			})
		}
	}
	if err := d.WriteSummary(s); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoad(t *testing.T) {
	a := writeRun(t, []string{"recvfrom", "recvmsg"}, 2, 100, 0)
	b := writeRun(t, []string{"recvfrom"}, 1, 50, 200)
	cols, err := Load([]string{a, b}, []string{"base", "new"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Label            string
		Rounds           int
		Calls, Wakeups   int
		LatencyCount     int64
		FirstS           float64
		Unit             string
		OverflowAllCalls uint64
	}
	var got []row
	for _, c := range cols {
		r := row{Label: c.Label, Rounds: c.Rounds, Calls: int(c.All.Total), Wakeups: len(c.Wakeups),
			Unit: c.Unit, OverflowAllCalls: c.All.OverflowCount}
		if c.Latency != nil {
			r.LatencyCount = c.Latency.TotalCount()
		}
		if len(c.Wakeups) > 0 {
			r.FirstS = c.Wakeups[0].Seconds
		}
		got = append(got, r)
	}
	want := []row{
		// Rounds merged: 2 × (100 calls + 1 overflow); time from the run's first deadline.
		{"base recvfrom", 2, 202, 200, 200, 0, "TSC ticks, 2 GHz", 2},
		// Second trial starts after 100 wakeups of 1 ms and 200 ms of setup.
		{"base recvmsg", 2, 202, 200, 200, 0.3, "TSC ticks, 2 GHz", 2},
		{"new recvfrom", 1, 51, 50, 50, 0, "TSC ticks, 2 GHz", 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := writeRun(t, []string{"a"}, 1, 10, 0)
	missingLog := writeRun(t, []string{"a"}, 1, 10, 0)
	if err := os.Remove(filepath.Join(missingLog, "wakeups-00-a-r0-rt.csv")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dirs    []string
		labels  []string
		wantErr string
	}{
		// Nothing to plot is an error, not an empty image.
		{"no dirs", nil, nil, "no results directories"},
		// Labels must pair with directories.
		{"label count", []string{dir}, []string{"a", "b"}, "2 labels for 1 results directories"},
		// A directory without summary.json names the file.
		{"no summary", []string{t.TempDir()}, nil, "summary.json"},
		// A log listed in summary.json but gone is reported, not skipped.
		{"missing log", []string{missingLog}, nil, "wakeups-00-a-r0-rt.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.dirs, tc.labels)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Load error %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRender(t *testing.T) {
	a := writeRun(t, []string{"recvfrom", "recvmsg"}, 2, 300, 0)
	b := writeRun(t, []string{"recvfrom"}, 1, 300, 400)
	cols, err := Load([]string{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		// Defaults: all calls, linear counts, 12 × 14 in.
		{"png", Options{Out: filepath.Join(out, "a.png")}},
		// Log counts put empty buckets on a floor: the log scale must not panic.
		{"png log data", Options{Out: filepath.Join(out, "b.png"), LogCounts: true, Hist: "data", Width: 8 * vg.Inch, Height: 9 * vg.Inch}},
		// An empty histogram (EAGAIN here) still draws the other panels.
		{"png eagain empty", Options{Out: filepath.Join(out, "c.PNG"), Hist: "eagain", Title: "eagain"}},
		{"svg", Options{Out: filepath.Join(out, "d.svg")}},
		{"svg log", Options{Out: filepath.Join(out, "e.svg"), LogCounts: true, Width: 6 * vg.Inch, Height: 7 * vg.Inch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Render(cols, tc.opt); err != nil {
				t.Fatal(err)
			}
			checkImage(t, tc.opt)
		})
	}
}

// checkImage opens o.Out and checks its size and content type: a PNG
// decodes at the requested size in pixels; an SVG is an XML document
// holding one <svg> element.
func checkImage(t *testing.T, o Options) {
	t.Helper()
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < minImageBytes {
		t.Errorf("%s: %d bytes, want ≥ %d", o.Out, len(data), minImageBytes)
	}
	w, h := o.Width, o.Height
	if w == 0 {
		w, h = DefaultWidth, DefaultHeight
	}
	t.Logf("%s: %d bytes", filepath.Base(o.Out), len(data))
	ct := http.DetectContentType(data)
	switch strings.ToLower(filepath.Ext(o.Out)) {
	case ".png":
		if ct != "image/png" {
			t.Errorf("%s: content type %q, want image/png", o.Out, ct)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", o.Out, err)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: %v", o.Out, err)
		}
		wantW, wantH := int(float64(w/vg.Inch)*DPI+0.5), int(float64(h/vg.Inch)*DPI+0.5)
		if cfg.Width != wantW || cfg.Height != wantH {
			t.Errorf("%s: %d × %d pixels, want %d × %d", o.Out, cfg.Width, cfg.Height, wantW, wantH)
		}
	case ".svg":
		// DetectContentType sniffs "<?xml" as XML; it has no SVG type.
		if ct != "text/xml; charset=utf-8" {
			t.Errorf("%s: content type %q, want text/xml; charset=utf-8", o.Out, ct)
		}
		s := string(data)
		if !strings.HasPrefix(s, "<?xml") || strings.Count(s, "<svg") != 1 || !strings.HasSuffix(strings.TrimSpace(s), "</svg>") {
			t.Errorf("%s: not one <?xml …><svg>…</svg> document: starts %q", o.Out, s[:min(len(s), 80)])
		}
		if want := fmt.Sprintf(`width="%gpt"`, w.Points()); !strings.Contains(s, want) {
			t.Errorf("%s: no %s", o.Out, want)
		}
		// Text is drawn as text: the legend names the columns.
		for _, label := range []string{"recvfrom", "recvmsg", "wakeup latency CDF"} {
			if !strings.Contains(s, label) {
				t.Errorf("%s: no %q", o.Out, label)
			}
		}
	default:
		t.Fatalf("%s: unexpected extension", o.Out)
	}
}

func TestRenderErrors(t *testing.T) {
	cols, err := Load([]string{writeRun(t, []string{"a"}, 1, 10, 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		cols    []Column
		opt     Options
		wantIs  error
		wantErr string
	}{
		// The extension picks the format; others name the allowed ones.
		{"jpeg", cols, Options{Out: filepath.Join(dir, "x.jpg")}, ErrFormat, `".jpg" (allowed: .png, .svg)`},
		{"no extension", cols, Options{Out: filepath.Join(dir, "x")}, ErrFormat, "allowed: .png, .svg"},
		{"empty out", cols, Options{}, ErrFormat, "allowed: .png, .svg"},
		{"bad hist", cols, Options{Out: filepath.Join(dir, "x.png"), Hist: "errors"}, ErrHist, `"errors" (allowed: all, data, eagain)`},
		// No columns is an error, not an empty image.
		{"no columns", nil, Options{Out: filepath.Join(dir, "x.png")}, nil, "no columns"},
		{"missing dir", cols, Options{Out: filepath.Join(dir, "nodir", "x.png")}, os.ErrNotExist, "nodir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Render(tc.cols, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Render error %v, want containing %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("Render error %v is not %v", err, tc.wantIs)
			}
			if _, err := os.Stat(tc.opt.Out); tc.opt.Out != "" && err == nil {
				t.Errorf("%s written despite the error", tc.opt.Out)
			}
		})
	}
}

func TestHistXYs(t *testing.T) {
	s := record.Snapshot{Width: 10, Origin: 5, Overflow: 35, Counts: []uint64{1, 0, 4, 0}}
	for _, tc := range []struct {
		name string
		s    record.Snapshot
		want plotter.XYs
	}{
		// Trailing empty buckets are cut; the line drops at the last upper edge.
		{"trim", s, plotter.XYs{{X: 0, Y: 1}, {X: 5, Y: 0}, {X: 15, Y: 4}, {X: 25, Y: 0}}},
		// With overflow, every bucket is drawn and overflow is one more bucket at Overflow.
		{"overflow", func() record.Snapshot { o := s; o.OverflowCount = 2; return o }(),
			plotter.XYs{{X: 0, Y: 1}, {X: 5, Y: 0}, {X: 15, Y: 4}, {X: 25, Y: 0}, {X: 35, Y: 2}, {X: 45, Y: 0}}},
		// Nothing recorded: no line.
		{"empty", record.Snapshot{Width: 10, Counts: make([]uint64, 4)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, histXYs(tc.s)); diff != "" {
				t.Errorf("histXYs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThinKeepsSpikes(t *testing.T) {
	ws := make([]Wakeup, 100_000)
	for i := range ws {
		ws[i] = Wakeup{Seconds: float64(i) / 1000, LatencyUs: 5}
	}
	ws[77_777].LatencyUs = 900
	xys := thin(ws, 1000)
	if len(xys) > 1000 {
		t.Fatalf("thin kept %d points, want ≤ 1000", len(xys))
	}
	found := false
	for _, p := range xys {
		found = found || p.Y == 900 && p.X == ws[77_777].Seconds
	}
	if !found {
		t.Errorf("thin lost the spike at %v s", ws[77_777].Seconds)
	}
}

type plotTick = gplot.Tick

func TestTicks(t *testing.T) {
	labels := func(ts []plotTick) []string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		got  []plotTick
		want []string
	}{
		// Round steps of 1, 2 or 5 × 10^k.
		{"linear", linearTicks(0, 2.8, 10), []string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5"}},
		// Less than a decade: every integer multiple is labelled.
		{"log narrow", logTicks(5, 21.9), []string{"5", "6", "7", "8", "9", "10", "20"}},
		// Several decades: 1, 2, 5 × 10^k.
		{"log wide", logTicks(0.5, 300), []string{"0.5", "1", "2", "5", "10", "20", "50", "100", "200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, labels(tc.got)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderRealDir draws the results directory named by RTLOAD_PLOT_DIR
// (from `rtload run … --out DIR`) as PNG and SVG.
func TestRenderRealDir(t *testing.T) {
	dir := os.Getenv("RTLOAD_PLOT_DIR")
	if dir == "" {
		t.Skip("RTLOAD_PLOT_DIR not set: no real results directory to draw")
	}
	cols, err := Load([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, ext := range []string{".png", ".svg"} {
		o := Options{Out: filepath.Join(out, "real"+ext), LogCounts: true}
		if err := Render(cols, o); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(o.Out)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < minImageBytes {
			t.Errorf("%s: %d bytes, want ≥ %d", o.Out, len(data), minImageBytes)
		}
		t.Logf("%s: %d bytes, %d columns", o.Out, len(data), len(cols))
	}
}

// TestReaderLogs: with two readers "rt" and "rt2" in a trial, each column
// gets its own reader's wakeups (the files summary.json lists for it),
// whatever the names look like.
func TestReaderLogs(t *testing.T) {
	dir := t.TempDir()
	d := testutil.ResultsDir(t, dir)
	tr := results.Trial{Variant: "v"}
	for i, name := range []string{"rt", "rt2"} {
		l, err := wakelog.Create(wakelog.Config{Dir: d.Dir, Base: results.WakeupLogBase(0, "v", 0, name)})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 10 * (i + 1) {
			l.Write(&record.Wakeup{Tick: uint64(k), DeadlineNs: int64(k) * 1e6, LatencyNs: int64(1000 * (i + 1))})
		}
		l.Close()
		tr.Readers = append(tr.Readers, results.Reader{Name: name, WakeupLog: l.Stats().Files})
	}
	if err := d.WriteSummary(&results.Summary{Trials: []results.Trial{tr}}); err != nil {
		t.Fatal(err)
	}
	cols, err := Load([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{10, 20} {
		if len(cols[i].Wakeups) != want || cols[i].WakeupLatency.MaxNs != int64(1000*(i+1)) {
			t.Errorf("column %s: %d wakeups, max %d; want %d, %d", cols[i].Label, len(cols[i].Wakeups), cols[i].WakeupLatency.MaxNs, want, 1000*(i+1))
		}
	}
}
