package engine

import (
	"context"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/results"
)

// TestRunRecvControl runs a 1 s trial of 50 sockets, in the default and in
// a private namespace (with the experimental controls on beside it): the
// reader's controls carry the recv control's data and EAGAIN calls,
// probe.RecvRounds of each per measured tick that ran its controls, in the
// summary and in every interval record; the workload's own calls stay
// one EAGAIN call per socket and tick (the control's socket is not
// drained as the workload's). With controls: 0 there is none.
func TestRunRecvControl(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	for _, tc := range []struct {
		name, env string
		sets      []string
	}{
		{"default", "", nil},
		{"ping,chase private", "ping,chase", []string{"network.namespace=private"}},
		{"controls 0", "", []string{"readers[0].controls=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RTLOAD_XCONTROLS", tc.env)
			spec, trials := load(t, e2eYAML, append([]string{"duration=1s", "interval=250ms", "endpoints[0].count=50"}, tc.sets...)...)
			var ivs []results.Interval
			sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), OnInterval: func(iv results.Interval) { ivs = append(ivs, iv) }})
			if err != nil {
				t.Fatal(err)
			}
			rx := sum.Trials[0].Readers[0]
			c := rx.Controls
			if rx.EAGAIN != 50*rx.Wakeups {
				t.Errorf("workload EAGAIN calls %d, want 50 × %d wakeups", rx.EAGAIN, rx.Wakeups)
			}
			if tc.name == "controls 0" {
				if c != nil {
					t.Errorf("controls: 0: controls %+v", c)
				}
				return
			}
			checkControls(t, tc.name, rx)
			want := probe.RecvRounds * (rx.Wakeups - c.SkippedTicks)
			if c.RecvData == nil || c.RecvEAGAIN == nil || c.RecvData.Count != want || c.RecvEAGAIN.Count != want || c.RecvData.HDR == "" {
				t.Fatalf("recv control %+v, %+v; want %d calls of each (%d a tick that ran its controls, %d wakeups, %d skipped)", c.RecvData, c.RecvEAGAIN, want, probe.RecvRounds, rx.Wakeups, c.SkippedTicks)
			}
			if c.RecvData.MeanTicks <= 0 || c.RecvEAGAIN.MeanTicks <= 0 {
				t.Errorf("recv control means %v, %v", c.RecvData.MeanTicks, c.RecvEAGAIN.MeanTicks)
			}
			var ivData uint64
			for _, iv := range ivs {
				ic := iv.Controls
				if ic == nil || ic.RecvData == nil || ic.RecvEAGAIN == nil || ic.RecvData.Count != probe.RecvRounds*(iv.Wakeups-ic.SkippedTicks) || ic.RecvEAGAIN.Count != ic.RecvData.Count {
					t.Errorf("interval %d: controls %+v; want %d recv-control calls of each per tick that ran them (%d wakeups)", iv.Seq, ic, probe.RecvRounds, iv.Wakeups)
					continue
				}
				ivData += ic.RecvData.Count
			}
			if len(ivs) == 0 || ivData != c.RecvData.Count {
				t.Errorf("%d interval records hold %d data calls, the summary %d", len(ivs), ivData, c.RecvData.Count)
			}
		})
	}
}
