package explain

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// KernelTop is how many functions Kernel lists per difference.
const KernelTop = 12

// Kernel is where in the kernel a profiled run's time goes (issue 16):
// each profiled variant's samples, the profiler's cost, and every other
// variant's per-call drain cost against the first's, attributed to the
// functions that carry it.
type Kernel struct {
	// Unit and Hz are the per-call clock's (Summary.Clock).
	Unit string
	Hz   float64
	// Variants are the profiled variants in the order of Summary.Profiles.
	Variants []ProfiledVariant
	// Costs are the per-call costs in the profiled trials against the
	// timed ones (results.ProfilerCosts).
	Costs []results.ProfilerCost
	// Diffs compare each variant after the first with the first (B).
	Diffs []KernelDiff
	Notes []string
}

// ProfiledVariant is one variant's profile as read back, and the side of
// an attribution it makes.
type ProfiledVariant struct {
	results.VariantProfile
	// Profile is the written pprof profile read back; nil when it could
	// not be read (Err says why).
	Profile *profile.Profile
	Err     string
	// Variant is what profile.Attribute takes: the profile with the
	// profiled trials' calls and drain time and the run's kernel facts.
	Variant profile.Variant
	// DrainFrom says which drain time Variant holds: "measured" (the sum
	// of the profiled calls' times; a real-time reader is not preempted,
	// so that is its CPU time) or "sampled CPU time" (a reader that could
	// be preempted: the samples' own weight).
	DrainFrom string
	// Top are the kernel functions with the most drain samples of their
	// own (self), for a run with nothing to compare.
	Top []FuncShare
}

// FuncShare is a function's part of a variant's drain: its self and
// inclusive samples and the ns per call they convert to.
type FuncShare struct {
	Func                string
	Self, Incl          uint64
	SelfNsPerCall, InNs float64
}

// KernelDiff is the attribution of A − B.
type KernelDiff struct {
	A, B        string
	Attribution profile.Attribution
	// Funcs are the kernel functions whose drain cost differs most
	// between A and B (|Diff| largest first, significant ones only),
	// at most KernelTop, entry-path functions left out: each is mostly
	// the cost of callees the other side reaches under its own entry
	// functions (Attribution.Entry shows them). Entry counts those left out.
	Funcs []profile.FuncDiff
	Entry int
	// Err says why there is no attribution.
	Err string
}

// KernelDir reads the profiles of the results directory dir; nil, nil
// when the run was not profiled.
func KernelDir(dir string) (*Kernel, error) {
	s, err := store.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	if len(s.Profiles) == 0 {
		return nil, nil
	}
	return KernelOf(s, func(name string) ([]byte, error) { return store.ReadProfileFile(dir, name) }), nil
}

// KernelOf explains the profiles of s, reading each profile file with
// read (the name as Summary.Profiles gives it).
func KernelOf(s *results.Summary, read func(name string) ([]byte, error)) *Kernel {
	k := &Kernel{Unit: s.Clock.TickUnit(), Hz: s.Clock.Hz, Costs: results.ProfilerCosts(s)}
	for _, vp := range s.Profiles {
		k.Variants = append(k.Variants, LoadVariant(s, vp, read))
	}
	k.Notes = sharedNotes(k.Variants)
	var ok []ProfiledVariant
	for _, v := range k.Variants {
		if v.Profile != nil {
			ok = append(ok, v)
		}
	}
	for _, a := range ok[min(1, len(ok)):] {
		k.Diffs = append(k.Diffs, Attribute(a.Variant, ok[0].Variant))
	}
	if len(ok) == 1 {
		k.Notes = append(k.Notes, fmt.Sprintf("one variant profiled (%s): no other variant to attribute a difference against; its drain's own costliest kernel functions follow", ok[0].VariantProfile.Variant))
	}
	return k
}

// sharedNotes moves the notes every variant has (the run's: what the
// sampler fell back to) out of the variants and returns them.
func sharedNotes(vs []ProfiledVariant) []string {
	if len(vs) < 2 {
		return nil
	}
	var shared []string
	for _, n := range vs[0].Notes {
		if !slices.ContainsFunc(vs[1:], func(v ProfiledVariant) bool { return !slices.Contains(v.Notes, n) }) {
			shared = append(shared, n)
		}
	}
	for i := range vs {
		vs[i].Notes = slices.DeleteFunc(slices.Clone(vs[i].Notes), func(n string) bool { return slices.Contains(shared, n) })
	}
	return shared
}

