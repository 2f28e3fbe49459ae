package rt

// Advance exposes the Ticker's arithmetic to tests: what Wait does when
// entered at now, without the sleep.
func (t *Ticker) Advance(now int64) (k uint64, deadline int64, missed uint64) { return t.advance(now) }

// Pass runs one watcher pass now.
func (h *Housekeeping) Pass() { h.pass() }
