package exporter

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rtload/rtload/record"
)

func TestListenLoopback(t *testing.T) {
	for _, addr := range []string{
		"127.0.0.1:0", // the usual form
		"127.0.0.2:0", // all of 127.0.0.0/8 is loopback
		"localhost:0", // resolved, then the bound address is checked
		"LOCALHOST:0", // host names are case-insensitive
	} {
		t.Run(addr, func(t *testing.T) {
			s, err := Listen(addr, false)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if strings.HasSuffix(s.Addr(), ":0") {
				t.Errorf("Addr() = %s, want the port picked for port 0", s.Addr())
			}
			if _, err := scrape(t, s.Addr()); err != nil {
				t.Errorf("scrape: %v", err)
			}
		})
	}
}

func TestListenLoopbackIPv6(t *testing.T) {
	s, err := Listen("[::1]:0", false)
	if err != nil {
		if strings.Contains(err.Error(), "loopback only") {
			t.Fatal(err)
		}
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer s.Close()
}

func TestListenRejects(t *testing.T) {
	for _, tt := range []struct {
		name, addr string
		notLoop    bool // error wraps ErrNotLoopback
		want       []string
	}{
		// The default bind-everything address must be refused, with the way out.
		{"any IPv4", "0.0.0.0:9100", true, []string{"0.0.0.0:9100", "loopback only", "takes a loopback address"}},
		{"any IPv6", "[::]:9100", true, []string{"[::]:9100", "loopback only"}},
		// An empty host listens on every interface.
		{"empty host", ":9100", true, []string{":9100", "every interface", "loopback only"}},
		// Checked before any socket exists: nothing is bound or sent.
		{"private address", "192.168.1.10:9100", true, []string{"host 192.168.1.10", "loopback only"}},
		// Names other than localhost are not resolved, only refused.
		{"host name", "example.com:9100", true, []string{"host example.com", "loopback only"}},
		{"no port", "127.0.0.1", false, []string{"metrics listen 127.0.0.1", "missing port"}},
		{"empty port", "127.0.0.1:", false, []string{"missing port"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Listen(tt.addr, false)
			if err == nil {
				s.Close()
				t.Fatalf("Listen(%s, false) succeeded, want an error", tt.addr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %v\nlacks %q", err, w)
				}
			}
			if got := errors.Is(err, ErrNotLoopback); got != tt.notLoop {
				t.Errorf("errors.Is(err, ErrNotLoopback) = %v, want %v", got, tt.notLoop)
			}
		})
	}
}

func TestCheckAddrAllowAny(t *testing.T) {
	// Only the rule is tested: binding every interface is not needed to prove it.
	for _, addr := range []string{"0.0.0.0:9100", ":9100", "[::]:9100", "192.168.1.10:9100", "example.com:9100"} {
		if err := checkAddr(addr, true); err != nil {
			t.Errorf("checkAddr(%s, true) = %v, want nil", addr, err)
		}
	}
	if err := checkAddr("0.0.0.0", true); err == nil {
		t.Error("checkAddr without a port succeeded with allowAny")
	}
}

func TestScrape(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetRunInfo("laight-450", "tsc", "6.12.0-rt")
	s.SetTrial(3)

	base := Interval{Scenario: "laight-450", Variant: "recvmmsg", Round: 2, Reader: "r0"}
	iv1 := base
	iv1.Wakeups, iv1.Overruns, iv1.MissedTicks, iv1.BacklogSkips = 1000, 1, 4, 1
	iv1.DataCalls, iv1.EAGAINCalls, iv1.ErrorCalls = 400, 45000, 2
	iv1.Received, iv1.Sent, iv1.Lost, iv1.Drops = 450, 460, 3, 7
	iv1.WakeupLatencyNs = []BucketCount{
		{500, 2},         // ≤ 1 µs: first bucket
		{1500, 3},        // second bucket (≈ 2.02 µs)
		{20e9, 1},        // above 10 s: +Inf only
		{math.Inf(1), 1}, // overflow: +Inf only, no sum
		{7000, 0},        // empty: ignored
	}
	iv1.CallCostTicks = []BucketCount{{63, 2}, {191, 10}, {319, 5}, {math.Inf(1), 1}} // the default layout's buckets
	iv1.CallCostSumTicks = 3000
	iv1.IntervalMaxWakeupNs = 20e9
	iv1.Noise = []NoiseWork{{Kind: "spin", Unit: "loops", Count: 100}}

	iv2 := base
	iv2.Wakeups, iv2.DataCalls, iv2.EAGAINCalls = 1000, 300, 44000
	iv2.Overruns, iv2.MissedTicks = 2, 3 // overrun events and missed ticks count apart
	iv2.Received, iv2.Sent, iv2.Drops = 300, 300, 1
	iv2.WakeupLatencyNs = []BucketCount{{900, 4}}
	iv2.WakeupLatencySumNs = 2000 // exact sum replaces the 3600 ns estimate
	iv2.IntervalMaxWakeupNs = 900

	s.Update(iv1)
	s.Update(iv2)
	// Noise alone, with no reader: adds no reader series.
	s.Update(Interval{Scenario: "laight-450", Variant: "recvmmsg", Round: 2,
		Noise: []NoiseWork{{Kind: "spin", Unit: "loops", Count: 50}}})

	body, err := scrape(t, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}

	wantLabels := map[string]string{"scenario": "laight-450", "variant": "recvmmsg", "round": "2", "reader": "r0"}
	counters := []struct {
		name   string
		result string // recv_calls_total result label
		want   float64
	}{
		{"rtload_wakeups_total", "", 2000},
		{"rtload_overruns_total", "", 3},
		{"rtload_missed_ticks_total", "", 7},
		{"rtload_backlog_skips_total", "", 1},
		{"rtload_recv_calls_total", "data", 700},
		{"rtload_recv_calls_total", "eagain", 89000},
		{"rtload_recv_calls_total", "error", 2},
		{"rtload_messages_received_total", "", 750},
		{"rtload_messages_sent_total", "", 760},
		{"rtload_messages_lost_total", "", 3},
		{"rtload_kernel_drops_total", "", 8},
	}
	for _, c := range counters {
		want := copyLabels(wantLabels)
		if c.result != "" {
			want["result"] = c.result
		}
		m := find(t, fams, c.name, dto.MetricType_COUNTER, want)
		if got := m.GetCounter().GetValue(); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, want, got, c.want)
		}
	}

	noise := find(t, fams, "rtload_noise_work_total", dto.MetricType_COUNTER, map[string]string{
		"scenario": "laight-450", "variant": "recvmmsg", "round": "2", "kind": "spin", "unit": "loops"})
	if got := noise.GetCounter().GetValue(); got != 150 {
		t.Errorf("rtload_noise_work_total = %v, want 150", got)
	}
	if n := len(fams["rtload_wakeups_total"].GetMetric()); n != 1 {
		t.Errorf("rtload_wakeups_total has %d series, want 1 (a noise-only Update adds none)", n)
	}

	wh := find(t, fams, "rtload_wakeup_latency_seconds", dto.MetricType_HISTOGRAM, wantLabels).GetHistogram()
	if got := wh.GetSampleCount(); got != 11 {
		t.Errorf("wakeup histogram count = %d, want 11", got)
	}
	// iv1 estimate from upper bounds (the +Inf pair adds nothing) + iv2 exact sum.
	wantSum := (500*2+1500*3+20e9)*1e-9 + 2000e-9
	if got := wh.GetSampleSum(); math.Abs(got-wantSum) > 1e-12 {
		t.Errorf("wakeup histogram sum = %v, want %v", got, wantSum)
	}
	wantCum := map[float64]uint64{1e-6: 6, wakeupBoundsSeconds[1]: 9, 10: 9}
	checkBuckets(t, "wakeup", wh, wantCum, len(wakeupBoundsSeconds))

	ch := find(t, fams, "rtload_recv_call_cost_ticks", dto.MetricType_HISTOGRAM, wantLabels).GetHistogram()
	if got, got2 := ch.GetSampleCount(), ch.GetSampleSum(); got != 18 || got2 != 3000 {
		t.Errorf("call cost count, sum = %d, %v; want 18, 3000", got, got2)
	}
	cb := CallCostBounds(Layout{})
	checkBuckets(t, "call cost", ch, map[float64]uint64{63: 2, 191: 12, 319: 17, 8255: 17}, len(cb))

	im := find(t, fams, "rtload_interval_wakeup_latency_max_seconds", dto.MetricType_GAUGE, wantLabels)
	if got := im.GetGauge().GetValue(); got != 900e-9 {
		t.Errorf("interval max = %v, want the last interval's 9e-07", got)
	}
	info := find(t, fams, "rtload_run_info", dto.MetricType_GAUGE,
		map[string]string{"scenario": "laight-450", "clock": "tsc", "kernel": "6.12.0-rt"})
	if got := info.GetGauge().GetValue(); got != 1 {
		t.Errorf("rtload_run_info = %v, want 1", got)
	}
	if got := find(t, fams, "rtload_trial", dto.MetricType_GAUGE, nil).GetGauge().GetValue(); got != 3 {
		t.Errorf("rtload_trial = %v, want 3", got)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}
}

