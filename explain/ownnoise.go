package explain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/results"
)

// OwnNoise is one noise entry of the run's own scenario (summary.json's
// spec, with the trial's variant overrides applied), as explain sets it
// against a reader: Index is its place in the scenario's noise list,
// Policy its scheduling policy as the scenario spells it ("other",
// "fifo", "rr"), CPUs where its threads may run (empty: any CPU), On and
// Off its duty cycle (Off 0: always on). DutyObserved and CPUShare are
// what the trial recorded of it (results.Noise; 0 when not recorded).
type OwnNoise struct {
	Index        int     `json:"index"`
	Kind         string  `json:"kind"`
	Threads      int     `json:"threads"`
	Policy       string  `json:"policy"`
	Priority     int     `json:"priority"`
	CPUs         []int   `json:"cpus,omitempty"`
	OnNs         int64   `json:"on_ns"`
	OffNs        int64   `json:"off_ns"`
	DutyObserved float64 `json:"duty_observed,omitempty"`
	CPUShare     float64 `json:"cpu_share,omitempty"`
}

// realTime reports whether the noise runs at a real-time policy.
func (n OwnNoise) realTime() bool { return n.Policy == "fifo" || n.Policy == "rr" }

// cycled reports whether the noise has a duty cycle (on and off phases).
func (n OwnNoise) cycled() bool { return n.OnNs > 0 && n.OffNs > 0 }

// Duty is the share of time its duty cycle keeps the noise on (1 without one).
func (n OwnNoise) Duty() float64 {
	if !n.cycled() {
		return 1
	}
	return float64(n.OnNs) / float64(n.OnNs+n.OffNs)
}

// String names the noise for a person: "noise[1] spin (1 thread,
// SCHED_FIFO 90 on CPU 1, on 3.0 ms every 30.0 ms: duty 10.0%, observed
// 9.6%)".
func (n OwnNoise) String() string {
	where := "any CPU"
	if len(n.CPUs) == 1 {
		where = "CPU " + strconv.Itoa(n.CPUs[0])
	} else if len(n.CPUs) > 1 {
		where = "CPUs " + results.CPUList(n.CPUs)
	}
	pol := "SCHED_" + strings.ToUpper(n.Policy)
	if n.realTime() {
		pol += " " + strconv.Itoa(n.Priority)
	}
	threads := fmt.Sprintf("%d threads", n.Threads)
	if n.Threads == 1 {
		threads = "1 thread"
	}
	cycle := "always on"
	if n.cycled() {
		cycle = fmt.Sprintf("on %s every %s: duty %.1f%%", duration(float64(n.OnNs)), duration(float64(n.OnNs+n.OffNs)), 100*n.Duty())
	}
	if n.DutyObserved > 0 {
		cycle += fmt.Sprintf(", observed %.1f%%", 100*n.DutyObserved)
	}
	return fmt.Sprintf("noise[%d] %s (%s, %s on %s, %s)", n.Index, n.Kind, threads, pol, where, cycle)
}

// specNoise is what explain reads of one of the scenario's noise entries
// (scenario.Noise's JSON).
type specNoise struct {
	Kind     string `json:"kind"`
	Threads  int    `json:"threads"`
	CPUs     []int  `json:"cpus"`
	Policy   string `json:"policy"`
	Priority int    `json:"priority"`
	Duty     struct {
		On  json.RawMessage `json:"on"`
		Off json.RawMessage `json:"off"`
	} `json:"duty"`
}

// ownNoiseOf reads the noise entries of a recorded scenario (before its
// variants); nil when it has none or its JSON does not read. A duty
// phase that does not read is taken as 0 (no duty cycle).
func ownNoiseOf(spec results.Spec) []OwnNoise {
	var f struct {
		Noise []specNoise `json:"noise"`
	}
	if len(spec) == 0 || json.Unmarshal(spec, &f) != nil {
		return nil
	}
	out := make([]OwnNoise, 0, len(f.Noise))
	for i, s := range f.Noise {
		on, _ := results.DurationOf(s.Duty.On)
		off, _ := results.DurationOf(s.Duty.Off)
		out = append(out, OwnNoise{Index: i, Kind: s.Kind, Threads: s.Threads, Policy: s.Policy, Priority: s.Priority,
			CPUs: s.CPUs, OnNs: int64(max(on, 0)), OffNs: int64(max(off, 0))})
	}
	return out
}

// noiseOfTrial is the scenario's noise as trial t ran it: the variant's
// overrides of a noise's policy, priority and duty applied (those explain
// cannot read are named in the returned notes), and what t recorded of
// each (its kind, observed duty and CPU share, in the scenario's order).
func noiseOfTrial(t results.Trial, spec []OwnNoise) ([]OwnNoise, []string) {
	out := make([]OwnNoise, len(spec))
	for i, n := range spec {
		n.CPUs = slices.Clone(n.CPUs)
		if i < len(t.Noise) {
			n.DutyObserved, n.CPUShare = t.Noise[i].Duty, t.Noise[i].CPUShare
		}
		out[i] = n
	}
	var notes []string
	keys := make([]string, 0, len(t.Overrides))
	for k := range t.Overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, field, ok := noisePath(k)
		if !ok || i >= len(out) {
			continue
		}
		if !setNoise(&out[i], field, t.Overrides[k]) {
			notes = append(notes, fmt.Sprintf("variant %s sets %s=%s: explain does not read it, and sets the noise against the reader as the scenario has it", t.Variant, k, t.Overrides[k]))
		}
	}
	return out, notes
}

// noisePath splits an override path "noise[1].duty.on" into 1 and
// "duty.on"; ok false for a path outside the noise list.
func noisePath(path string) (int, string, bool) {
	rest, ok := strings.CutPrefix(path, "noise[")
	if !ok {
		return 0, "", false
	}
	idx, field, ok := strings.Cut(rest, "].")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i < 0 {
		return 0, "", false
	}
	return i, field, true
}

// setNoise applies one override to n, reporting whether it could.
func setNoise(n *OwnNoise, field, value string) bool {
	switch field {
	case "policy":
		n.Policy = value
	case "priority":
		p, err := strconv.Atoi(value)
		if err != nil {
			return false
		}
		n.Priority = p
	case "duty.on", "duty.off":
		d, err := time.ParseDuration(value)
		if value == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 {
			return false
		}
		if field == "duty.on" {
			n.OnNs = int64(d)
		} else {
			n.OffNs = int64(d)
		}
	case "kind", "threads", "nice", "size", "rate", "syscall", "dir":
		// nothing explain sets against a reader's wakeups
	default:
		return false
	}
	return true
}

// mayPreempt reports whether noise n can keep reader r off its CPU: it
// may run on one of r's CPUs (n on any CPU, or r's CPUs not recorded
// while n has none either), and at a real-time policy at or above r's
// priority (any real-time policy when r itself is not real-time).
func mayPreempt(n OwnNoise, r results.Reader) bool {
	if !n.realTime() || (r.Applied.RealTime() && n.Priority < r.Applied.Priority) {
		return false
	}
	if len(n.CPUs) == 0 {
		return true
	}
	return slices.ContainsFunc(n.CPUs, func(c int) bool { return slices.Contains(r.Applied.CPUs, c) })
}

// preempting lists the noise of noise that may keep r off its CPU.
func preempting(noise []OwnNoise, r results.Reader) []OwnNoise {
	var out []OwnNoise
	for _, n := range noise {
		if mayPreempt(n, r) {
			out = append(out, n)
		}
	}
	return out
}
