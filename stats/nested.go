package stats

import (
	"fmt"
	"math"
)

// Logs returns the natural logarithms of the values of every group, empty
// groups left out; ok is false when a value is not finite or not > 0 (a
// log-scale interval needs positive values).
func Logs(groups [][]float64) (logs [][]float64, ok bool) {
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		l := make([]float64, len(g))
		for i, v := range g {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, false
			}
			l[i] = math.Log(v)
		}
		logs = append(logs, l)
	}
	return logs, true
}

// meanVar returns the mean and the sample variance (n−1) of xs; the
// variance is NaN for fewer than 2 values.
func meanVar(xs []float64) (mean, v float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return mean, v / float64(len(xs)-1)
}

func unitMeans(logs [][]float64) []float64 {
	m := make([]float64, len(logs))
	for i, g := range logs {
		m[i], _ = meanVar(g)
	}
	return m
}

func flatten(logs [][]float64) []float64 {
	var out []float64
	for _, g := range logs {
		out = append(out, g...)
	}
	return out
}

// Shape names a nested sample: "6 processes × 8 rounds", "1 process × 3
// rounds", "6 processes × 2–3 rounds".
func Shape(groups [][]float64) string {
	p, lo, hi := 0, math.MaxInt, 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		p++
		lo, hi = min(lo, len(g)), max(hi, len(g))
	}
	if p == 0 {
		return "0 processes"
	}
	r := fmt.Sprint(lo)
	if hi != lo {
		r = fmt.Sprintf("%d–%d", lo, hi)
	}
	return fmt.Sprintf("%s × %s %s", plural(p, "process", "processes"), r, pluralWord(hi, "round", "rounds"))
}

func plural(n int, one, many string) string { return fmt.Sprintf("%d %s", n, pluralWord(n, one, many)) }

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// shapes names both sides: one shape when they match, else "A …, B …".
func shapes(a, b [][]float64) string {
	sa, sb := Shape(a), Shape(b)
	if sa == sb {
		return sa
	}
	return "A " + sa + ", B " + sb
}

// welch fills c from the two sides' unit values on the log scale: Welch's
// unequal-variances t with the Welch–Satterthwaite degrees of freedom
// (dfA, dfB the degrees of freedom of each side's variance estimate).
func welch(c *Change, ma, va float64, na int, dfA float64, mb, vb float64, nb int, dfB float64) {
	c.UnitVar, c.Units = [2]float64{va, vb}, [2]int{na, nb}
	sa, sb := va/float64(na), vb/float64(nb)
	se2 := sa + sb
	c.SELog = math.Sqrt(se2)
	switch {
	case se2 == 0:
		c.DF = dfA + dfB
	default:
		c.DF = se2 * se2 / (sa*sa/dfA + sb*sb/dfB)
	}
	setInterval(c, mb-ma)
}

// setInterval sets Point, Lo and Hi from the log difference d, SELog, DF
// and Level.
func setInterval(c *Change, d float64) {
	if c.Level == 0 {
		c.Level = Level
	}
	t := TQuantile((1+c.Level)/2, c.DF)
	c.Point = math.Expm1(d)
	c.Lo, c.Hi = math.Expm1(d-t*c.SELog), math.Expm1(d+t*c.SELog)
	if math.IsNaN(t) || math.IsNaN(c.SELog) {
		c.Lo, c.Hi = math.NaN(), math.NaN()
	}
}

// Nested is the Change of B against A from two independent nested
// samples: a[i] holds the per-round values (> 0, e.g. a mean per-call
// cost) of process i of A, b likewise; A's and B's processes are
// distinct (two runs). The interval is Welch's t on the log scale, and
// its unit is the top level both sides measured:
//
//   - processes, when both sides have ≥ 2: the units are per-process means
//     of log values, df from the processes (Welch–Satterthwaite);
//   - when one side has 1 process and the other ≥ 2, that one process's
//     variance is the other side's between-process component plus its own
//     round-to-round variance over its rounds (Components), with the other
//     side's degrees of freedom, and a Note says so;
//   - with 1 process on each side, the rounds, and a Note that the
//     between-process noise was not measured: the interval covers
//     round-to-round noise only.
//
// Values ≤ 0 or too few units give an Undefined change.
func Nested(a, b [][]float64) Change {
	return NestedAt(a, b, Level)
}

// NestedAt is Nested at confidence level (0.95, or more when corrected).
func NestedAt(a, b [][]float64, level float64) Change {
	la, oka := Logs(a)
	lb, okb := Logs(b)
	if !oka || !okb {
		return Undefined("a value ≤ 0: no log-scale interval")
	}
	return nestedLogs(la, lb, level)
}

