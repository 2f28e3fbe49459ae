package scenario

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Interleave is the scenario's `interleave:`: how its variants share the
// machine's time. A block length (> 0, "100ms") runs the variants of each
// round inside one trial, on the same reader threads and the same sockets,
// senders and noise, alternating them in ABBA blocks of that length (A B
// B A A B …): they see the same slow noise (seconds, on this kind of
// machine), and each pair of adjacent blocks is one paired sample of their
// ratio. That works only for variants that differ in what a reader does
// per call (readers[i].method, readers[i].batch); Validate names any other
// field a variant sets. InterleaveOff (0, "off") runs one trial per
// variant per round, as without the field. InterleaveAuto ("auto")
// interleaves in DefaultInterleaveBlock blocks when the variants can, and
// otherwise runs one trial per variant with a note saying why
// (InterleaveBlock). It decodes from YAML and --set as a duration, "off",
// "0" or "auto", and encodes as "off", "auto" or the duration.
type Interleave Duration

// The values of Interleave that are no block length.
const (
	InterleaveOff  Interleave = 0
	InterleaveAuto Interleave = -1
)

// DefaultInterleaveBlock is the block length of `interleave: auto`: long
// enough to hold ten 10 ms ticks (a block's mean per-call cost is then
// stable to a few %), short enough that 2 minutes give 600 pairs (the
// measurements behind the choice are in bench/INTERLEAVE.md).
const DefaultInterleaveBlock = Duration(100 * time.Millisecond)

// Bounds of a block length, and of the blocks of one trial (each is a
// record in summary.json: 100,000 are about 25 MB).
const (
	minInterleaveBlock  = Duration(time.Millisecond)
	maxInterleaveBlock  = Duration(time.Hour)
	MaxInterleaveBlocks = 100_000
)

const interleaveAllowed = "off (or 0), auto, or a block length such as 100ms"

// String returns "off", "auto" or the block length ("100ms").
func (v Interleave) String() string {
	switch v {
	case InterleaveOff:
		return "off"
	case InterleaveAuto:
		return "auto"
	}
	return Duration(v).String()
}

// MarshalText encodes v as String does.
func (v Interleave) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes "off", "0", "auto" or a Go duration.
func (v *Interleave) UnmarshalText(text []byte) error {
	if p := v.parseText(string(text)); p != nil {
		return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
	}
	return nil
}

// parseText is UnmarshalText for the decoder; v is unchanged on failure.
// A negative duration decodes, and Validate reports it.
func (v *Interleave) parseText(s string) *problem {
	switch t := strings.TrimSpace(s); t {
	case "off", "0":
		*v = InterleaveOff
		return nil
	case "auto":
		*v = InterleaveAuto
		return nil
	default:
		d, err := time.ParseDuration(t)
		if err != nil || Interleave(d) == InterleaveAuto {
			return &problem{msg: fmt.Sprintf("expected a block length, off or auto, got %q", s), allowed: interleaveAllowed}
		}
		*v = Interleave(d)
		return nil
	}
}

// interleavable matches the variant paths that keep a reader's thread and
// sockets: what it does per call. Everything else a variant may set makes
// sockets, senders, threads or run-wide settings of its own.
var interleavable = regexp.MustCompile(`^readers\[\d+\]\.(method|batch)$`)

const interleavableAllowed = "interleaved variants may set only readers[i].method and readers[i].batch " +
	"(what a reader does per call, on the same thread and sockets); or interleave: off"

// InterleaveBlock returns the block length the variants of s run
// interleaved in, 0 for one trial per variant per round. With
// interleave: auto that is DefaultInterleaveBlock when the variants can
// interleave, else 0 with a note saying why ("" when there are fewer
// than two variants: nothing to interleave). With a block length that
// cannot be run, Validate refuses s; InterleaveBlock then returns 0 and
// the first problem.
func (s *Spec) InterleaveBlock() (Duration, string) {
	block := Duration(s.Interleave)
	if s.Interleave == InterleaveAuto {
		if len(s.Variants) < 2 {
			return 0, ""
		}
		block = DefaultInterleaveBlock
	}
	if block <= 0 {
		return 0, ""
	}
	if probs := s.interleaveProblems(block); len(probs) > 0 {
		p := probs[0]
		return 0, fmt.Sprintf("interleave: %s: the variants run one trial each: %s: %s", s.Interleave, p.Path, p.Msg)
	}
	return block, ""
}

// checkInterleave is Validate's check of interleave: on the base spec
// (the variants' problems are its own), every reason a block length
// cannot be run, each at the field that prevents it.
func (s *Spec) checkInterleave() ErrorList {
	if s.Interleave < InterleaveAuto {
		return ErrorList{s.interleaveError("interleave", "%s out of range", interleaveAllowed, Duration(s.Interleave))}
	}
	if s.Interleave <= 0 {
		return nil
	}
	return s.interleaveProblems(Duration(s.Interleave))
}

