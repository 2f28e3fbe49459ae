package profile

import (
	"slices"
	"strings"
)

// The thresholds of Attribute's entry-path rule (see its doc).
const (
	// oneSidedShare: a function is one-sided when its ns per call in one
	// variant is at most this share of the other's.
	oneSidedShare = 0.05
	// pairFloorPer: a pairing needs, in each variant, at least one in
	// pairFloorPer drain samples (and pairFloorMin) reaching the callee,
	// so a stray mis-unwound stack pairs nothing.
	pairFloorPer = 500
	pairFloorMin = 2
	// entryOfReach and entryOfRun: a one-sided function is an entry
	// function when its runs reach a paired callee in this share of all
	// samples that reach one, or in this share of its own run samples.
	entryOfReach = 0.05
	entryOfRun   = 0.25
)

// rootKey stands for "above the outermost frame" as a run's caller. Its
// name is no symbol's: of the names a profile holds only Unknown is
// bracketed.
var rootKey = fkey{name: "[root]"}

// pairKey is a shared caller X and a shared callee Y.
type pairKey struct{ x, y fkey }

// run is a stretch of one-sided frames, frames[lo..hi] (innermost
// first, so lo is the innermost).
type run struct{ lo, hi int }

// part is where a drain sample's cost belongs.
type part uint8

const (
	partShared part = iota
	partOwn
	partEntry
)

// split is the drain of both variants divided by Attribute's entry-path
// rule: index 0 is variant A, 1 is B.
type split struct {
	whole              [2]*side
	common             map[fkey]bool
	paired             map[pairKey]bool
	reach              map[pairKey]uint64 // samples reaching a paired callee, both variants
	entryFunc          map[fkey]bool
	own, shared, entry [2]*side
	chains             [2]map[string]uint64 // "X\x00f1\x00f2…" of entry runs reaching a paired callee
}

// splitDrain applies the rule to the whole drains sa and sb.
func splitDrain(sa, sb *side) *split {
	sp := &split{whole: [2]*side{sa, sb}, common: commonFuncs(sa, sb)}
	sp.pair()
	sp.findEntryFuncs()
	for i, s := range sp.whole {
		var own, shared, entry []cstack
		sp.chains[i] = map[string]uint64{}
		for _, st := range s.stacks {
			if isInterruption(st.full) {
				continue // counted by Attribute as Interrupted
			}
			p, root, drop := sp.classify(st.full)
			switch p {
			case partOwn:
				own = append(own, cstack{full: st.full, frames: st.full[:root+1], count: st.count})
			case partEntry:
				entry = append(entry, cstack{full: st.full, frames: st.full[:root+1], count: st.count})
			default:
				shared = append(shared, cstack{full: st.full, frames: without(st.full, drop), count: st.count})
			}
			sp.countChains(i, st)
		}
		sp.own[i] = newSide(s.n, s.callNs, own)
		sp.shared[i] = newSide(s.n, s.callNs, shared)
		sp.entry[i] = newSide(s.n, s.callNs, entry)
	}
	return sp
}

// commonFuncs are the functions whose ns per call in each variant is
// more than oneSidedShare of the other's.
func commonFuncs(sa, sb *side) map[fkey]bool {
	c := map[fkey]bool{}
	for k, na := range sa.incl {
		nb := sb.incl[k]
		if nb == 0 {
			continue
		}
		va, _ := sa.ns(na)
		vb, _ := sb.ns(nb)
		if min(va, vb) > oneSidedShare*max(va, vb) {
			c[k] = true
		}
	}
	return c
}

// runs are the maximal stretches of one-sided frames, outermost first.
func (sp *split) runs(frames []Frame) []run {
	var out []run
	for i := len(frames) - 1; i >= 0; i-- {
		if sp.common[keyOf(frames[i])] {
			continue
		}
		r := run{lo: i, hi: i}
		for r.lo > 0 && !sp.common[keyOf(frames[r.lo-1])] {
			r.lo--
		}
		out = append(out, r)
		i = r.lo
	}
	return out
}

