package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// TQuantile returns the p-quantile (0 < p < 1) of Student's t with df > 0
// degrees of freedom (not necessarily an integer), from gonum's
// distuv.StudentsT; NaN outside that domain. TQuantile(0.975, 8) =
// 2.306004. With df = +Inf it is the normal quantile.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if math.IsInf(df, 1) {
		return NormQuantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// TCDF is the cumulative distribution function of Student's t with df
// degrees of freedom (gonum's distuv.StudentsT).
func TCDF(t, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
}

// NormQuantile is the p-quantile of the standard normal distribution.
func NormQuantile(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// NormCDF is the standard normal distribution function.
func NormCDF(z float64) float64 { return distuv.UnitNormal.CDF(z) }
