package engine

import (
	"fmt"
	"os"
)

// tracefsDirs are where the ftrace files live, newest layout first.
var tracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// openTrace opens trace_marker and tracing_on for breaktrace and gives
// their fds and a preformatted marker to the reader's loop (the real-time
// thread writes them with raw write(2) calls; nothing is formatted there).
func (r *reader) openTrace(i int) error {
	var errs []error
	for _, dir := range tracefsDirs {
		m, err := os.OpenFile(dir+"/trace_marker", os.O_WRONLY, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		on, err := os.OpenFile(dir+"/tracing_on", os.O_WRONLY, 0)
		if err != nil {
			m.Close()
			errs = append(errs, err)
			continue
		}
		r.traceFiles = append(r.traceFiles, m, on)
		r.traceDir = dir
		r.loop.BreakTrace = true
		r.loop.MarkerFD, r.loop.TracingOnFD = int(m.Fd()), int(on.Fd())
		r.loop.Marker = []byte(fmt.Sprintf("rtload: reader %s (%d): wakeup latency above %v: tracing stopped (breaktrace)\n", r.spec.Name, i, r.spec.Threshold))
		return nil
	}
	return fmt.Errorf("no ftrace (tracefs not mounted?): %v", errs)
}

// tracingStopped says, once breaktrace has stopped ftrace, that it did,
// that rtload leaves tracing_on at 0 on purpose (the trace ends at the
// spike, for the user to read, as cyclictest -b does) and how to turn
// tracing back on; "" while tracing was not stopped.
func (r *reader) tracingStopped() string {
	at := r.loop.BrokeAt.Load()
	if at == 0 {
		return ""
	}
	return tracingStoppedNote(r.spec.Name, r.traceDir, at, r.spec.Threshold.String())
}

// tracingStoppedNote is tracingStopped's sentence for reader name, the
// tracefs directory dir and the spike at deadline atNs above threshold.
func tracingStoppedNote(name, dir string, atNs int64, threshold string) string {
	return fmt.Sprintf("reader %s: breaktrace stopped ftrace at the wakeup due at %d ns (latency above %s) and left %s/tracing_on = 0, "+
		"so the trace ends at that spike: read it in %s/trace, then turn tracing back on with: echo 1 > %s/tracing_on",
		name, atNs, threshold, dir, dir, dir)
}

// TracingOff says that ftrace is off (tracing_on reads 0) in the first
// tracefs directory found, as an earlier breaktrace run leaves it on
// purpose, and how to turn it back on; "" when it is on or there is no
// tracefs. rtload never turns tracing on itself: the trace may be the
// one a user is reading.
func TracingOff() string { return tracingOff(tracefsDirs) }

func tracingOff(dirs []string) string {
	for _, dir := range dirs {
		b, err := os.ReadFile(dir + "/tracing_on")
		if err != nil {
			continue
		}
		if len(b) > 0 && b[0] == '0' {
			return fmt.Sprintf("ftrace is off (%s/tracing_on = 0), as a breaktrace run leaves it so that its trace ends at the spike; rtload does not turn it back on: echo 1 > %s/tracing_on", dir, dir)
		}
		return ""
	}
	return ""
}