// ends are a run's shared caller (rootKey above the outermost frame)
// and shared callee (ok false when the run holds the innermost frame).
func ends(frames []Frame, r run) (x, y fkey, ok bool) {
	x = rootKey
	if r.hi+1 < len(frames) {
		x = keyOf(frames[r.hi+1])
	}
	if r.lo == 0 {
		return x, fkey{}, false
	}
	return x, keyOf(frames[r.lo-1]), true
}

// pair finds the paired callers and callees: a fixpoint over every
// (caller, callee) of a run in either variant.
func (sp *split) pair() {
	queries := map[pairKey]bool{}
	for _, s := range sp.whole {
		for _, st := range s.stacks {
			for _, r := range sp.runs(st.full) {
				// An interrupt entry below a run is no callee of it.
				if x, y, ok := ends(st.full, r); ok && !(y.kernel && hasPrefix(interruptionFrames, BaseName(y.name))) {
					queries[pairKey{x, y}] = true
				}
			}
		}
	}
	sp.paired, sp.reach = map[pairKey]bool{}, map[pairKey]uint64{}
	for changed := true; changed; {
		changed = false
		for q := range queries {
			if sp.paired[q] {
				continue
			}
			na, nb := sp.reaches(sp.whole[0], q), sp.reaches(sp.whole[1], q)
			if na >= pairFloor(sp.whole[0]) && nb >= pairFloor(sp.whole[1]) {
				sp.paired[q], sp.reach[q], changed = true, na+nb, true
			}
		}
	}
}

func pairFloor(s *side) uint64 { return max(pairFloorMin, s.n/pairFloorPer) }

// reaches counts the samples of s in which q.y is called below q.x with
// only one-sided frames, or shared frames already paired with q.x,
// between them.
func (sp *split) reaches(s *side, q pairKey) uint64 {
	var n uint64
	for _, st := range s.stacks {
		for j, f := range st.full {
			if keyOf(f) == q.y && sp.chainOK(st.full, j, q.x) {
				n += st.count
				break
			}
		}
	}
	return n
}

// chainOK says the frames above frames[j] up to x qualify (see reaches).
func (sp *split) chainOK(frames []Frame, j int, x fkey) bool {
	for i := j + 1; i < len(frames); i++ {
		k := keyOf(frames[i])
		switch {
		case k == x:
			return true
		case !sp.common[k], sp.paired[pairKey{x, k}]:
			continue
		}
		return false
	}
	return x == rootKey
}

// findEntryFuncs marks the one-sided functions on entry paths.
func (sp *split) findEntryFuncs() {
	sp.entryFunc = map[fkey]bool{}
	for _, s := range sp.whole {
		var total uint64
		reach, inRun := map[fkey]uint64{}, map[fkey]uint64{}
		for _, st := range s.stacks {
			seenR, seenI := map[fkey]bool{}, map[fkey]bool{}
			hasPaired := false
			for _, r := range sp.runs(st.full) {
				x, y, ok := ends(st.full, r)
				pairedRun := ok && sp.paired[pairKey{x, y}]
				hasPaired = hasPaired || pairedRun
				for p := r.lo; p <= r.hi; p++ {
					k := keyOf(st.full[p])
					if !seenI[k] {
						seenI[k] = true
						inRun[k] += st.count
					}
					if pairedRun && !seenR[k] {
						seenR[k] = true
						reach[k] += st.count
					}
				}
			}
			if hasPaired {
				total += st.count
			}
		}
		for k, n := range reach {
			if float64(n) >= entryOfReach*float64(total) || float64(n) >= entryOfRun*float64(inRun[k]) {
				sp.entryFunc[k] = true
			}
		}
	}
}

