package compare

import (
	"gonum.org/v1/gonum/stat/distuv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// Confidence is the two-sided level of every interval: 95%.
const Confidence = 0.95

// Resamples is the number of bootstrap resamples, drawn from a PCG seeded
// with BootstrapSeed so that the same inputs always give the same interval.
const (
	Resamples     = 1000
	BootstrapSeed = 1
)

// Welch is Welch's unequal-variances t interval for mean(b) − mean(a).
type Welch struct {
	Diff    float64 // mean(b) − mean(a)
	SE      float64 // sqrt(s²a/na + s²b/nb), sample variances (n−1)
	DF      float64 // Welch–Satterthwaite degrees of freedom
	T       float64 // t quantile at (1+Confidence)/2 with DF degrees of freedom
	Lo, Hi  float64 // Diff ∓ T·SE
	NA, NB  int
	MA, MB  float64 // the two means
	SA, SB  float64 // the two sample standard deviations
	Defined bool    // false when either side has fewer than 2 values
}

// WelchCI computes the Confidence interval of mean(b) − mean(a) by Welch's
// t-test. Both sides need at least 2 values (else Defined is false). When
// both variances are 0 the interval is the point Diff (and DF = na+nb−2).
func WelchCI(a, b []float64) Welch {
	w := Welch{NA: len(a), NB: len(b)}
	if len(a) < 2 || len(b) < 2 {
		return w
	}
	sa, sb := report.Summarize(a), report.Summarize(b)
	w.MA, w.MB, w.SA, w.SB = sa.Mean, sb.Mean, sa.StdSample, sb.StdSample
	w.Diff = sb.Mean - sa.Mean
	va := sa.StdSample * sa.StdSample / float64(len(a))
	vb := sb.StdSample * sb.StdSample / float64(len(b))
	w.SE = math.Sqrt(va + vb)
	w.Defined = true
	if w.SE == 0 {
		w.DF = float64(len(a) + len(b) - 2)
		w.T = TQuantile((1+Confidence)/2, w.DF)
		w.Lo, w.Hi = w.Diff, w.Diff
		return w
	}
	w.DF = (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	w.T = TQuantile((1+Confidence)/2, w.DF)
	w.Lo, w.Hi = w.Diff-w.T*w.SE, w.Diff+w.T*w.SE
	return w
}

// TQuantile returns the p-quantile (0 < p < 1) of Student's t distribution
// with df > 0 degrees of freedom (not necessarily an integer), from
// gonum's distuv.StudentsT; NaN outside that domain. TQuantile(0.975, 8)
// = 2.306004.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// TCDF is the cumulative distribution function of Student's t with df
// degrees of freedom (gonum's distuv.StudentsT).
func TCDF(t, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
}

// Bootstrap is a percentile bootstrap interval of stat(b) − stat(a).
type Bootstrap struct {
	Diff   float64 // the point difference the interval is centred on
	Lo, Hi float64
	N      int    // resamples
	Seed   uint64 // PCG seed
}

// resampler draws one bootstrap replicate of a statistic; center is the
// statistic on the data as given (before resampling).
type resampler struct {
	draw   func(r *rand.Rand) float64
	center float64
}

// bootstrapCI resamples a and b independently Resamples times with a PCG
// seeded with BootstrapSeed and returns diff (the caller's point
// difference) plus the 2.5% and 97.5% quantiles of the replicate
// differences minus their centre. With stat the same function on exact
// and rebuilt data this is the plain percentile interval; the shift keeps
// it around the exact difference when the bootstrap works on rebuilt
// samples (bucket midpoints).
func bootstrapCI(a, b resampler, diff float64) Bootstrap {
	r := rand.New(rand.NewPCG(BootstrapSeed, 0x9e3779b97f4a7c15))
	ds := make([]float64, Resamples)
	for i := range ds {
		// Draw a then b each time so both sides see the same stream shape.
		da := a.draw(r)
		db := b.draw(r)
		ds[i] = db - da
	}
	slices.Sort(ds)
	shift := diff - (b.center - a.center)
	lo := quantileSorted(ds, (1-Confidence)/2)
	hi := quantileSorted(ds, (1+Confidence)/2)
	return Bootstrap{Diff: diff, Lo: lo + shift, Hi: hi + shift, N: Resamples, Seed: BootstrapSeed}
}

// quantileSorted is the linear-interpolated quantile q of sorted xs (R's
// type 7).
func quantileSorted(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// histStat is a statistic of a linear histogram: its mean (over bucket
// midpoints) or the lower edge of the bucket holding a quantile.
type histStat func(counts []uint64, over uint64, s *record.Snapshot, mids []float64) float64

func histMean(counts []uint64, over uint64, _ *record.Snapshot, mids []float64) float64 {
	var n, sum float64
	for i, c := range counts {
		n += float64(c)
		sum += float64(c) * mids[i]
	}
	n += float64(over)
	sum += float64(over) * mids[len(mids)-1]
	if n == 0 {
		return 0
	}
	return sum / n
}

func histQuantile(q float64) histStat {
	return func(counts []uint64, over uint64, s *record.Snapshot, _ []float64) float64 {
		t := *s
		t.Counts, t.OverflowCount = counts, over
		return float64(results.BucketPercentile(t, q))
	}
}

// midpoints rebuilds one value per bucket of s: the bucket's midpoint, the
// middle of [0, Origin) for bucket 0, and for the overflow bucket the mean
// its samples must have had given s.Sum (at least Overflow, at most Max).
// The last element is the overflow value.
func midpoints(s record.Snapshot) []float64 {
	mids := make([]float64, len(s.Counts)+1)
	var inSum float64
	for i := range s.Counts {
		if i == 0 {
			mids[i] = float64(s.Origin) / 2
		} else {
			mids[i] = float64(s.Lower(i)) + float64(s.Width)/2
		}
		inSum += mids[i] * float64(s.Counts[i])
	}
	ov := float64(s.Overflow)
	if s.OverflowCount > 0 {
		if est := (float64(s.Sum) - inSum) / float64(s.OverflowCount); est > ov {
			ov = est
		}
		if m := float64(s.Max); m >= float64(s.Overflow) && ov > m {
			ov = m
		}
	}
	mids[len(s.Counts)] = ov
	return mids
}

// histResampler resamples the samples of s multinomially (sequential
// conditional binomials over the buckets and the overflow bucket) and
// applies stat.
func histResampler(s record.Snapshot, stat histStat) resampler {
	mids := midpoints(s)
	n := s.OverflowCount
	for _, c := range s.Counts {
		n += c
	}
	counts := make([]uint64, len(s.Counts))
	return resampler{
		center: stat(s.Counts, s.OverflowCount, &s, mids),
		draw: func(r *rand.Rand) float64 {
			left := n
			rem := float64(n)
			for i, c := range s.Counts {
				if left == 0 || rem <= 0 {
					counts[i] = 0
					continue
				}
				k := binomial(r, left, float64(c)/rem)
				counts[i] = k
				left -= k
				rem -= float64(c)
			}
			return stat(counts, left, &s, mids)
		},
	}
}

// binomial draws from Binomial(n, p): by CDF inversion when the mean is
// under 30 (or its mirror is), else from the normal approximation, rounded
// and clamped to [0, n] (its error is far below the bootstrap's own).
func binomial(r *rand.Rand, n uint64, p float64) uint64 {
	switch {
	case p <= 0 || n == 0:
		return 0
	case p >= 1:
		return n
	}
	if p > 0.5 {
		return n - binomial(r, n, 1-p)
	}
	nf := float64(n)
	mean := nf * p
	if mean < 30 {
		// Inversion: walk the pmf from 0.
		u := r.Float64()
		q := 1 - p
		pk := math.Exp(nf * math.Log1p(-p))
		cdf := pk
		var k uint64
		for u > cdf && k < n {
			pk *= (nf - float64(k)) / float64(k+1) * p / q
			k++
			cdf += pk
			if pk == 0 {
				break
			}
		}
		return k
	}
	x := math.Round(mean + r.NormFloat64()*math.Sqrt(mean*(1-p)))
	return uint64(min(max(x, 0), nf))
}

// sampleResampler resamples xs with replacement and applies stat (mean or
// a quantile) to each replicate.
func sampleResampler(xs []float64, stat func([]float64) float64) resampler {
	buf := make([]float64, len(xs))
	return resampler{
		center: stat(slices.Clone(xs)),
		draw: func(r *rand.Rand) float64 {
			for i := range buf {
				buf[i] = xs[r.IntN(len(xs))]
			}
			return stat(buf)
		},
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// quantileOf returns a statistic giving the q-quantile (nearest rank, as
// HdrHistogram reports) of its argument, which it sorts in place.
func quantileOf(q float64) func([]float64) float64 {
	return func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		rank := int(math.Ceil(q * float64(len(xs))))
		rank = min(max(rank, 1), len(xs))
		return xs[rank-1]
	}
}
