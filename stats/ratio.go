package stats

// Ratios are y/x value by value, for an interval of a metric net of a
// control at slope 1 (compare's NetOfAt): y and x have the same shape (a
// group per process, a value per round); a value whose x is missing or
// ≤ 0 becomes −1, so that the log-scale interval refuses it.
func Ratios(y, x [][]float64) [][]float64 {
	out := make([][]float64, len(y))
	for i := range y {
		out[i] = make([]float64, len(y[i]))
		for j, v := range y[i] {
			out[i][j] = -1
			if i < len(x) && j < len(x[i]) && x[i][j] > 0 {
				out[i][j] = v / x[i][j]
			}
		}
	}
	return out
}

// RatioSessions is Ratios session by session (Sessions' shape).
func RatioSessions(y, x [][][]float64) [][][]float64 {
	out := make([][][]float64, len(y))
	for s := range y {
		var xs [][]float64
		if s < len(x) {
			xs = x[s]
		}
		out[s] = Ratios(y[s], xs)
	}
	return out
}
