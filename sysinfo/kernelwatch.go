package sysinfo

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultKernelWatchInterval is how often a KernelWatch reads the kernel
// log and current_clocksource when KernelWatchConfig.Interval is 0.
const DefaultKernelWatchInterval = 100 * time.Millisecond

// kmsgPath is the kernel log device (Documentation/ABI/testing/dev-kmsg).
const kmsgPath = "/dev/kmsg"

// maxKmsgPerPoll bounds the records one poll reads (a flooded log is
// read on over several polls).
const maxKmsgPerPoll = 10000

// KernelWatchConfig configures WatchKernel. The zero value watches from
// the moment WatchKernel is called, every DefaultKernelWatchInterval.
type KernelWatchConfig struct {
	// Start is the CLOCK_MONOTONIC time (ns) event times count from: the
	// trial start. 0 means when WatchKernel is called.
	Start int64
	// Interval between polls; 0 means DefaultKernelWatchInterval.
	Interval time.Duration
}

// KernelReport is what a KernelWatch saw, for summary.json.
type KernelReport struct {
	// ClocksourceStart and ClocksourceEnd are current_clocksource when the
	// watch started and stopped; Available is available_clocksource.
	ClocksourceStart string   `json:"clocksource_start"`
	ClocksourceEnd   string   `json:"clocksource_end"`
	Available        []string `json:"available_clocksources"`
	// RTThrottlingStart and RTThrottlingEnd are sched_rt_runtime_us and
	// sched_rt_period_us at start and stop.
	RTThrottlingStart RTThrottling `json:"rt_throttling_start"`
	RTThrottlingEnd   RTThrottling `json:"rt_throttling_end"`
	// Events, in the order seen (at most 1000).
	Events []KernelEvent `json:"events,omitempty"`
	// KmsgWatched is false when /dev/kmsg could not be read: then only
	// clocksource changes lasting a poll interval are seen (Notes say why).
	KmsgWatched bool `json:"kmsg_watched"`
	// KmsgRecords is how many log records were read; KmsgLost how many
	// times records were overwritten before they could be read (EPIPE).
	KmsgRecords int      `json:"kmsg_records"`
	KmsgLost    int      `json:"kmsg_lost,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Invalid is InvalidReason of the events, plus a changed RT throttling
// setting: "" when the trial ran as asked.
func (r KernelReport) Invalid() string {
	reason := InvalidReason(r.Events)
	if r.RTThrottlingEnd != r.RTThrottlingStart && r.RTThrottlingEnd != (RTThrottling{}) {
		changed := fmt.Sprintf("RT throttling changed (%s → %s)", r.RTThrottlingStart, r.RTThrottlingEnd)
		if reason == "" {
			return "invalid: " + changed
		}
		reason += "; " + changed
	}
	return reason
}

// KernelWatch watches, for the length of a trial, for kernel events that
// change what was measured: clocksource switches, an unstable TSC or
// clocksource, RT throttling. A goroutine (never a real-time thread)
// reads /dev/kmsg (opened O_RDONLY|O_NONBLOCK and seeked to its end, so
// only records logged after WatchKernel count) and current_clocksource
// every Interval. Safe for concurrent use.
type KernelWatch struct {
	interval time.Duration
	fd       int // /dev/kmsg, -1 when not watched
	buf      []byte

	mu    sync.Mutex
	t     kernelTracker
	rep   KernelReport
	polls int // polls done (under mu)

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// WatchKernel starts a watch. It never fails: what it cannot read (no
// /dev/kmsg, no permission: reading it needs CAP_SYSLOG when
// kernel.dmesg_restrict is 1) is said in the report's Notes, and the rest
// is still watched. Call Stop at the end of the trial.
func WatchKernel(c KernelWatchConfig) *KernelWatch {
	w := &KernelWatch{interval: c.Interval, fd: -1, buf: make([]byte, 8192),
		stop: make(chan struct{}), done: make(chan struct{})}
	if w.interval <= 0 {
		w.interval = DefaultKernelWatchInterval
	}
	w.t.start = c.Start
	if w.t.start == 0 {
		w.t.start = monotonicNs()
	}
	if cs, err := ReadClocksource(); err != nil {
		w.note("clocksource not read: %v", err)
	} else {
		w.t.cur, w.rep.ClocksourceStart, w.rep.Available = cs.Current, cs.Current, cs.Available
	}
	if r, err := ReadRTThrottling(); err != nil {
		w.note("RT throttling not read: %v", err)
	} else {
		w.rep.RTThrottlingStart = r
	}
	if err := w.openKmsg(); err != nil {
		w.note("kernel log not watched (only clocksource changes lasting %v are seen): %v", w.interval, err)
	}
	go w.run()
	return w
}

func (w *KernelWatch) openKmsg() error {
	fd, err := unix.Open(kmsgPath, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("open %s: %w (needs CAP_SYSLOG when kernel.dmesg_restrict is 1)", kmsgPath, err)
		}
		return fmt.Errorf("open %s: %w", kmsgPath, err)
	}
	w.t.floor = monotonicNs()
	if _, err := unix.Seek(fd, 0, unix.SEEK_END); err != nil {
		unix.Close(fd)
		return fmt.Errorf("lseek %s SEEK_END: %w", kmsgPath, err)
	}
	w.fd = fd
	w.rep.KmsgWatched = true
	return nil
}

func (w *KernelWatch) note(format string, args ...any) {
	w.rep.Notes = append(w.rep.Notes, fmt.Sprintf(format, args...))
}

func (w *KernelWatch) run() {
	defer close(w.done)
	tk := time.NewTicker(w.interval)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			w.poll()
		case <-w.stop:
			return
		}
	}
}

// poll reads the kernel log records logged since the last poll, then
// current_clocksource (in that order, so that a switch is timed by its
// log record when there is one).
func (w *KernelWatch) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	for i := 0; w.fd >= 0 && i < maxKmsgPerPoll; i++ {
		before := monotonicNs()
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) {
			w.t.floor = before // anything read later was logged after this
			break
		}
		if errors.Is(err, unix.EPIPE) { // overwritten before read; the next read goes on
			w.t.lost++
			continue
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			w.note("kernel log read stopped: read %s: %v", kmsgPath, err)
			unix.Close(w.fd)
			w.fd = -1
			break
		}
		if r, err := parseKmsg(w.buf[:n]); err == nil {
			w.t.kmsg(r, monotonicNs())
		}
	}
	if cur, err := readCurrentClocksource(); err == nil {
		w.t.sysfs(cur, monotonicNs())
	}
}

// Report returns what the watch saw so far (events until the last poll).
func (w *KernelWatch) Report() KernelReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.rep
	r.Events = slices.Clone(w.t.events)
	r.Notes = slices.Clone(r.Notes)
	r.Available = slices.Clone(r.Available)
	r.KmsgRecords, r.KmsgLost = w.t.records, w.t.lost
	r.ClocksourceEnd = w.t.cur
	return r
}

// Stop ends the watch after one last poll, closes /dev/kmsg and returns the
// report; ClocksourceEnd and RTThrottlingEnd are read now. Later calls
// return the same report.
func (w *KernelWatch) Stop() KernelReport {
	w.stopOnce.Do(func() {
		close(w.stop)
		<-w.done
		w.poll()
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.fd >= 0 {
			unix.Close(w.fd)
			w.fd = -1
		}
		if r, err := ReadRTThrottling(); err == nil {
			w.rep.RTThrottlingEnd = r
		}
	})
	return w.Report()
}

// monotonicNs is CLOCK_MONOTONIC in ns.
func monotonicNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
