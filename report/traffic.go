package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rtload/rtload/results"
)

// feeds reports whether traffic group tr feeds reader r of a trial of
// nReaders readers: r names its endpoint, or r is alone in its trial.
func feeds(tr results.Traffic, r results.Reader, nReaders int) bool {
	if r.Endpoint == "" {
		return nReaders == 1
	}
	return slices.Contains(strings.Split(r.Endpoint, ","), tr.Endpoint)
}

// trafficEndpoints lists the traffic groups of the columns, in the order
// first seen.
func trafficEndpoints(cols []column) []string {
	var eps []string
	for _, c := range cols {
		for _, tr := range c.traffic {
			if !slices.Contains(eps, tr.Endpoint) {
				eps = append(eps, tr.Endpoint)
			}
		}
	}
	return eps
}

// trafficBlocks are one block per traffic group: the target and achieved
// rate (rounds merged: every message sent over the time the senders ran),
// the rate error against the schedule (sent against due), the send lag
// p50/p99/max (µs, send − due, rounds merged), the sender's policy and
// CPUs as read back, and whether every round was as specified. A column
// the group does not feed shows "-".
func trafficBlocks(cols []column) []*kv {
	var blocks []*kv
	for _, ep := range trafficEndpoints(cols) {
		rounds := make([][]results.Traffic, len(cols))
		missed := make([]int, len(cols))
		for i, c := range cols {
			for j, tr := range c.traffic {
				if tr.Endpoint == ep {
					rounds[i] = append(rounds[i], tr)
					if c.trafficMissed[j] {
						missed[i]++
					}
				}
			}
		}
		cell := func(f func(trs []results.Traffic) string) []string {
			out := make([]string, len(cols))
			for i, trs := range rounds {
				out[i] = "-"
				if len(trs) > 0 {
					out[i] = f(trs)
				}
			}
			return out
		}
		k := &kv{title: "traffic to " + ep + " (msg/s; send lag = time sent − time due, µs)"}
		k.add("target rate", cell(func(trs []results.Traffic) string { return f1(trs[0].TargetRate) })...)
		k.add("achieved rate", cell(func(trs []results.Traffic) string { return f1(achievedRate(trs)) })...)
		k.add("rate error (sent vs due)", cell(rateError)...)
		lag := func(q results.Quantity) func(trs []results.Traffic) string {
			return func(trs []results.Traffic) string {
				ls := make([]results.Latency, len(trs))
				for i, tr := range trs {
					ls[i] = tr.SendLag
				}
				l, _ := results.MergeLatency(ls...)
				if l.Count == 0 {
					return "-"
				}
				return Microseconds(l.Ns(q))
			}
		}
		k.add("send lag p50", cell(lag(results.P50))...)
		k.add("send lag p99", cell(lag(results.P99))...)
		k.add("send lag max", cell(lag(results.Max))...)
		k.add("max_send_lag (p99 bound)", cell(func(trs []results.Traffic) string {
			if trs[0].MaxSendLagNs <= 0 {
				return "-"
			}
			return Microseconds(float64(trs[0].MaxSendLagNs))
		})...)
		k.add("sender policy (read back)", cell(func(trs []results.Traffic) string {
			if trs[0].Applied == nil {
				return "?"
			}
			return policy(*trs[0].Applied) + " cpus " + cpuList(trs[0].Applied.CPUs)
		})...)
		as := cell(func([]results.Traffic) string { return "" })
		for i, trs := range rounds {
			if len(trs) > 0 {
				as[i] = asSpecified(missed[i], len(trs))
			}
		}
		k.add("as specified", as...)
		blocks = append(blocks, k)
	}
	return blocks
}

// achievedRate is every round's messages over the time the sender ran
// (each round's Sent / AchievedRate).
func achievedRate(trs []results.Traffic) float64 {
	var sent, secs float64
	for _, tr := range trs {
		if tr.AchievedRate > 0 {
			sent += float64(tr.Sent)
			secs += float64(tr.Sent) / tr.AchievedRate
		}
	}
	if secs == 0 {
		return 0
	}
	return sent / secs
}

// rateError is every round's messages sent against those due, in % of
// due, with the worst round's when rounds differ in sign or size.
func rateError(trs []results.Traffic) string {
	var sent, due float64
	worst := 0.0
	for _, tr := range trs {
		sent += float64(tr.Sent)
		due += float64(tr.Due)
		if math.Abs(tr.RateErrorPct) > math.Abs(worst) {
			worst = tr.RateErrorPct
		}
	}
	if due == 0 {
		return "-"
	}
	s := pct((sent - due) / due * 100)
	if len(trs) > 1 && pct(worst) != s {
		s += " (worst " + pct(worst) + ")"
	}
	return s
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "%" }

// asSpecified is "yes", or "NO" with the rounds (bad of n) that missed a
// threshold.
func asSpecified(bad, n int) string {
	switch {
	case bad == 0:
		return "yes"
	case n == 1:
		return "NO"
	}
	return fmt.Sprintf("NO (%d of %d)", bad, n)
}

// trafficMissed reports whether traffic group endpoint missed a threshold
// in trial t: t holds a MarkTraffic for it (or, from a version 2 summary
// that named no group, for the whole trial).
func trafficMissed(t *results.Trial, endpoint string) bool {
	for _, m := range t.Marks {
		if m.Kind == results.MarkTraffic && (m.Endpoint == endpoint || m.Endpoint == "") {
			return true
		}
	}
	return false
}