// nestedLogs is NestedAt on log values (empty processes left out).
func nestedLogs(la, lb [][]float64, level float64) Change {
	pa, pb := len(la), len(lb)
	c := Change{Level: level, N: shapes(la, lb), Unit: "process", Method: "Welch t on per-process mean logs"}
	switch {
	case pa == 0 || pb == 0:
		u := Undefined("no samples on one side")
		u.N = c.N
		return u
	case pa >= 2 && pb >= 2:
		ma, va := meanVar(unitMeans(la))
		mb, vb := meanVar(unitMeans(lb))
		welch(&c, ma, va, pa, float64(pa-1), mb, vb, pb, float64(pb-1))

	case pa == 1 && pb == 1:
		c.Unit, c.Method = "round", "Welch t on per-round logs"
		ra, rb := flatten(la), flatten(lb)
		if len(ra) < 2 || len(rb) < 2 {
			u := Undefined("1 process × 1 round on a side: no interval (run --processes ≥ 2)")
			u.N = c.N
			return u
		}
		ma, va := meanVar(ra)
		mb, vb := meanVar(rb)
		welch(&c, ma, va, len(ra), float64(len(ra)-1), mb, vb, len(rb), float64(len(rb)-1))
		c.Notes = append(c.Notes, "1 process per side: the between-process noise was not measured, so the interval covers round-to-round noise only (run --processes ≥ 2)")
	default:
		single, multi, swap := la, lb, false
		if pa >= 2 {
			single, multi, swap = lb, la, true
		}
		v := components(multi)
		mm, vm := meanVar(unitMeans(multi))
		ms, _ := meanVar(single[0])
		// The single process's own rounds join the round-to-round estimate.
		within := pooledWithin(append([][]float64{single[0]}, multi...))
		if math.IsNaN(within) {
			within = 0
		}
		bp := v.BetweenProcesses
		if math.IsNaN(bp) {
			bp = 0
		}
		vs := bp + within/float64(len(single[0]))
		df := float64(len(multi) - 1)
		side := "B"
		if !swap {
			side = "A"
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s has 1 process: its between-process variance is taken from the other side's %d processes", side, len(multi)))
		if swap {
			welch(&c, mm, vm, len(multi), df, ms, vs, 1, df)
		} else {
			welch(&c, ms, vs, 1, df, mm, vm, len(multi), df)
		}
	}
	return c
}

// NestedPaired is the Change of B against A when they ran in the same
// processes (two variants of one run): a[i] and b[i] are the per-round
// values of process i. With ≥ 2 processes holding both, the units are the
// per-process differences of mean logs (paired t, df = processes − 1),
// which takes in every noise a process adds to one variant and not the
// other. With one process it is Welch's t on the rounds, and a Note says
// that the variant × process noise was not measured.
func NestedPaired(a, b [][]float64) Change {
	return NestedPairedAt(a, b, Level)
}

// NestedPairedAt is NestedPaired at confidence level.
func NestedPairedAt(a, b [][]float64, level float64) Change {
	if len(a) != len(b) {
		return NestedAt(a, b, level)
	}
	var da, db [][]float64
	for i := range a {
		if len(a[i]) == 0 || len(b[i]) == 0 {
			continue
		}
		da, db = append(da, a[i]), append(db, b[i])
	}
	la, oka := Logs(da)
	lb, okb := Logs(db)
	if !oka || !okb {
		return Undefined("a value ≤ 0: no log-scale interval")
	}
	return nestedPairedLogs(la, lb, level)
}

// nestedPairedLogs is NestedPairedAt on the log values of the processes
// holding both variants (la[i] and lb[i] of process i, none empty).
func nestedPairedLogs(la, lb [][]float64, level float64) Change {
	if len(la) < 2 {
		c := nestedLogs(la, lb, level)
		if c.Defined() && len(la) == 1 {
			c.Notes = []string{"1 process: the interval covers round-to-round noise only; noise a process adds to one variant and not the other was not measured (run --processes ≥ 2)"}
		}
		return c
	}
	var diffs []float64
	for i := range la {
		ma, _ := meanVar(la[i])
		mb, _ := meanVar(lb[i])
		diffs = append(diffs, mb-ma)
	}
	m, v := meanVar(diffs)
	n := len(diffs)
	c := Change{Level: level, N: shapes(la, lb), Unit: "process", Paired: true, Method: "paired t on per-process differences of mean logs",
		UnitVar: [2]float64{v, 0}, Units: [2]int{n, n}, SELog: math.Sqrt(v / float64(n)), DF: float64(n - 1)}
	setInterval(&c, m)
	return c
}
