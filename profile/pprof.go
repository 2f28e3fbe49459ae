package profile

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// KernelMapping is the pprof mapping file name of kernel frames, as perf
// names it.
const KernelMapping = "[kernel.kallsyms]"

// PhaseLabel is the pprof sample label holding each sample's Phase:
// `go tool pprof -tagfocus phase=drain -top FILE` shows the drain alone.
const PhaseLabel = "phase"

// commentPrefix starts the profile comments FromPprof reads back.
const commentPrefix = "rtload: "

// PprofName is the file name of a variant's pprof profile:
// "profile-<variant>.pb.gz".
func PprofName(variant string) string { return "profile-" + variant + ".pb.gz" }

// FoldedName is the file name of a variant's folded stacks:
// "profile-<variant>.folded".
func FoldedName(variant string) string { return "profile-" + variant + ".folded" }

// Pprof converts p to pprof's format: sample types "samples" (count) and
// the event's weight ("cpu" nanoseconds for cpu-clock, else "<event>"
// in Unit), one location per distinct address with its function, the
// kernel frames in a mapping named [kernel.kallsyms] and the user frames
// in one named binary (the executable's path), and each sample labelled
// phase=drain|sleep|other. Lost, throttle, thread and fallback facts
// are profile comments. `go tool pprof -top`, -diff_base and flame-graph
// UIs read the result; FromPprof reads it back.
func (p *Profile) Pprof(binary string) *profile.Profile {
	weight := &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	if p.Event != "" && p.Event != "cpu-clock" {
		weight = &profile.ValueType{Type: p.Event, Unit: orDefault(p.Unit, "count")}
	}
	// The binary's mapping comes first: pprof names the first one "File:".
	umap := &profile.Mapping{ID: 1, Start: 0, Limit: 1 << 63, File: binary, HasFunctions: true}
	kmap := &profile.Mapping{ID: 2, Start: 1 << 63, Limit: ^uint64(0), File: KernelMapping, HasFunctions: true}
	out := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "samples", Unit: "count"}, weight},
		DefaultSampleType: weight.Type,
		PeriodType:        &profile.ValueType{Type: weight.Type, Unit: weight.Unit},
		Period:            int64(p.Period),
		Mapping:           []*profile.Mapping{umap, kmap},
		Comments:          p.comments(),
	}
	if p.EndNs > p.StartNs {
		out.DurationNanos = int64(p.EndNs - p.StartNs)
	}
	type locKey struct {
		addr   uint64
		kernel bool
		fn     string
	}
	locs := map[locKey]*profile.Location{}
	funcs := map[string]*profile.Function{}
	for _, s := range p.Stacks {
		ps := &profile.Sample{Value: []int64{int64(s.Count), int64(s.Weight)},
			Label: map[string][]string{PhaseLabel: {s.Phase.String()}}}
		for _, f := range s.Frames {
			k := locKey{f.Addr, f.Kernel, f.Func}
			loc := locs[k]
			if loc == nil {
				fn := funcs[f.Func]
				if fn == nil {
					fn = &profile.Function{ID: uint64(len(out.Function) + 1), Name: f.Func, SystemName: f.Func}
					out.Function = append(out.Function, fn)
					funcs[f.Func] = fn
				}
				m := umap
				if f.Kernel {
					m = kmap
				}
				loc = &profile.Location{ID: uint64(len(out.Location) + 1), Mapping: m, Address: f.Addr,
					Line: []profile.Line{{Function: fn}}}
				out.Location = append(out.Location, loc)
				locs[k] = loc
			}
			ps.Location = append(ps.Location, loc)
		}
		out.Sample = append(out.Sample, ps)
	}
	return out
}

// WritePprof writes p gzipped in pprof's format (see Pprof) to w.
func (p *Profile) WritePprof(w io.Writer, binary string) error {
	pp := p.Pprof(binary)
	if err := pp.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return pp.Write(w)
}

// comments are the facts FromPprof reads back, "rtload: key=value" each.
func (p *Profile) comments() []string {
	c := []string{
		fmt.Sprintf("%sevent=%s unit=%s period=%d freq_hz=%d", commentPrefix, p.Event, p.Unit, p.Period, p.FreqHz),
		fmt.Sprintf("%slost=%d lost_records=%d throttles=%d", commentPrefix, p.Lost, p.LostRecords, p.Throttles),
		fmt.Sprintf("%sstart_ns=%d end_ns=%d", commentPrefix, p.StartNs, p.EndNs),
	}
	for _, t := range p.Threads {
		c = append(c, fmt.Sprintf("%stid=%d samples=%d", commentPrefix, t.TID, t.Samples))
	}
	for _, n := range p.Notes {
		c = append(c, commentPrefix+"note: "+n)
	}
	return c
}