// TestScrapeBadLabel checks a label that is not UTF-8 costs its own series, not the scrape.
func TestScrapeBadLabel(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(Interval{Scenario: "s", Reader: "\xff", Wakeups: 1})
	s.Update(Interval{Scenario: "s", Reader: "ok", Wakeups: 1})
	body, err := scrape(t, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "go_goroutines") || !strings.Contains(body, `reader="ok"`) {
		t.Errorf("scrape lost good series:\n%s", body)
	}
}

func TestClose(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if _, err := scrape(t, addr); err != nil {
		t.Fatalf("scrape before Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := scrape(t, addr); err == nil {
		t.Fatal("scrape after Close succeeded")
	}
}

func TestUpdateAllocs(t *testing.T) {
	c := newCollector()
	iv := benchInterval(1000, 45000, false)
	c.update(iv) // first sight allocates the series
	if a := testing.AllocsPerRun(100, func() { c.update(iv) }); a != 0 {
		t.Errorf("update allocs %v per interval, want 0", a)
	}
}

func TestCallCostBounds(t *testing.T) {
	for _, tt := range []struct {
		name        string
		layout      Layout
		first, last float64
		n           int
	}{
		{"scenario default", Layout{128, 64, 8256}, 63, 8255, 65},
		{"zero means default", Layout{}, 63, 8255, 65},
		{"origin 0: no bucket below it", Layout{100, 0, 1000}, 99, 999, 10},
		{"overflow rounded up to an edge", Layout{100, 0, 950}, 99, 999, 10},
		{"a million buckets merged, overflow edge kept", Layout{1, 0, 1_000_000}, 10101, 999_999, 99},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := CallCostBounds(tt.layout)
			got := []float64{b[0], b[len(b)-1], float64(len(b))}
			want := []float64{tt.first, tt.last, float64(tt.n)}
			if d := cmp.Diff(want, got, cmpApprox); d != "" {
				t.Errorf("first, last, count (-want +got):\n%s", d)
			}
			if len(b) > MaxCallCostBuckets {
				t.Errorf("%d bounds, more than %d", len(b), MaxCallCostBuckets)
			}
		})
	}
}

