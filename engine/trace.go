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
		r.loop.BreakTrace = true
		r.loop.MarkerFD, r.loop.TracingOnFD = int(m.Fd()), int(on.Fd())
		r.loop.Marker = []byte(fmt.Sprintf("rtload: reader %s (%d): wakeup latency above %v: tracing stopped (breaktrace)\n", r.spec.Name, i, r.spec.Threshold))
		return nil
	}
	return fmt.Errorf("no ftrace (tracefs not mounted?): %v", errs)
}
