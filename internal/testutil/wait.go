package testutil

import "time"

// Eventually reports whether cond holds within timeout, checking it at
// once and then every millisecond (a time.Ticker: the wait ends when the
// condition holds, never after a fixed sleep). Tests wait on what they
// need (a thread started, a file written, a counter moved), bounded by
// timeout, never on a guess of how long it takes.
func Eventually(timeout time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
		case <-deadline:
			return cond()
		}
	}
}