// LoadVariant reads vp's pprof profile with read and makes it a side of
// an attribution with s's facts (the kernel config and command-line
// hardening of the run's env, for the hooks' state). read returns the
// profile inflated (store.ReadProfileFile bounds the inflation): it is
// parsed with profile.ReadPprof, which bounds what the parse builds, and
// neither inflates again nor tries pprof's legacy text formats.
func LoadVariant(s *results.Summary, vp results.VariantProfile, read func(string) ([]byte, error)) ProfiledVariant {
	v := ProfiledVariant{VariantProfile: vp}
	data, err := read(vp.Pprof)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	if v.Profile, err = profile.ReadPprof(data, termsafe.Escape(vp.Pprof)); err != nil {
		v.Err = err.Error()
		return v
	}
	drain, from := time.Duration(vp.DrainNs), "measured"
	if !vp.RealTime && vp.DrainCPUNs > 0 {
		drain, from = time.Duration(vp.DrainCPUNs), "sampled CPU time"
	}
	v.DrainFrom = from
	v.Variant = profile.Variant{Name: vp.Variant, Profile: v.Profile, Calls: vp.Calls, Drain: drain,
		KernelConfig: s.Env.KernelConfig, Cmdline: s.Env.Hardening}
	v.Top = topSelf(v.Profile, vp.Calls, drain)
	return v
}

// Attribute attributes a − b and lists the kernel functions that differ most.
func Attribute(a, b profile.Variant) KernelDiff {
	d := KernelDiff{A: a.Name, B: b.Name}
	at, err := profile.Attribute(a, b, profile.Options{})
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Attribution = at
	for _, f := range at.Funcs {
		if len(d.Funcs) == KernelTop {
			break
		}
		switch {
		case !f.Kernel || !f.Diff.Significant():
		case f.Entry:
			d.Entry++
		default:
			d.Funcs = append(d.Funcs, f)
		}
	}
	return d
}

// topSelf lists the kernel functions of p's drain with the most self
// samples, at most KernelTop, with ns per call of calls in drain.
func topSelf(p *profile.Profile, calls uint64, drain time.Duration) []FuncShare {
	self, incl := map[string]uint64{}, map[string]uint64{}
	var n uint64
	for _, st := range p.Stacks {
		if st.Phase != profile.PhaseDrain || len(st.Frames) == 0 {
			continue
		}
		n += st.Count
		if st.Frames[0].Kernel {
			self[st.Frames[0].Func] += st.Count
		}
		seen := map[string]bool{}
		for _, f := range st.Frames {
			if f.Kernel && !seen[f.Func] {
				seen[f.Func] = true
				incl[f.Func] += st.Count
			}
		}
	}
	if n == 0 || calls == 0 {
		return nil
	}
	callNs := float64(drain.Nanoseconds()) / float64(calls)
	var out []FuncShare
	for f, c := range self {
		out = append(out, FuncShare{Func: f, Self: c, Incl: incl[f],
			SelfNsPerCall: float64(c) / float64(n) * callNs, InNs: float64(incl[f]) / float64(n) * callNs})
	}
	slices.SortFunc(out, func(x, y FuncShare) int {
		return cmp.Or(cmp.Compare(y.Self, x.Self), strings.Compare(x.Func, y.Func))
	})
	return out[:min(len(out), KernelTop)]
}