// TestCallCostFollowsLayout: the exporter's per-call buckets are the
// linear histogram's, cumulated, up to its overflow edge; calls past the
// edge (9000 and 3 million ticks) are in +Inf only, not in a bucket
// labelled 1e6.
func TestCallCostFollowsLayout(t *testing.T) {
	for _, lay := range []Layout{{128, 64, 8256}, {1, 0, 1000}, {50, 1000, 3000}} {
		h := record.NewLinear(lay.Width, lay.Origin, lay.Overflow)
		for _, v := range []uint64{0, 10, 63, 64, 191, 192, 1500, 2999, 3000, 8255, 8256, 9000, 3_000_000} {
			h.Record(v)
		}
		s := h.Snapshot("ticks")
		c := newCollector()
		pairs, l := LinearBuckets(s)
		c.update(Interval{Reader: "r", CallCostTicks: pairs, CallCostLayout: l})
		got := c.readers[readerKey{reader: "r"}].cost
		var cum uint64
		want := map[float64]uint64{}
		k := max(1, (len(s.Counts)-1+MaxCallCostBuckets-2)/(MaxCallCostBuckets-1))
		for i, n := range s.Counts {
			cum += n
			if i == 0 && s.Origin > 0 {
				want[float64(s.Origin-1)] = cum
			} else if i > 0 && (i%k == 0 || i == len(s.Counts)-1) {
				want[float64(s.Lower(i)+s.Width-1)] = cum
			}
		}
		if d := cmp.Diff(want, got.cumulative()); d != "" {
			t.Errorf("layout %+v: buckets (-linear +exporter):\n%s", lay, d)
		}
		if got.count != s.Total || got.count-cum != s.OverflowCount {
			t.Errorf("layout %+v: count %d (+Inf %d), want %d (overflow %d)", lay, got.count, got.count-cum, s.Total, s.OverflowCount)
		}
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) })

