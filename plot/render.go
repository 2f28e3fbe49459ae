package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// ErrFormat is returned (wrapped) for an output file whose extension is
// neither .png nor .svg.
var ErrFormat = errors.New("unsupported image format")

// ErrHist is returned (wrapped) for an Options.Hist other than "", "all",
// "data" or "eagain".
var ErrHist = errors.New("unknown per-call histogram")

// Default image size: 12 × 14 inches, 1152 × 1344 pixels in a PNG.
const (
	DefaultWidth  = 12 * vg.Inch
	DefaultHeight = 14 * vg.Inch
)

// DPI is the resolution of PNG output: a PNG is Width/vg.Inch×DPI pixels wide.
const DPI = 96

// MaxPoints is the most wakeups drawn per column in the latency-over-time
// panel. Longer logs are cut into MaxPoints/2 equal time slices and each
// slice keeps its lowest and highest sample, so every spike stays visible.
const MaxPoints = 20000

// Options say what Render draws and where. The zero value of every field
// but Out is usable.
type Options struct {
	// Out is the image file to write; its extension picks the format:
	// ".png" or ".svg" (case-insensitive).
	Out string
	// LogCounts draws the per-call histograms' counts on a log scale
	// (empty buckets sit on a floor of 0.5 below the 1 line).
	LogCounts bool
	// Width and Height of the whole image; 0 means DefaultWidth and
	// DefaultHeight.
	Width, Height vg.Length
	// Title is drawn above the panels; "" names the scenarios and runs.
	Title string
	// Hist picks the per-call histogram: "all" (data + EAGAIN calls; ""
	// means all), "data" or "eagain".
	Hist string
}

// Validate checks o without changing it: Out's extension and Hist. Errors
// wrap ErrFormat or ErrHist.
func (o Options) Validate() error {
	if _, err := format(o.Out); err != nil {
		return err
	}
	switch o.Hist {
	case "", "all", "data", "eagain":
	default:
		return fmt.Errorf("plot: %w %q (allowed: all, data, eagain)", ErrHist, o.Hist)
	}
	if o.Width < 0 || o.Height < 0 {
		return fmt.Errorf("plot: size %v × %v: must be positive", o.Width, o.Height)
	}
	return nil
}

// format returns "png" or "svg" for path's extension.
func format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("plot: %s: %w %q (allowed: .png, .svg)", path, ErrFormat, ext)
	}
}

// Render draws cols into one image at o.Out, three panels stacked: the
// per-call histograms overlaid as step lines (x: bucket lower edge in clock
// ticks, the last step being the overflow bucket; y: calls), wakeup
// latency over time (a point per logged wakeup; x: seconds into the run, y:
// µs), and the wakeup latency CDF (x: µs on a log scale, y: fraction of
// wakeups at or below). Columns keep one colour in every panel. A failed
// write removes the partial file.
func Render(cols []Column, o Options) (err error) {
	if err := o.Validate(); err != nil {
		return err
	}
	if len(cols) == 0 {
		return errors.New("plot: no columns to draw")
	}
	kind, _ := format(o.Out)
	w, h := o.Width, o.Height
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}

	panels := []*gplot.Plot{histPanel(cols, o), timePanel(cols), cdfPanel(cols)}

	var canvas vg.CanvasWriterTo
	switch kind {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))}
	case "svg":
		canvas = vgsvg.New(w, h)
	}
	dc := draw.New(canvas)
	// Fill the whole page: panels paint only their own rectangles.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	title := o.Title
	if title == "" {
		title = defaultTitle(cols)
	}
	ts := draw.TextStyle{Color: color.Black, Font: gplot.DefaultFont, Handler: gplot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	ts.Font.Size = vg.Points(14)
	top := vg.Points(10)
	dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - top}, title)
	tiles := draw.Tiles{
		Rows: len(panels), Cols: 1,
		PadTop: top + ts.Height(title) + vg.Points(6), PadBottom: vg.Points(8),
		PadLeft: vg.Points(8), PadRight: vg.Points(12), PadY: vg.Points(18),
	}
	grid := make([][]*gplot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*gplot.Plot{p}
	}
	for i, row := range gplot.Align(grid, tiles, dc) {
		panels[i].Draw(row[0])
	}

	// The image goes through the link-safe writer every rtload file does:
	// a planted link at --out is refused, never written through.
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot: render %s: %w", o.Out, err)
	}
	if err := safeio.WriteOutputFile(o.Out, buf.Bytes()); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// defaultTitle names the scenarios and, with several runs, the runs.