// classify reads a stack from the outside in (see Attribute, rule 4):
// its part, the index of the seat root (partOwn) or of the outermost
// frame counted (partEntry), and for partShared the entry frames to
// take out.
func (sp *split) classify(frames []Frame) (p part, root int, drop []bool) {
	for _, r := range sp.runs(frames) {
		for i := r.hi; i >= r.lo; i-- {
			if !sp.entryFunc[keyOf(frames[i])] {
				return partOwn, i, nil
			}
		}
		x, y, ok := ends(frames, r)
		if !ok {
			return partEntry, r.hi, nil
		}
		if !sp.paired[pairKey{x, y}] {
			return partOwn, r.lo - 1, nil
		}
		if drop == nil {
			drop = make([]bool, len(frames))
		}
		for i := r.lo; i <= r.hi; i++ {
			drop[i] = true
		}
	}
	return partShared, 0, drop
}

// without returns frames less those marked in drop (frames itself when
// none is).
func without(frames []Frame, drop []bool) []Frame {
	if drop == nil {
		return frames
	}
	out := make([]Frame, 0, len(frames))
	for i, f := range frames {
		if !drop[i] {
			out = append(out, f)
		}
	}
	return out
}

// countChains adds st's entry runs that reach a paired callee, for
// EntryPaths.PathsA/B.
func (sp *split) countChains(i int, st cstack) {
	for _, r := range sp.runs(st.full) {
		x, y, ok := ends(st.full, r)
		if !ok || !sp.paired[pairKey{x, y}] {
			continue
		}
		names := []string{x.name}
		for p := r.hi; p >= r.lo; p-- {
			if !sp.entryFunc[keyOf(st.full[p])] {
				names = nil
				break
			}
			names = append(names, st.full[p].Func)
		}
		if names != nil {
			sp.chains[i][strings.Join(names, "\x00")] += st.count
		}
	}
}

// entryPaths summarises the entry paths and their own code's cost.
func (sp *split) entryPaths(z float64) EntryPaths {
	e := EntryPaths{SamplesA: sp.entry[0].m, SamplesB: sp.entry[1].m,
		Diff: diff(sp.whole[0], sp.whole[1], sp.entry[0].m, sp.entry[1].m, z)}
	e.PathsA, e.PathsB = commonestChains(sp.chains[0]), commonestChains(sp.chains[1])
	e.SelfA, e.SelfB = selfCounts(sp.entry[0]), selfCounts(sp.entry[1])
	type via struct {
		y fkey
		n uint64
	}
	byY := map[fkey]uint64{}
	for q, n := range sp.reach {
		byY[q.y] += n
	}
	var vs []via
	for y, n := range byY {
		vs = append(vs, via{y, n})
	}
	slices.SortFunc(vs, func(a, b via) int {
		if a.n != b.n {
			return cmpFloat(float64(b.n), float64(a.n))
		}
		return strings.Compare(a.y.name, b.y.name)
	})
	for _, v := range vs {
		e.Via = append(e.Via, v.y.name)
	}
	return e
}

// commonestChains keeps the commonest chain below each shared caller,
// most sampled first, without the caller.
func commonestChains(chains map[string]uint64) [][]string {
	type best struct {
		chain string
		n     uint64
	}
	byX := map[string]best{}
	for c, n := range chains {
		x, _, _ := strings.Cut(c, "\x00")
		if b := byX[x]; n > b.n || (n == b.n && c < b.chain) {
			byX[x] = best{c, n}
		}
	}
	bs := make([]best, 0, len(byX))
	for _, b := range byX {
		bs = append(bs, b)
	}
	slices.SortFunc(bs, func(a, b best) int {
		if a.n != b.n {
			return cmpFloat(float64(b.n), float64(a.n))
		}
		return strings.Compare(a.chain, b.chain)
	})
	var out [][]string
	for _, b := range bs {
		out = append(out, strings.Split(b.chain, "\x00")[1:])
	}
	return out
}

// selfCounts are s's self counts by function, most first.
func selfCounts(s *side) []FuncCount {
	out := make([]FuncCount, 0, len(s.self))
	for k, n := range s.self {
		out = append(out, FuncCount{Func: k.name, Kernel: k.kernel, Samples: n})
	}
	slices.SortFunc(out, func(a, b FuncCount) int {
		if a.Samples != b.Samples {
			return cmpFloat(float64(b.Samples), float64(a.Samples))
		}
		return strings.Compare(a.Func, b.Func)
	})
	return out
}
