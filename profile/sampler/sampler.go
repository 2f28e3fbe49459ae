package sampler

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/rt"
)

// Event is what a Sampler samples on.
type Event string

const (
	// EventAuto samples cycles where a PMU counts them, else cpu-clock;
	// the fallback and its reason are in Notes.
	EventAuto Event = ""
	// EventCPUClock is PERF_COUNT_SW_CPU_CLOCK: a sample every Period ns
	// of the thread's CPU time (an hrtimer), with no PMU needed.
	EventCPUClock Event = "cpu-clock"
	// EventCycles is PERF_COUNT_HW_CPU_CYCLES: needs a PMU (ENOENT in most
	// VMs).
	EventCycles Event = "cycles"
)

// Defaults of Config's zero fields.
const (
	// DefaultPeriodNs is the cpu-clock period: one sample per 100 µs of
	// the thread's CPU time, 10 kHz while it runs.
	DefaultPeriodNs = 100_000
	// DefaultFreqHz is the cycles sampling frequency the kernel adapts
	// the period to.
	DefaultFreqHz = 10_000
	// DefaultRingPages is the ring buffer's data size in pages (512 KiB
	// with 4 KiB pages): about 1.5 s of 10 kHz samples with 40-frame chains.
	DefaultRingPages = 128
)

// sampleType is what every sample carries.
const sampleType = profile.SampleIP | profile.SampleTID | profile.SampleTime |
	profile.SampleCPU | profile.SamplePeriod | profile.SampleCallchain

// Config says which thread to sample and how. The zero value of each
// field other than TID is its default.
type Config struct {
	// TID is the thread to sample (gettid(2) of the reader thread); the
	// sampler follows that thread only, on any CPU.
	TID int
	// Event is EventAuto, EventCPUClock or EventCycles.
	Event Event
	// Period is the sampling period in event units: ns of CPU time for
	// cpu-clock (default DefaultPeriodNs), cycles for cycles. 0 with
	// cycles samples at FreqHz instead.
	Period uint64
	// FreqHz is the cycles sampling frequency when Period is 0 (default
	// DefaultFreqHz). Ignored for cpu-clock, whose period is exact.
	FreqHz uint64
	// RingPages is the ring buffer's data size in pages, a power of two
	// (default DefaultRingPages). The caller must Drain it before it
	// fills, or samples are lost (and counted).
	RingPages int
	// From and Until bound the samples kept to those taken in [From,
	// Until), CLOCK_MONOTONIC ns (rt.Monotonic; the samples' TIME): a
	// trial's measured window. The others are counted in Stats.Outside.
	// Zero is no bound.
	From, Until int64
}

// Sampler samples one thread's call chains, kernel and user, into a
// perf mmap ring buffer, which Drain empties into a profile.Builder. It
// runs on the caller's goroutine, never on the sampled thread: the
// sampled thread pays only the kernel's sampling interrupt.
//
// Drain, Stats, Profile and Close must not be called concurrently.
type Sampler struct {
	fd     int
	mmap   []byte
	meta   *unix.PerfEventMmapPage
	data   []byte
	event  Event
	period uint64
	freq   uint64
	notes  []string
	batch  profile.Batch
	build  profile.Builder
	errs   uint64 // malformed records skipped by resynchronising
}

// Open starts sampling cfg.TID, enabled at once. Errors: an invalid
// Config, and perf_event_open(2) or mmap(2) failures wrapped as
// *rt.PerfError (errors.Is rt.ErrNoPrivilege when
// kernel.perf_event_paranoid forbids it without CAP_PERFMON,
// rt.ErrNotSupported when the event does not exist). Nothing stays open
// on error.
func Open(cfg Config) (s *Sampler, err error) {
	if cfg.TID <= 0 {
		return nil, fmt.Errorf("perf sampler: thread id %d: must be > 0", cfg.TID)
	}
	pages := cfg.RingPages
	if pages == 0 {
		pages = DefaultRingPages
	}
	if pages < 1 || bits.OnesCount(uint(pages)) != 1 || pages > 1<<16 {
		return nil, fmt.Errorf("perf sampler: ring of %d pages: must be a power of two in 1–65536", pages)
	}
	s = &Sampler{fd: -1}
	s.build.Window(uint64(max(cfg.From, 0)), uint64(max(cfg.Until, 0)))
	switch cfg.Event {
	case EventAuto:
		if err = s.open(cfg, EventCycles); err == nil {
			break
		}
		s.notes = append(s.notes, fmt.Sprintf("cycles: %v; sampled cpu-clock instead", errors.Unwrap(err)))
		err = s.open(cfg, EventCPUClock)
	case EventCPUClock, EventCycles:
		err = s.open(cfg, cfg.Event)
	default:
		return nil, fmt.Errorf("perf sampler: event %q: %w (allowed: cpu-clock, cycles, or empty for auto)", cfg.Event, rt.ErrNotSupported)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	page := os.Getpagesize()
	s.mmap, err = unix.Mmap(s.fd, 0, (1+pages)*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("perf sampler: %w (the ring counts against kernel.perf_event_mlock_kb unless CAP_IPC_LOCK)", os.NewSyscallError("mmap perf ring", err))
	}
	s.meta = (*unix.PerfEventMmapPage)(unsafe.Pointer(&s.mmap[0]))
	off, size := uint64(page), uint64(pages*page)
	if s.meta.Data_offset != 0 { // set since Linux 4.1
		off, size = s.meta.Data_offset, s.meta.Data_size
	}
	s.data = s.mmap[off : off+size]
	if err := unix.IoctlSetInt(s.fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
		return nil, os.NewSyscallError("ioctl PERF_EVENT_IOC_ENABLE", err)
	}
	return s, nil
}

// open opens ev on cfg.TID into s.fd (disabled until the ring is mapped).
func (s *Sampler) open(cfg Config, ev Event) error {
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Sample_type: sampleType, Clockid: unix.CLOCK_MONOTONIC}
	attr.Size = uint32(unsafe.Sizeof(attr))
	attr.Bits = unix.PerfBitDisabled | unix.PerfBitExcludeHv | unix.PerfBitUseClockID
	period, freq := cfg.Period, uint64(0)
	if ev == EventCycles {
		attr.Type, attr.Config = unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES
		if period == 0 {
			freq = cfg.FreqHz
			if freq == 0 {
				freq = DefaultFreqHz
			}
			attr.Bits |= unix.PerfBitFreq
		}
	} else if period == 0 {
		period = DefaultPeriodNs
	}
	attr.Sample = period
	if freq != 0 {
		attr.Sample = freq
	}
	fd, err := unix.PerfEventOpen(&attr, cfg.TID, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EINVAL
		}
		return fmt.Errorf("perf_event_open %s sampling on thread %d: %w", ev, cfg.TID,
			&rt.PerfError{Event: string(ev), Errno: errno, Paranoid: rt.PerfParanoid()})
	}
	s.fd, s.event, s.period, s.freq = fd, ev, period, freq
	return nil
}

