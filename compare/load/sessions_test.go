package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
)

// TestComparePooledOneSide: a sessions directory against one run (a check
// on one boot, or a first boot of the candidate) borrows the boot
// variance of the pooled side and says so.
func TestComparePooledOneSide(t *testing.T) {
	a := comparetest.SessionsDir(t, [2]int{0, 2}, []float64{1.00, 1.04, 0.97, 1.02})
	one := t.TempDir()
	s := testutil.ProcessRun("6.1.0", [2]int{0, 2}, 0, 3, []float64{1.1, 1.11, 1.09, 1.1, 1.12, 1.08})
	for i := range s.Trials {
		s.Trials[i].Readers[0].WakeupLog = nil
	}
	testutil.WriteSummary(t, one, s)
	runs, err := Runs([]string{a, one}, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Headlines(runs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Metrics {
		if m.Column != "recvfrom/B" || m.Name != "mean per-call cost" || m.Unit != "ns" {
			continue
		}
		if m.Interval == nil || m.Interval.Unit != "session" || m.Interval.N != "A 4 sessions × 2 processes × 2 rounds, B 1 session × 3 processes × 2 rounds" ||
			!strings.Contains(strings.Join(m.Interval.Notes, ";"), "B has 1 session") {
			t.Errorf("interval %+v", m.Interval)
		}
		return
	}
	t.Fatal("no recvfrom/B")
}

// TestComparePooledControls: the machine's speed steps from boot to boot,
// moving the per-call cost and the null syscall alike (an A/A across
// sessions): the adjusted change takes the session as its unit and is
// much narrower than the raw one, and the machine line is by session.
func TestComparePooledControls(t *testing.T) {
	speedA, speedB := []float64{1.00, 1.08, 0.95}, []float64{1.05, 0.97, 1.10}
	a := comparetest.SessionsDirWith(t, [2]int{0, 2}, speedA, func(k int) float64 { return 600 * speedA[k] })
	b := comparetest.SessionsDirWith(t, [2]int{0, 2}, speedB, func(k int) float64 { return 600 * speedB[k] })
	runs, err := Runs([]string{a, b}, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Headlines(runs, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var m *compare.Metric
	for i := range res.Metrics {
		if res.Metrics[i].Column == "recvfrom/B" && res.Metrics[i].Name == "mean per-call cost" && res.Metrics[i].Unit == "ns" {
			m = &res.Metrics[i]
		}
	}
	if m == nil || !m.Controlled() {
		t.Fatalf("no controlled recvfrom/B metric")
	}
	adj := m.AdjustedAt(compare.ControlNull, compare.Confidence)
	t.Logf("raw %+.1f%% [%+.1f, %+.1f], adjusted %+.1f%% [%+.1f, %+.1f] (θ %.2f, r %.2f), machine %+.1f%%", 100*adj.Raw.Point, 100*adj.Raw.Lo, 100*adj.Raw.Hi,
		100*adj.Point, 100*adj.Lo, 100*adj.Hi, adj.Theta, adj.R, 100*adj.Control.Point)
	if adj.Unit != "session" || adj.Raw.Unit != "session" || adj.Control.Unit != "session" {
		t.Errorf("units: adjusted %q, raw %q, control %q", adj.Unit, adj.Raw.Unit, adj.Control.Unit)
	}
	if !(adj.HalfWidth() < adj.Raw.HalfWidth()/2) || adj.Lo > 0 || adj.Hi < 0 {
		t.Errorf("adjusted ±%.3f against raw ±%.3f, [%+.3f, %+.3f]", adj.HalfWidth(), adj.Raw.HalfWidth(), adj.Lo, adj.Hi)
	}
	if len(res.Machine) != 1 || res.Machine[0].NullSyscall == nil || res.Machine[0].NullSyscall.Unit != "session" {
		t.Errorf("machine %+v", res.Machine)
	}
}

// TestLoadSessionsRefused: a sessions directory whose index names a link
// is refused whole, naming it, before any session is read.
func TestLoadSessionsRefused(t *testing.T) {
	a := comparetest.SessionsDir(t, [2]int{0, 2}, []float64{1, 1})
	s2 := filepath.Join(a, "s002")
	if err := os.RemoveAll(s2); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), s2); err != nil {
		t.Fatal(err)
	}
	_, err := Runs([]string{a}, []string{"A"})
	if err == nil || !strings.Contains(err.Error(), "s002") || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("got %v", err)
	}
}
