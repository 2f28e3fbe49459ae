package explain

import (
	"fmt"
	"slices"

	"github.com/rtload/rtload/results"
)

// Starved is one "reader starved" mark of a reader (results.MarkStarved:
// runnable but kept off its CPU for more than 1% of the window), with who
// may have kept it off, as the results name them.
type Starved struct {
	// Mark is the mark's text.
	Mark string `json:"mark"`
	// RunqueueWaitNs is the reader thread's run-queue wait over the trial
	// (its runqueue-wait counter, schedstat; 0 when not counted) and
	// WindowNs the measured window it stood in (every variant's blocks of
	// an interleaved trial).
	RunqueueWaitNs uint64 `json:"runqueue_wait_ns,omitempty"`
	WindowNs       int64  `json:"window_ns"`
	// OwnNoise is the run's own noise that may keep the reader off its CPU
	// (a real-time policy at or above the reader's priority, on its CPU);
	// OwnOnNs the most time its duty cycles keep it on over the window
	// (capped at the window).
	OwnNoise []OwnNoise `json:"own_noise,omitempty"`
	OwnOnNs  int64      `json:"own_on_ns,omitempty"`
	// OwnReaders are the run's other readers at a real-time priority at
	// or above this one's on one of its CPUs.
	OwnReaders []string `json:"own_readers,omitempty"`
	// Foreign are the threads of other processes the trial saw on the
	// reader's CPU (Trial.Culprits: its "reader CPU shared" mark).
	Foreign []string `json:"foreign,omitempty"`
	// Throttled is when the kernel logged RT throttling during the trial
	// (its kernel watch), "" when it did not.
	Throttled string `json:"rt_throttled,omitempty"`
}

// starvedOf is t's starved marks of reader r, each with who may have kept
// it off its CPU; noise is the run's own noise as t ran it.
func starvedOf(t results.Trial, r results.Reader, noise []OwnNoise) []Starved {
	var out []Starved
	for _, m := range t.Marks {
		if m.Kind != results.MarkStarved || m.Reader != r.Name {
			continue
		}
		s := Starved{Mark: m.Text, WindowNs: t.DurationNs, OwnNoise: preempting(noise, r)}
		if t.Interleave != nil && t.Interleave.WindowNs > 0 {
			s.WindowNs = t.Interleave.WindowNs
		}
		s.RunqueueWaitNs, _ = r.Counter("runqueue-wait")
		for _, n := range s.OwnNoise {
			s.OwnOnNs += int64(n.Duty() * float64(max(s.WindowNs, 0)))
		}
		s.OwnOnNs = min(s.OwnOnNs, max(s.WindowNs, 0))
		s.OwnReaders = ownReaders(t, r)
		if t.Kernel != nil {
			for _, e := range t.Kernel.Events {
				if e.Kind == results.RTThrottled && s.Throttled == "" {
					s.Throttled = fmt.Sprintf("%.1f s", e.At.Seconds())
				}
			}
		}
		for _, c := range t.Culprits {
			if c.Reader == r.Name {
				s.Foreign = append(s.Foreign, fmt.Sprintf("%s, seen in %d of %d scans", c.ForeignThread, c.Seen, c.Scans))
			}
		}
		out = append(out, s)
	}
	return out
}

// ownReaders names t's other readers that may keep r off its CPU.
func ownReaders(t results.Trial, r results.Reader) []string {
	var out []string
	for _, o := range t.Readers {
		if o.Name == r.Name || !o.Applied.RealTime() || (r.Applied.RealTime() && o.Applied.Priority < r.Applied.Priority) {
			continue
		}
		if slices.ContainsFunc(o.Applied.CPUs, func(c int) bool { return slices.Contains(r.Applied.CPUs, c) }) {
			out = append(out, fmt.Sprintf("reader %s (%s %d)", o.Name, o.Applied.Policy, o.Applied.Priority))
		}
	}
	return out
}