// Event is the event actually sampled (EventCPUClock or EventCycles).
func (s *Sampler) Event() Event { return s.event }

// Notes say what Open fell back to and why; Drain adds one if it had to
// skip malformed records.
func (s *Sampler) Notes() []string { return s.notes }

// Drain moves every record the kernel has written since the last Drain
// into the sampler's aggregate and frees that part of the ring. Call it
// often enough that the ring never fills (every 100 ms is ample for the
// defaults). It reads data_head with acquire and writes data_tail with
// release semantics, as perf_event_open(2) asks. A malformed record (a
// kernel or sampler bug) drops the rest of what is pending, counted in
// Stats; Drain itself has no error.
func (s *Sampler) Drain() {
	if s.meta == nil {
		return
	}
	head := atomic.LoadUint64(&s.meta.Data_head)
	tail := s.meta.Data_tail
	pos, err := profile.Decode(s.data, head, tail, sampleType, &s.batch)
	s.build.Add(&s.batch)
	s.batch.Reset()
	if err != nil {
		s.errs++
		pos = head
	}
	atomic.StoreUint64(&s.meta.Data_tail, pos)
}

// Stats are the running totals of a Sampler.
type Stats struct {
	Samples uint64 // samples drained so far
	// Malformed counts Drains that met a malformed record and dropped
	// what was pending.
	Malformed uint64
	// Outside counts samples taken outside [Config.From, Config.Until),
	// dropped.
	Outside uint64
}

// Stats returns the totals drained so far.
func (s *Sampler) Stats() Stats {
	return Stats{Samples: s.build.Samples(), Malformed: s.errs, Outside: s.build.Outside()}
}

// Stop disables sampling (PERF_EVENT_IOC_DISABLE) and drains what is
// left; the samples stay for Profile. It is a no-op after Close.
func (s *Sampler) Stop() error {
	if s.fd < 0 {
		return nil
	}
	if err := unix.IoctlSetInt(s.fd, unix.PERF_EVENT_IOC_DISABLE, 0); err != nil {
		return os.NewSyscallError("ioctl PERF_EVENT_IOC_DISABLE", err)
	}
	s.Drain()
	return nil
}

// Profile symbolises what was drained and splits it by phase: the
// profile of this thread with Event, Unit, Period, FreqHz and Notes
// set. Call Stop first to include the last samples.
func (s *Sampler) Profile(syms profile.Symbols, rule profile.PhaseRule) *profile.Profile {
	p := s.build.Build(syms, rule)
	p.Event, p.Period, p.FreqHz = string(s.event), s.period, s.freq
	p.Unit = "nanoseconds"
	if s.event == EventCycles {
		p.Unit = "cycles"
	}
	p.Notes = append(p.Notes, s.notes...)
	if s.errs > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d drains met a malformed ring record and dropped what was pending", s.errs))
	}
	return p
}

// Close stops sampling and releases the ring and the perf fd; it is
// idempotent. Samples already drained stay available to Profile.
func (s *Sampler) Close() error {
	var errs []error
	if s.mmap != nil {
		if err := unix.Munmap(s.mmap); err != nil {
			errs = append(errs, os.NewSyscallError("munmap perf ring", err))
		}
		s.mmap, s.meta, s.data = nil, nil, nil
	}
	if s.fd >= 0 {
		if err := unix.Close(s.fd); err != nil {
			errs = append(errs, os.NewSyscallError("close perf fd", err))
		}
		s.fd = -1
	}
	return errors.Join(errs...)
}
