package view

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rtload/rtload/compare"
)

// MachineLines say the machine's own change in one line per Machine
// entry: "machine, new vs base: null syscall -4.1% [-6.0, -2.2], user loop
// +0.3% [-0.5, +1.1], recv control +2.0% [+0.4, +3.6] (95% CI, n = 10
// processes × 4 rounds)", the recv control where both runs timed it. When the
// runs compare per-call costs but timed no controls, one line says so.
func MachineLines(r *compare.Result) []string {
	var out []string
	for _, m := range r.Machine {
		n := ""
		if m.NullSyscall != nil && m.NullSyscall.N != "" {
			n = ", n = " + m.NullSyscall.N
		}
		recv := ""
		if m.RecvControl != nil {
			recv = fmt.Sprintf(", %s %s", compare.ControlRecv, intervalWords(m.RecvControl))
		}
		out = append(out, fmt.Sprintf("machine, %s vs %s: %s %s, %s %s%s (%s CI%s)", m.Column, m.Baseline,
			compare.ControlNull, intervalWords(m.NullSyscall), compare.ControlLoop, intervalWords(m.UserLoop), recv, LevelPct(compare.Confidence), n))
	}
	if len(out) > 0 || !comparesPerCall(r) {
		return out
	}
	return []string{"machine: not measured (no drift controls in these results: rtload before readers[].controls, or controls: 0): per-call verdicts are raw"}
}

// comparesPerCall reports whether r compares some column's mean per-call
// cost with a baseline.
func comparesPerCall(r *compare.Result) bool {
	return slices.ContainsFunc(r.Metrics, func(m compare.Metric) bool {
		return m.Name == "mean per-call cost" && m.Verdict != compare.VerdictBaseline
	})
}

// intervalWords is an interval as a closing line quotes it: "+0.3%
// [-0.5, +1.1]", or "no interval (why)".
func intervalWords(iv *compare.Interval) string {
	if iv == nil || iv.PointPct == nil || iv.LowPct == nil || iv.HighPct == nil {
		why := ""
		if iv != nil && len(iv.Notes) > 0 {
			why = " (" + strings.Join(iv.Notes, "; ") + ")"
		}
		return "no interval" + why
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", *iv.PointPct, *iv.LowPct, *iv.HighPct)
}

// IntervalWords is an Interval as closing lines quote a change: "+0.3%
// [-0.5, +1.1]", or "no interval (why)".
func IntervalWords(iv *compare.Interval) string { return intervalWords(iv) }
