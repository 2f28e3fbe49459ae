package profile

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// maxSeats bounds how many seats Attribute reports.
const maxSeats = 8

// seats picks where the difference sits (see Attribute for the rule).
func seats(funcs []FuncDiff, total float64, sa, sb *side, opt Options) []Seat {
	byKey := make(map[fkey]FuncDiff, len(funcs))
	for _, d := range funcs {
		byKey[fkey{d.Func, d.Kernel}] = d
	}
	var out []Seat
	for _, d := range funcs { // by |Diff| descending
		v := math.Abs(d.Diff.Value)
		if len(out) == maxSeats || !d.Diff.Significant() || v < opt.MinShare*math.Abs(total) {
			continue
		}
		if v-(d.Diff.Hi-d.Diff.Lo)/2 > math.Abs(total) {
			continue // a path one variant takes instead of the other's
		}
		k := fkey{d.Func, d.Kernel}
		if 20*sa.incl[k] >= 19*sa.n && 20*sb.incl[k] >= 19*sb.n {
			continue // spans the whole drain on both sides
		}
		dom := sa
		if d.Diff.Value < 0 {
			dom = sb
		}
		if passesOn(k, d, byKey, sa, sb) || sharedBelow(dom, k, byKey) || nestedIn(dom, k, out) {
			continue
		}
		out = append(out, Seat{FuncDiff: d, Path: commonPath(dom, k), Hooks: hooksBelow(dom, k)})
	}
	return out
}

// passesOn says a callee of k carries ≥ 80% of its difference, same sign.
func passesOn(k fkey, d FuncDiff, byKey map[fkey]FuncDiff, sides ...*side) bool {
	for _, s := range sides {
		for e := range s.edges {
			if e[0] != k || e[1] == k {
				continue
			}
			g := byKey[e[1]]
			if g.Diff.Value*d.Diff.Value > 0 && math.Abs(g.Diff.Value) >= 0.8*math.Abs(d.Diff.Value) {
				return true
			}
		}
	}
	return false
}

// sharedBelow says that in at least half of k's samples in s, k calls
// (directly or not) a function whose cost does not differ significantly:
// k is then mostly a different road to shared work (__sys_recvfrom
// against ___sys_recvmsg, both reaching sock_recvmsg), not a seat.
func sharedBelow(s *side, k fkey, byKey map[fkey]FuncDiff) bool {
	var shared uint64
	for _, st := range s.stacks {
		i := frameIndex(st.Frames, k)
		for j := 0; j < i; j++ {
			g := fkey{st.Frames[j].Func, st.Frames[j].Kernel}
			if g != k && !byKey[g].Diff.Significant() {
				shared += st.Count
				break
			}
		}
	}
	return 2*shared >= s.incl[k]
}

// nestedIn says k runs below an already chosen seat in at least half of
// its samples in s.
func nestedIn(s *side, k fkey, chosen []Seat) bool {
	for _, c := range chosen {
		ck := fkey{c.Func, c.Kernel}
		var under uint64
		for _, st := range s.stacks {
			i, j := frameIndex(st.Frames, k), frameIndex(st.Frames, ck)
			if i >= 0 && j > i {
				under += st.Count
			}
		}
		if 2*under >= s.incl[k] {
			return true
		}
	}
	return false
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

// commonPath is the commonest chain from the outermost frame to k.
func commonPath(s *side, k fkey) []string {
	counts := map[string]uint64{}
	for _, st := range s.stacks {
		i := frameIndex(st.Frames, k)
		if i < 0 {
			continue
		}
		var names []string
		for j := len(st.Frames) - 1; j >= i; j-- {
			if f := st.Frames[j]; !k.kernel || f.Kernel {
				names = append(names, f.Func)
			}
		}
		counts[strings.Join(names, "\x00")] += st.Count
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
		i := frameIndex(st.Frames, k)
		seen := map[string]bool{}
		for j := 0; j <= i; j++ {
			if h, ok := HookAt(st.Frames, j); ok && !seen[h.Option] {
				seen[h.Option] = true
				counts[h.Option] += st.Count
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
		for j := range st.Frames {
			if h, ok := HookAt(st.Frames, j); ok && h.Option == opt {
				n += st.Count
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

// Text renders the attribution for `rtload explain` and `rtload
// compare`: the measured difference, one line per seat
// ("+612 ns/call (95% 580 to 640) in ___sys_recvmsg → copy_msghdr_from_user
// (1203 vs 0 samples)"), how much they explain or why the profile cannot,
// and the known hooks with their option's state.
func (at Attribution) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s − %s: %s ns/call in the drain (%.0f vs %.0f ns/call measured; %d vs %d drain samples)\n",
		at.A, at.B, signed(at.Total), at.CallNsA, at.CallNsB, at.SamplesA, at.SamplesB)
	for _, s := range at.Seats {
		path := s.Path
		if len(path) > 2 {
			path = path[len(path)-2:]
		}
		fmt.Fprintf(&b, "  %s ns/call (95%% %s to %s) in %s (%d vs %d samples, %d vs %d self)",
			signed(s.Diff.Value), num(s.Diff.Lo), num(s.Diff.Hi), strings.Join(path, " → "), s.SamplesA, s.SamplesB, s.SelfA, s.SelfB)
		for _, h := range s.Hooks {
			fmt.Fprintf(&b, "; %s below it", h.Option)
		}
		b.WriteByte('\n')
	}
	if at.Unexplained != "" {
		fmt.Fprintf(&b, "  the profile cannot explain it: %s\n", at.Unexplained)
	} else {
		fmt.Fprintf(&b, "  these explain %.0f%% of the difference\n", 100*at.Explained)
	}
	for _, h := range at.Hooks {
		fmt.Fprintf(&b, "  %s (%s): %s ns/call (95%% %s to %s; %d vs %d samples); %s in %s's kernel",
			h.Option, h.What, signed(h.Diff.Value), num(h.Diff.Lo), num(h.Diff.Hi), h.SamplesA, h.SamplesB, h.StateA, at.A)
		if h.StateB != h.StateA {
			fmt.Fprintf(&b, ", %s in %s's", h.StateB, at.B)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func signed(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%+.1f", v)
	}
	return fmt.Sprintf("%+.0f", v)
}

func num(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
