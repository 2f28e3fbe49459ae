package rt

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// capUserRdpmc is the cap_user_rdpmc bit of perf_event_mmap_page's
// capabilities (include/uapi/linux/perf_event.h: bit 0 deprecated, bit 1
// cap_bit0_is_deprecated, bit 2 cap_user_rdpmc).
const capUserRdpmc = 1 << 2

// maxSeqRetries bounds the seqlock loop of one read. The kernel rewrites
// the page only when the counter is scheduled in or out, or on an ioctl:
// one retry is rare, two in a row are rarer still; 64 in a row means the
// page is broken, and the read gives up (counted in pmcReader.torn).
const maxSeqRetries = 64

// pmcReader reads one perf event's count from user space: the seqlock
// protocol of perf_event_mmap_page (include/uapi/linux/perf_event.h) around
// one rdpmc. Only the thread the event counts may read it.
type pmcReader struct {
	pg *unix.PerfEventMmapPage
	// fake, when set, stands in for the RDPMC instruction so tests can
	// drive the protocol on synthetic pages (it may move pg.Lock to play
	// the kernel). nil in every reader rtload builds: read then calls the
	// rdpmc assembly stub directly.
	fake func(ecx uint32) uint64
	// notLive counts reads that found the counter off the PMU (index 0 or
	// cap_user_rdpmc 0): they return the count the kernel last saved in
	// offset, so a call timed by two of them counts 0.
	notLive uint64
	// torn counts reads that gave up after maxSeqRetries tries.
	torn uint64
}

// read returns the counter's value: offset + the sign-extended rdpmc of
// hardware counter index-1, taken in one seqlock generation of the page
// (lock unchanged and even across the reads). The value is a raw 64-bit
// count: differences of two reads are exact modulo 2^64, also across a
// wrap of the narrower hardware counter (pmc_width bits). No allocation,
// no system call, no preemption point.
//
//go:nosplit
func (r *pmcReader) read() uint64 {
	pg := r.pg
	var count uint64
	for range maxSeqRetries {
		seq := atomic.LoadUint32(&pg.Lock)
		idx := atomic.LoadUint32(&pg.Index)
		count = uint64(atomic.LoadInt64(&pg.Offset))
		live := idx != 0 && atomic.LoadUint64(&pg.Capabilities)&capUserRdpmc != 0
		if live {
			var raw uint64
			if r.fake != nil {
				raw = r.fake(idx - 1)
			} else {
				raw = rdpmc(idx - 1)
			}
			// Sign-extend the pmc_width-bit value: the kernel programs
			// counters with negative starts, and offset accounts for it.
			// Width 64 (or a bogus 0, refused at open) shifts by 0.
			shift := (64 - uint(pg.Pmc_width)) & 63
			count += uint64(int64(raw<<shift) >> shift)
		}
		if seq&1 == 0 && atomic.LoadUint32(&pg.Lock) == seq {
			if !live {
				r.notLive++
			}
			return count
		}
	}
	r.torn++
	return count
}

// usable says whether rdpmc can read the page now, from the calling
// thread (the one the event counts): nil, or ErrNotSupported with the
// page's fields and what to change.
func (r *pmcReader) usable(ev PerfEvent) error {
	pg := r.pg
	return rdpmcRefusal(ev, atomic.LoadUint64(&pg.Capabilities), atomic.LoadUint32(&pg.Index), pg.Pmc_width, rdpmcSetting)
}

// rdpmcRefusal explains why a counter whose user page shows caps, index
// and width cannot be read with rdpmc, or returns nil when it can.
// setting describes /sys/bus/event_source/devices/cpu/rdpmc (called only
// when needed).
func rdpmcRefusal(ev PerfEvent, caps uint64, index uint32, width uint16, setting func() string) error {
	switch {
	case caps&capUserRdpmc == 0 && ev.Type == unix.PERF_TYPE_SOFTWARE:
		return fmt.Errorf("%s: %w: not usable with rdpmc: its user page has cap_user_rdpmc 0, index %d (a software event has no hardware counter to read)",
			ev.Name, ErrNotSupported, index)
	case caps&capUserRdpmc == 0:
		return fmt.Errorf("%s: %w: not usable with rdpmc: its user page has cap_user_rdpmc 0 (user-space rdpmc is off: %s; write 1 to it (rdpmc while a perf event is mapped) or 2; rtload refuses rather than pay a read(2) per call)",
			ev.Name, ErrNotSupported, setting())
	case index == 0:
		return fmt.Errorf("%s: %w: not usable with rdpmc: its user page has index 0 while the thread runs (the counter is not on the PMU: its counters are taken by other perf events or the NMI watchdog (sysctl kernel.nmi_watchdog=0 frees one), or the pinned event could not be scheduled)",
			ev.Name, ErrNotSupported)
	case width == 0 || width > 64:
		return fmt.Errorf("%s: %w: not usable with rdpmc: its user page has pmc_width %d (want 1–64)", ev.Name, ErrNotSupported, width)
	}
	return nil
}
