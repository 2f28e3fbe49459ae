package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAnalyseRecoversBeta feeds the analysis 40 minutes of synthetic 1 s
// points whose per-call cost follows the null syscall with β = 1.7 plus
// small noise, under a drift that steps every 2 minutes: β and r come
// back, and the adjusted log-SD is a small part of the raw one.
func TestAnalyseRecoversBeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pts []point
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	drift := 0.0
	for s := range 2400 {
		if s%120 == 0 {
			drift = 0.05 * rng.NormFloat64()
		}
		x := math.Log(520) + drift + 0.01*rng.NormFloat64()
		y := math.Log(2000) + 1.7*drift + 0.01*rng.NormFloat64()
		z := math.Log(570) + 0.3*drift + 0.01*rng.NormFloat64()
		pts = append(pts, point{t: t0.Add(time.Duration(s) * time.Second), fromNs: int64(s) * 1e9, y: y, x: x, z: z, ym: y, xm: x, zm: z})
	}
	ws := windows(pts, time.Minute)
	if len(ws) != 40 || ws[0].n != 60 {
		t.Fatalf("%d windows (first of %d points), want 40 of 60", len(ws), ws[0].n)
	}
	col := func(f func(w window) float64) []float64 {
		out := make([]float64, len(ws))
		for i, x := range ws {
			out[i] = f(x)
		}
		return out
	}
	a := analyse(col(func(w window) float64 { return w.y }), col(func(w window) float64 { return w.x }), col(func(w window) float64 { return w.z }),
		[]float64{1, 2, 3}, []float64{1, 2, 3.5})
	if b := a.all[2].beta; math.Abs(b-1.7) > 0.1 || a.all[2].r < 0.95 {
		t.Errorf("β %.2f r %.2f, want 1.7, > 0.95", b, a.all[2].r)
	}
	if a.adj2/a.raw2 > 0.2 {
		t.Errorf("held-out adjusted log-SD %.4f of raw %.4f: want a small part", a.adj2, a.raw2)
	}
	if bx := a.all[5].beta; math.Abs(bx-1.7) > 0.3 {
		t.Errorf("two-control fit: null β %.2f, want about 1.7", bx)
	}
}
