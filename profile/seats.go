package profile

import (
	"math"
	"slices"
	"strings"
)

// maxSeats bounds how many seats Attribute reports in each part (own
// work, shared work).
const maxSeats = 8

// seats picks where the difference within one part of the drain sits
// (see Attribute for the rule): sa and sb are that part of each
// variant, minNs the smallest |Diff| of a seat.
func seats(kind SeatKind, sa, sb *side, minNs float64, opt Options) []Seat {
	funcs := funcDiffs(sa, sb, opt.Z)
	byKey := make(map[fkey]FuncDiff, len(funcs))
	for _, d := range funcs {
		byKey[fkey{d.Func, d.Kernel}] = d
	}
	var out []Seat
	for _, d := range funcs { // by |Diff| descending
		if len(out) == maxSeats || !d.Diff.Significant() || math.Abs(d.Diff.Value) < minNs {
			continue
		}
		k := fkey{d.Func, d.Kernel}
		if kind == SeatShared && 20*sa.incl[k] >= 19*sa.m && 20*sb.incl[k] >= 19*sb.m {
			continue // spans the whole shared work on both sides
		}
		dom := sa
		if d.Diff.Value < 0 {
			dom = sb
		}
		callees := calleesOf(k, d, byKey, minNs, sa, sb)
		if passesOn(d, callees) || forks(kind, d, callees) || nestedIn(dom, k, out) {
			continue
		}
		out = append(out, Seat{FuncDiff: d, Kind: kind, Path: commonPath(dom, k), Hooks: hooksBelow(dom, k),
			Callees: callees[:min(maxCallees, len(callees))]})
	}
	return out
}

// maxCallees bounds Seat.Callees.
const maxCallees = 3

// calleesOf are k's direct callees whose difference has d's sign, is
// significant and at least minNs, largest first.
func calleesOf(k fkey, d FuncDiff, byKey map[fkey]FuncDiff, minNs float64, sides ...*side) []FuncDiff {
	seen := map[fkey]bool{}
	var out []FuncDiff
	for _, s := range sides {
		for e := range s.edges {
			if e[0] != k || e[1] == k || seen[e[1]] {
				continue
			}
			seen[e[1]] = true
			if g := byKey[e[1]]; g.Diff.Value*d.Diff.Value > 0 && g.Diff.Significant() && math.Abs(g.Diff.Value) >= minNs {
				out = append(out, g)
			}
		}
	}
	slices.SortFunc(out, func(x, y FuncDiff) int {
		if c := cmpFloat(math.Abs(y.Diff.Value), math.Abs(x.Diff.Value)); c != 0 {
			return c
		}
		return strings.Compare(x.Func, y.Func)
	})
	return out
}

// passesOn says one callee carries ≥ 80% of d's difference.
func passesOn(d FuncDiff, callees []FuncDiff) bool {
	return len(callees) > 0 && math.Abs(callees[0].Diff.Value) >= 0.8*math.Abs(d.Diff.Value)
}

// forks says d's own code does not differ (its self difference is not
// significant with d's sign): in shared work, then, d is not a seat (its
// difference is its callees'); in own work only when its callees carry
// at least half of its difference (else d, the root of work one
// variant alone does, is the narrowest place that holds it).
func forks(kind SeatKind, d FuncDiff, callees []FuncDiff) bool {
	if d.SelfDiff.Significant() && d.SelfDiff.Value*d.Diff.Value > 0 {
		return false
	}
	if kind == SeatShared {
		return true
	}
	var below float64
	for _, g := range callees {
		below += math.Abs(g.Diff.Value)
	}
	return below >= 0.5*math.Abs(d.Diff.Value)
}

// nestedIn says k runs below an already chosen seat in at least half of
// its samples in s.
func nestedIn(s *side, k fkey, chosen []Seat) bool {
	for _, c := range chosen {
		ck := fkey{c.Func, c.Kernel}
		var under uint64
		for _, st := range s.stacks {
			i, j := frameIndex(st.frames, k), frameIndex(st.frames, ck)
			if i >= 0 && j > i {
				under += st.count
			}
		}
		if 2*under >= s.incl[k] {
			return true
		}
	}
	return false
}

// fullIndex is the position in st.full of k's innermost counted frame,
// or -1. The counted frames are st.full's, in order, less some taken
// out, so the match is by identity of the Frame's place.
func fullIndex(st cstack, k fkey) int {
	i := frameIndex(st.frames, k)
	if i < 0 {
		return -1
	}
	// Counted frames keep their order: the i-th counted frame is the
	// first frame of full, from the inside, preceded by i counted ones.
	seen := 0
	for j := range st.full {
		if seen < len(st.frames) && st.full[j] == st.frames[seen] {
			if seen == i {
				return j
			}
			seen++
		}
	}
	return -1
}

// frameIndex is the innermost position of k in frames, or -1.
func frameIndex(frames []Frame, k fkey) int {
	for i, f := range frames {
		if f.Func == k.name && f.Kernel == k.kernel {
			return i
		}
	}
	return -1
}

// commonPath is the commonest chain from the outermost frame to k, in
// the stacks of s where k is counted, with all their frames.
func commonPath(s *side, k fkey) []string {
	counts := map[string]uint64{}
	for _, st := range s.stacks {
		i := fullIndex(st, k)
		if i < 0 {
			continue
		}
		var names []string
		for j := len(st.full) - 1; j >= i; j-- {
			if f := st.full[j]; !k.kernel || f.Kernel {
				names = append(names, f.Func)
			}
		}
		counts[strings.Join(names, "\x00")] += st.count
	}
	best, bestN := "", uint64(0)
	for p, n := range counts {
		if n > bestN || (n == bestN && p < best) {
			best, bestN = p, n
		}
	}
	if best == "" {
		return []string{k.name}
	}
	return strings.Split(best, "\x00")
}

// hooksBelow are the hooks at k or below it in ≥ 10% of k's samples.
func hooksBelow(s *side, k fkey) []Hook {
	counts := map[string]uint64{}
	byOption := map[string]Hook{}
	for _, st := range s.stacks {
		i := fullIndex(st, k)
		seen := map[string]bool{}
		for j := 0; j <= i; j++ {
			if h, ok := HookAt(st.full, j); ok && !seen[h.Option] {
				seen[h.Option] = true
				counts[h.Option] += st.count
				byOption[h.Option] = h
			}
		}
	}
	var out []Hook
	for opt, n := range counts {
		if 10*n >= s.incl[k] {
			out = append(out, byOption[opt])
		}
	}
	slices.SortFunc(out, func(a, b Hook) int { return strings.Compare(a.Option, b.Option) })
	return out
}

// hookSamples counts the stacks of s with a frame of hook option opt.
func hookSamples(s *side, opt string) uint64 {
	var n uint64
	for _, st := range s.stacks {
		for j := range st.full {
			if h, ok := HookAt(st.full, j); ok && h.Option == opt {
				n += st.count
				break
			}
		}
	}
	return n
}

// hookCosts is every known hook seen in either variant's drain.
func hookCosts(a, b Variant, sa, sb *side, z float64) []HookCost {
	var out []HookCost
	for _, h := range hookTable {
		na, nb := hookSamples(sa, h.Option), hookSamples(sb, h.Option)
		if na == 0 && nb == 0 {
			continue
		}
		out = append(out, HookCost{Hook: h, SamplesA: na, SamplesB: nb, Diff: diff(sa, sb, na, nb, z),
			StateA: h.State(a.KernelConfig, a.Cmdline), StateB: h.State(b.KernelConfig, b.Cmdline)})
	}
	return out
}