// interleaveProblems lists why s cannot run its variants interleaved in
// blocks of block.
func (s *Spec) interleaveProblems(block Duration) ErrorList {
	var l ErrorList
	add := func(path, allowed, format string, args ...any) {
		l = append(l, s.interleaveError(path, format, allowed, args...))
	}
	if len(s.Variants) < 2 {
		add("variants", "2 or more variants, or interleave: off", "%d variant(s): nothing to interleave", len(s.Variants))
	}
	if s.Duration == 0 {
		add("duration", "a finite duration (a soak alternates its variants in slices: slice), or interleave: off",
			"a soak (duration 0) cannot interleave its variants")
	}
	if s.Interval > 0 {
		add("interval", "interval: 0 (no interval records), or interleave: off",
			"interval records (%s) hand whole recorders over; interleaved variants keep one per variant", s.Interval)
	}
	if len(s.Probes) > 0 {
		add("probes", "no probes, or interleave: off", "probes run their own work once per trial, and interleaved variants share one trial")
	}
	longest, who := Duration(0), ""
	for _, r := range s.Readers {
		if r.Period > longest {
			longest, who = r.Period, r.Name
		}
	}
	if block < minInterleaveBlock || block > maxInterleaveBlock || block < longest || (s.Duration > 0 && block > s.Duration) {
		allowed := fmt.Sprintf("%s–%s, ≥ the longest reader period", minInterleaveBlock, maxInterleaveBlock)
		if who != "" {
			allowed += fmt.Sprintf(" (reader %s: %s)", who, longest)
		}
		if s.Duration > 0 {
			allowed += fmt.Sprintf(" and ≤ duration (%s)", s.Duration)
		}
		add("interleave", allowed, "block %s out of range", block)
	} else if n := int64(len(s.Variants)) * int64(s.Duration) / int64(block); n > MaxInterleaveBlocks {
		add("interleave", fmt.Sprintf("at most %d blocks per trial (%d variants × duration / block): a longer block or a shorter duration", MaxInterleaveBlocks, len(s.Variants)),
			"block %s over %d × %s makes %d blocks", block, len(s.Variants), s.Duration, n)
	}
	for i, v := range s.Variants {
		for _, k := range slices.Sorted(maps.Keys(v.Set)) {
			_, norm, err := s.field(k)
			if err != nil {
				continue // applyVariant reports it
			}
			if !interleavable.MatchString(norm) {
				add(fmt.Sprintf("variants[%d].set.%s", i, strings.TrimSpace(k)), interleavableAllowed, "cannot interleave: %s", whyNotInterleavable(norm))
			}
		}
	}
	return l
}

// interleaveError is a problem at path with the position the source gave
// it (an entry of a variant's set, or the field itself).
func (s *Spec) interleaveError(path, format, allowed string, args ...any) *Error {
	p := s.posOf(path)
	shown := path
	if l := s.cmdline[path]; l != "" {
		shown = l
	}
	return &Error{File: s.File, Line: p.Line, Col: p.Col, Path: shown, Msg: fmt.Sprintf(format, args...), Allowed: allowed}
}

// whyNotInterleavable says what a variant setting path (normalised)
// would need of its own.
func whyNotInterleavable(path string) string {
	top, _, _ := strings.Cut(path, ".")
	top, _, _ = strings.Cut(top, "[")
	switch top {
	case "endpoints":
		return "it needs sockets of its own (endpoints are built once per trial)"
	case "traffic":
		return "it needs senders of its own (the payload size, rate and spread are the traffic every variant reads)"
	case "readers":
		if strings.Contains(path, ".seccomp") {
			return "a seccomp filter cannot be removed from a thread, so each variant needs a reader thread of its own"
		}
		return "it changes the reader's thread or sockets (" + path[strings.LastIndexByte(path, '.')+1:] + "), which the interleaved variants share"
	case "noise":
		return "it needs background load of its own"
	case "probes":
		return "it needs probes of its own"
	case "report":
		return "it needs a histogram layout of its own"
	}
	return "it is a run-wide setting (" + path + ")"
}

// interleaveTrials groups each round's timed trials into one interleaved
// group (Trial.Interleave, Trial.Group) when s runs interleaved, moving
// the round's profiled trials after its group: a group's trials are
// consecutive, and the engine runs them as one.
func (s *Spec) interleaveTrials(trials []Trial) []Trial {
	block, _ := s.InterleaveBlock()
	if block <= 0 {
		return trials
	}
	out := make([]Trial, 0, len(trials))
	for i := 0; i < len(trials); {
		j := i
		for j < len(trials) && trials[j].Round == trials[i].Round {
			j++
		}
		group := len(out)
		for _, tr := range trials[i:j] {
			if !tr.Profiled {
				tr.Interleave, tr.Group = block, group
				out = append(out, tr)
			}
		}
		for _, tr := range trials[i:j] {
			if tr.Profiled {
				out = append(out, tr)
			}
		}
		i = j
	}
	for i := range out {
		out[i].Index = i
	}
	return out
}
