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

// ForceFenced makes a Ticker that stamps its wakes read the TSC with
// LFENCE;RDTSC;LFENCE (sleepWakeFenced), as on a CPU whose CPUID offers
// no RDTSCP.
func (t *Ticker) ForceFenced() { t.fenced = true }

// Fenced reports whether the Ticker reads the TSC fenced.
func (t *Ticker) Fenced() bool { return t.fenced }

// TSCFacts is what decides the TSC clock (tscFacts), for table tests of
// TSCSupport.
type TSCFacts struct {
	Arch, RDTSCP, Invariant bool
	Flags                   []string
	FlagsErr                error
}

// TSCSupport is tscFacts.support on f.
func TSCSupport(f TSCFacts) (fenced bool, err error) {
	tf := tscFacts{arch: f.Arch, rdtscp: f.RDTSCP, invariant: f.Invariant, flagsErr: f.FlagsErr}
	if f.FlagsErr == nil {
		tf.flags = map[string]bool{}
		for _, fl := range f.Flags {
			tf.flags[fl] = true
		}
	}
	return tf.support()
}