// FromPprof reads a profile written by WritePprof (after profile.Parse)
// back into a Profile: stacks with their phase label (samples without
// one are PhaseOther), frames as kernel when their mapping is
// [kernel.kallsyms], and the comments' facts. A location with inlined
// lines gives one frame per line, innermost first. Errors: a profile
// pprof's CheckValid refuses (a sample with fewer values than sample
// types, a reference to a location that is not there), one without a
// "samples" sample type, and one that would make more than
// MaxPprofFrames frames (ErrPprofLimit), refused before any is made. A
// profile from a file is read with ReadPprof, which bounds the parse too.
func FromPprof(pp *profile.Profile) (*Profile, error) {
	if err := pp.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof profile: %w", err)
	}
	count, weight := -1, -1
	for i, st := range pp.SampleType {
		switch {
		case st.Type == "samples":
			count = i
		case weight < 0:
			weight = i
		}
	}
	if count < 0 {
		return nil, fmt.Errorf("pprof profile: no \"samples\" sample type")
	}
	var frames int64
	for _, s := range pp.Sample {
		frames += stackFrames(s)
		if frames > MaxPprofFrames {
			return nil, fmt.Errorf("pprof profile: more than %d frames (each referenced location's lines times its references): %w", MaxPprofFrames, ErrPprofLimit)
		}
	}
	p := &Profile{Period: uint64(max(pp.Period, 0)), Stacks: make([]Stack, 0, len(pp.Sample))}
	p.readComments(pp.Comments)
	for _, s := range pp.Sample {
		st := Stack{Count: uint64(max(s.Value[count], 0)), Frames: make([]Frame, 0, stackFrames(s))}
		if weight >= 0 {
			st.Weight = uint64(max(s.Value[weight], 0))
		}
		if v := s.Label[PhaseLabel]; len(v) > 0 {
			st.Phase, _ = ParsePhase(v[0])
		}
		for _, loc := range s.Location {
			kernel := loc.Mapping != nil && loc.Mapping.File == KernelMapping
			if len(loc.Line) == 0 {
				st.Frames = append(st.Frames, Frame{Func: Unknown, Kernel: kernel, Addr: loc.Address})
			}
			for _, ln := range loc.Line {
				name := Unknown
				if ln.Function != nil {
					name = ln.Function.Name
				}
				st.Frames = append(st.Frames, Frame{Func: name, Kernel: kernel, Addr: loc.Address})
			}
		}
		if len(st.Frames) == 0 {
			st.Frames = append(st.Frames, Frame{Func: Unknown})
		}
		p.Stacks = append(p.Stacks, st)
	}
	return p, nil
}

// stackFrames is the number of frames FromPprof makes of s: one per line
// of each location (one for a location without lines), at least one.
func stackFrames(s *profile.Sample) int64 {
	var n int64
	for _, loc := range s.Location {
		n += int64(max(len(loc.Line), 1))
	}
	return max(n, 1)
}

// readComments parses the "rtload: k=v …" comments of comments().
func (p *Profile) readComments(comments []string) {
	for _, c := range comments {
		rest, ok := strings.CutPrefix(c, commentPrefix)
		if !ok {
			continue
		}
		if n, ok := strings.CutPrefix(rest, "note: "); ok {
			p.Notes = append(p.Notes, n)
			continue
		}
		var t ThreadCount
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			u, _ := strconv.ParseUint(v, 10, 64)
			switch k {
			case "event":
				p.Event = v
			case "unit":
				p.Unit = v
			case "period":
				p.Period = u
			case "freq_hz":
				p.FreqHz = u
			case "lost":
				p.Lost = u
			case "lost_records":
				p.LostRecords = u
			case "throttles":
				p.Throttles = u
			case "start_ns":
				p.StartNs = u
			case "end_ns":
				p.EndNs = u
			case "tid":
				t.TID = int(u)
			case "samples":
				t.Samples = u
			}
		}
		if t.TID != 0 {
			p.Threads = append(p.Threads, t)
		}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