// BenchmarkUpdate shows the cost of one interval of one reader at 1000
// wakeups and 45000 recv calls: the observe baseline feeds the same samples
// one by one into client_golang histograms; per-sample passes one pair per
// sample (the worst input); bucketed passes 1000 HDR-like wakeup pairs and a
// 64-bucket linear per-call histogram (the engine's shape).
func BenchmarkUpdate(b *testing.B) {
	const wakeups, calls = 1000, 45000
	b.Run("observe", func(b *testing.B) {
		iv := benchInterval(wakeups, calls, false)
		wh := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "w", Buckets: wakeupBoundsSeconds})
		ch := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "c", Buckets: CallCostBounds(Layout{})})
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range iv.WakeupLatencyNs {
				wh.Observe(p.UpperBound / 1e9)
			}
			for _, p := range iv.CallCostTicks {
				ch.Observe(p.UpperBound)
			}
		}
	})
	for _, bucketed := range []bool{false, true} {
		name := "per-sample"
		if bucketed {
			name = "bucketed"
		}
		b.Run(name, func(b *testing.B) {
			c := newCollector()
			iv := benchInterval(wakeups, calls, bucketed)
			c.update(iv)
			b.ReportAllocs()
			for b.Loop() {
				c.update(iv)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(wakeups+calls), "ns/sample")
		})
	}
}

// benchInterval returns an interval with the given sample counts, one pair
// per sample or, when bucketed, a 64-bucket linear per-call layout.
func benchInterval(wakeups, calls int, bucketed bool) Interval {
	iv := Interval{Scenario: "laight-450", Variant: "a", Round: 1, Reader: "r0",
		Wakeups: uint64(wakeups), DataCalls: uint64(calls / 10), EAGAINCalls: uint64(calls - calls/10),
		Noise: []NoiseWork{{"spin", "loops", 1e6}}}
	for i := range wakeups {
		// 1 µs … ~100 µs, spread like a real wakeup distribution's tail.
		iv.WakeupLatencyNs = append(iv.WakeupLatencyNs, BucketCount{float64(1000 + i*i/10), 1})
	}
	if bucketed {
		for i := range 64 {
			iv.CallCostTicks = append(iv.CallCostTicks, BucketCount{float64(64 + 128*(i+1) - 1), uint64(calls / 64)})
		}
		iv.CallCostTicks = append(iv.CallCostTicks, BucketCount{math.Inf(1), uint64(calls % 64)})
		return iv
	}
	for i := range calls {
		iv.CallCostTicks = append(iv.CallCostTicks, BucketCount{float64(100 + i%3000), 1})
	}
	return iv
}

// scrape GETs http://addr/metrics with a bounded timeout and no kept-alive connections.
func scrape(t *testing.T, addr string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), errors.New(resp.Status)
	}
	return string(b), nil
}

// find returns the one metric of family name whose labels are exactly want.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType, want map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("family %s missing", name)
	}
	if f.GetType() != typ {
		t.Fatalf("%s is a %v, want %v", name, f.GetType(), typ)
	}
	if want == nil {
		want = map[string]string{}
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if cmp.Equal(want, got) {
			return m
		}
	}
	t.Fatalf("%s%v missing; have %v", name, want, f.GetMetric())
	return nil
}

func checkBuckets(t *testing.T, what string, h *dto.Histogram, want map[float64]uint64, n int) {
	t.Helper()
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	if len(got) < n {
		t.Errorf("%s: %d buckets, want %d", what, len(got), n)
	}
	for le, c := range want {
		if got[le] != c {
			t.Errorf("%s: bucket le=%v has %d, want %d", what, le, got[le], c)
		}
	}
}

func copyLabels(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