func defaultTitle(cols []Column) string {
	var scen, runs []string
	for _, c := range cols {
		if c.Scenario != "" && !slices.Contains(scen, c.Scenario) {
			scen = append(scen, c.Scenario)
		}
		if !slices.Contains(runs, c.Run) {
			runs = append(runs, c.Run)
		}
	}
	t := "rtload"
	if len(scen) > 0 {
		t += ": " + strings.Join(scen, ", ")
	}
	if len(runs) > 1 {
		t += " (runs " + strings.Join(runs, ", ") + ")"
	} else if len(runs) == 1 {
		t += " (" + runs[0] + ")"
	}
	return t
}

// newPanel returns a plot with rtload's common styling.
func newPanel(title, x, y string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// headroom scales a panel's top above its data so the legend, top right,
// does not cover the highest points.
const headroom = 1.25

// colour is column i's colour in every panel.
func colour(i int) color.Color { return plotutil.Color(i) }

// histPanel draws the chosen per-call histogram of each column as a step
// line over its buckets, the overflow bucket drawn as one more bucket at
// Overflow.
func histPanel(cols []Column, o Options) *gplot.Plot {
	which := o.Hist
	if which == "" {
		which = "all"
	}
	unit := cols[0].Unit
	for _, c := range cols {
		if c.Unit != unit {
			unit = "ticks, mixed units: " + unit + " / " + c.Unit
			break
		}
	}
	calls := map[string]string{"all": "all calls (data + EAGAIN)", "data": "data calls", "eagain": "EAGAIN calls"}[which]
	ylabel := "calls"
	if o.LogCounts {
		ylabel = "calls (log)"
	}
	p := newPanel("per-call cost, "+calls,
		"cost per call, "+unit+" (bucket lower edge; last step = overflow bucket)", ylabel)
	const floor = 0.5 // log scale: empty buckets
	drawn := false
	for i, c := range cols {
		s := c.All
		switch which {
		case "data":
			s = c.Data
		case "eagain":
			s = c.EAGAIN
		}
		xys := histXYs(s)
		if len(xys) == 0 {
			continue
		}
		drawn = true
		if o.LogCounts {
			for j := range xys {
				xys[j].Y = max(xys[j].Y, floor)
			}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			continue // NaN or Inf: cannot come from counts
		}
		l.StepStyle = plotter.PostStep
		l.Color = colour(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (n=%d, mean %.0f)", c.Label, s.Total, s.Mean()), l)
	}
	if !drawn {
		p.Title.Text += " (no per-call histograms)"
		return p
	}
	p.X.Tick.Marker = roundTicks(10)
	p.Y.Tick.Marker = roundTicks(5)
	p.Y.Min = 0
	p.Y.Max *= headroom // room for the legend above the peaks
	if o.LogCounts {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.TickerFunc(logTicks)
		p.Y.Min = floor
		p.Y.Max *= headroom * headroom
	}
	return p
}

// histXYs is the step line of s: a point at each bucket's lower edge with
// its count, the overflow bucket after the last, and a closing point at
// the upper edge of the last non-empty bucket. Trailing empty buckets are
// left out; an empty s gives nil.
func histXYs(s record.Snapshot) plotter.XYs {
	last := -1
	for i, c := range s.Counts {
		if c > 0 {
			last = i
		}
	}
	if last < 0 && s.OverflowCount == 0 {
		return nil
	}
	var xys plotter.XYs
	n := last + 1
	if s.OverflowCount > 0 {
		n = len(s.Counts)
	}
	for i := range n {
		xys = append(xys, plotter.XY{X: float64(s.Lower(i)), Y: float64(s.Counts[i])})
	}
	end := float64(s.Lower(n)) // upper edge of the last bucket drawn
	if s.OverflowCount > 0 {
		end = float64(s.Overflow)
		xys = append(xys, plotter.XY{X: end, Y: float64(s.OverflowCount)})
		end += float64(max(s.Width, 1))
	}
	xys = append(xys, plotter.XY{X: end, Y: 0})
	return xys
}

// timePanel draws every logged wakeup as a point: time into the run
// against latency.
func timePanel(cols []Column) *gplot.Plot {
	p := newPanel("wakeup latency over time (one point per wakeup)", "time into run, s (deadline − first deadline)", "wakeup latency, µs")
	drawn := false
	for i, c := range cols {
		if len(c.Wakeups) == 0 {
			continue
		}
		drawn = true
		xys := thin(c.Wakeups, MaxPoints)
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			continue
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: colour(i), Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s (%d wakeups, p99 %s µs, max %s µs)", c.Label, max(c.LoggedWakeups, len(c.Wakeups)),
			report.Microseconds(c.WakeupLatency.Ns(results.P99)), report.Microseconds(c.WakeupLatency.Ns(results.Max))), sc)
	}
	if !drawn {
		p.Title.Text += " (no per-wakeup logs)"
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Y.Max *= headroom
	p.X.Tick.Marker = roundTicks(10)
	p.Y.Tick.Marker = roundTicks(5)
	return p
}

// thin returns ws as points, or at most limit of them: ws cut into
// limit/2 time slices, each keeping its lowest and highest latency (a
// thinner, as Load keeps a long log).
func thin(ws []Wakeup, limit int) plotter.XYs {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		lo, hi = min(lo, w.Seconds), max(hi, w.Seconds)
	}
	th := newThinner(len(ws), lo, hi, limit)
	for _, w := range ws {
		th.add(w)
	}
	kept := th.points()
	xys := make(plotter.XYs, len(kept))
	for i, w := range kept {
		xys[i] = plotter.XY{X: w.Seconds, Y: w.LatencyUs}
	}
	return xys
}

