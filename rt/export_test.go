package rt

// Advance exposes the Ticker's arithmetic to tests: what Wait does when
// entered at now, without the sleep.
func (t *Ticker) Advance(now int64) (k uint64, deadline int64, missed uint64) { return t.advance(now) }

// Pass runs one watcher pass now.
func (h *Housekeeping) Pass() { h.pass() }

// WakeLatency exposes the wake-stamp arithmetic of Ticker.Wait.
func WakeLatency(now, deadline int64, tscNow, tscWake uint64, nsPerTick float64) int64 {
	return wakeLatency(now, deadline, tscNow, tscWake, nsPerTick)
}

// MaxWakeGap is the largest TSC interval WakeLatency converts.
const MaxWakeGap = maxWakeGap