// WriteKernel prints k: the profiled variants and what they sampled, the
// profiler's cost, and each difference with the functions behind it.
func WriteKernel(w io.Writer, k *Kernel) error {
	k = termsafe.Copy(k) // kernel symbols and names from results, escaped for the terminal
	var b strings.Builder
	b.WriteString("where in the kernel the time goes (profiled trials, apart from the timed ones):\n")
	for _, n := range k.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for _, v := range k.Variants {
		writeProfiledVariant(&b, v, len(k.Variants) == 1)
	}
	k.writeCosts(&b)
	for _, d := range k.Diffs {
		b.WriteByte('\n')
		b.WriteString(d.Text())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneBased numbers trial indices from 1, as the text of run, report and
// check does.
func oneBased(idx []int) []int {
	out := make([]int, len(idx))
	for i, v := range idx {
		out[i] = v + 1
	}
	return out
}

func writeProfiledVariant(b *strings.Builder, v ProfiledVariant, top bool) {
	vp := v.VariantProfile
	every := fmt.Sprintf("every %d %s", vp.Period, vp.Unit)
	if vp.Event == "cpu-clock" && vp.Period > 0 {
		every = fmt.Sprintf("every %s of the reader's CPU time", time.Duration(vp.Period))
	} else if vp.Period == 0 {
		every = fmt.Sprintf("at %d Hz", vp.FreqHz)
	}
	fmt.Fprintf(b, "  %s: %s sampled %s in %d profiled trial(s) %v: %d samples in the measured window (%d drain, %d sleep and wakeup, %d other), %d lost, %d throttled, %d outside the window\n",
		vp.Variant, vp.Event, every, len(vp.Trials), oneBased(vp.Trials), vp.Samples, vp.DrainSamples, vp.SleepSamples, vp.OtherSamples, vp.Lost, vp.Throttles, vp.Outside)
	if vp.Calls > 0 {
		fmt.Fprintf(b, "    %d receive calls measured, %.0f ns/call", vp.Calls, float64(vp.DrainNs)/float64(vp.Calls))
		if vp.DrainCPUNs > 0 {
			fmt.Fprintf(b, "; the drain samples saw %.0f ns/call of CPU time (the drain's own user code included)", float64(vp.DrainCPUNs)/float64(vp.Calls))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "    files: %s, %s\n", vp.Pprof, vp.Folded)
	for _, n := range vp.Notes {
		fmt.Fprintf(b, "    note: %s\n", n)
	}
	if v.Err != "" {
		fmt.Fprintf(b, "    profile not read: %s\n", v.Err)
		return
	}
	if v.DrainFrom != "measured" {
		fmt.Fprintf(b, "    note: ns per call below are shares of the %s: a reader not at SCHED_FIFO/RR may be preempted inside a timed call\n", v.DrainFrom)
	}
	if !top || len(v.Top) == 0 {
		return
	}
	b.WriteString("    kernel functions with the most drain samples of their own (self ns/call, inclusive ns/call, self/inclusive samples):\n")
	for _, f := range v.Top {
		fmt.Fprintf(b, "      %7.1f %7.1f  %s (%d/%d)\n", f.SelfNsPerCall, f.InNs, f.Func, f.Self, f.Incl)
	}
}

// writeCosts prints the profiler's cost: per-call p50 and mean in the
// profiled trials against the timed ones.
func (k *Kernel) writeCosts(b *strings.Builder) {
	if len(k.Costs) == 0 {
		return
	}
	fmt.Fprintf(b, "  the profiler's cost (per-call cost of all calls, timed trials vs profiled trials, %s):\n", k.Unit)
	for _, c := range k.Costs {
		label := c.Variant
		if c.Reader != "" {
			label += "/" + c.Reader
		}
		approx := ""
		if !c.TimedExact || !c.ProfiledExact {
			approx = " (a round lacked its HDR encoding: worst round's p50)"
		}
		fmt.Fprintf(b, "    %s: p50 %.0f vs %.0f (%+.1f%%)%s, mean %.0f vs %.0f (%+.1f%%); %d vs %d calls\n", label,
			c.Timed.Ticks(results.P50), c.Profiled.Ticks(results.P50), 100*c.P50Change(), approx,
			c.Timed.MeanTicks, c.Profiled.MeanTicks, 100*change(c.Timed.MeanTicks, c.Profiled.MeanTicks), c.Timed.Count, c.Profiled.Count)
	}
}

func change(from, to float64) float64 {
	if from == 0 {
		return 0
	}
	return (to - from) / from
}

// Text is the attribution's text (profile.Attribution.Text) and the
// kernel functions that differ most, one line each; or why there is none.
func (d KernelDiff) Text() string {
	var b strings.Builder
	d.write(&b)
	return b.String()
}

func (d KernelDiff) write(b *strings.Builder) {
	if d.Err != "" {
		fmt.Fprintf(b, "%s − %s: the profile cannot explain it: %s\n", d.A, d.B, d.Err)
		return
	}
	b.WriteString(d.Attribution.Text())
	if len(d.Funcs) == 0 {
		fmt.Fprintf(b, "  no kernel function's drain cost differs beyond its sampling error between %s and %s\n", d.A, d.B)
		return
	}
	fmt.Fprintf(b, "  kernel functions whose drain cost differs most, %s − %s: ns/call inclusive (95%% interval), self; samples %s vs %s (self)", d.A, d.B, d.A, d.B)
	if d.Entry > 0 {
		fmt.Fprintf(b, "; %d entry-path function(s) left out (the entry paths above)", d.Entry)
	}
	b.WriteString(":\n")
	for _, f := range d.Funcs {
		fmt.Fprintf(b, "    %6s (%s to %s), self %s  %s  %d vs %d (%d vs %d)\n", profile.FormatDelta(f.Diff.Value), profile.FormatValue(f.Diff.Lo), profile.FormatValue(f.Diff.Hi),
			profile.FormatDelta(f.SelfDiff.Value), f.Func, f.SamplesA, f.SamplesB, f.SelfA, f.SelfB)
	}
}