// cdfPanel draws each column's wakeup latency CDF from its HDR
// histogram, or from its logged wakeups when it has none.
func cdfPanel(cols []Column) *gplot.Plot {
	p := newPanel("wakeup latency CDF", "wakeup latency, µs (log)", "fraction of wakeups ≤ x")
	p.Legend.Top = false // the curves leave the lower right empty
	drawn := false
	for i, c := range cols {
		xys, src := cdfXYs(c)
		if len(xys) == 0 {
			continue
		}
		drawn = true
		l, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		l.StepStyle = plotter.PostStep
		l.Color = colour(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.Label+src, l)
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = roundTicks(5)
	if !drawn {
		p.Title.Text += " (no wakeup latency recorded)"
		return p
	}
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = gplot.TickerFunc(logTicks)
	if !(p.X.Max > p.X.Min) {
		// Every wakeup at one latency: gonum would widen the range by ±1,
		// below 0, where a log scale panics. A factor of 2 each way.
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Min*2
	}
	return p
}

// cdfFloorUs is the smallest x drawn on the CDF's log axis: 1 ns.
const cdfFloorUs = 0.001

// cdfXYs is c's wakeup latency CDF in µs: from the HDR histogram (each
// bucket's highest equivalent value, at 3 significant digits, but never
// past the exact max, as results defines percentiles) or else from the
// logged wakeups (each of them when Wakeups holds them all, else their
// HDR histogram). src notes the logged-wakeup fallback.
func cdfXYs(c Column) (xys plotter.XYs, src string) {
	if c.Latency != nil && c.Latency.TotalCount() > 0 {
		return hdrCDF(c.Latency, c.WakeupLatency.MaxNs), ""
	}
	if c.logLatency != nil && c.logLatency.TotalCount() > 0 {
		return hdrCDF(c.logLatency, c.WakeupLatency.MaxNs), " (from wakeup log)"
	}
	if len(c.Wakeups) == 0 {
		return nil, ""
	}
	us := make([]float64, len(c.Wakeups))
	for i, w := range c.Wakeups {
		us[i] = max(w.LatencyUs, cdfFloorUs)
	}
	slices.Sort(us)
	xys = append(xys, plotter.XY{X: us[0], Y: 0})
	for i, v := range us {
		xys = append(xys, plotter.XY{X: v, Y: float64(i+1) / float64(len(us))})
	}
	return xys, " (from wakeup log)"
}

// hdrCDF is the CDF of h (ns) in µs, each bucket at its highest
// equivalent value but never past maxNs (> 0).
func hdrCDF(h *hdrhistogram.Histogram, maxNs int64) (xys plotter.XYs) {
	total := float64(h.TotalCount())
	var cum int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		if len(xys) == 0 {
			xys = append(xys, plotter.XY{X: max(float64(b.From)/1e3, cdfFloorUs), Y: 0})
		}
		cum += b.Count
		to := float64(b.To)
		if maxNs > 0 {
			to = min(to, float64(maxNs))
		}
		xys = append(xys, plotter.XY{X: max(to/1e3, cdfFloorUs), Y: float64(cum) / total})
	}
	return xys
}

// roundTicks returns a ticker labelling about n round values (1, 2 or 5 ×
// 10^k apart) between lo and hi, with four unlabelled ticks between labels.
func roundTicks(n int) gplot.TickerFunc {
	return func(lo, hi float64) []gplot.Tick { return linearTicks(lo, hi, n) }
}

func linearTicks(lo, hi float64, n int) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ts []gplot.Tick
	minor := step / 5
	for i := math.Ceil(lo / minor); i*minor <= hi; i++ {
		v := i * minor
		t := gplot.Tick{Value: v}
		if k := math.Round(v / step); math.Abs(v-k*step) < minor/2 {
			t.Label = strconv.FormatFloat(k*step, 'f', prec, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// logTicks ticks 1…9 × 10^k between lo and hi (both > 0), labelling 1, 2
// and 5 × 10^k, or every tick when the range spans less than a decade.
func logTicks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	all := hi/lo < 10
	var ts []gplot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow10(int(e)) <= hi; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow10(int(e))
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			if all || m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}
