package profile

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Sample-type bits of perf_event_attr.sample_type (linux/perf_event.h,
// enum perf_event_sample_format). They are kernel ABI; profile/sampler's
// tests check them against golang.org/x/sys/unix.
const (
	SampleIP         = 1 << 0
	SampleTID        = 1 << 1
	SampleTime       = 1 << 2
	SampleAddr       = 1 << 3
	SampleCallchain  = 1 << 5
	SampleID         = 1 << 6
	SampleCPU        = 1 << 7
	SamplePeriod     = 1 << 8
	SampleStreamID   = 1 << 9
	SampleIdentifier = 1 << 16
)

// supportedSampleType is every bit Decode can lay out; others (READ, RAW,
// BRANCH_STACK, REGS, …) have variable or attr-dependent sizes.
const supportedSampleType = SampleIP | SampleTID | SampleTime | SampleAddr | SampleCallchain |
	SampleID | SampleCPU | SamplePeriod | SampleStreamID | SampleIdentifier

// Record types of perf_event_header.type (enum perf_event_type).
const (
	RecordLost       = 2
	RecordThrottle   = 5
	RecordUnthrottle = 6
	RecordSample     = 9
)

// Callchain context markers (enum perf_callchain_context): an entry at or
// above ContextMax is a marker saying the entries after it are kernel,
// user, … addresses, not an address itself.
const (
	ContextHV     = ^uint64(32) + 1   // -32
	ContextKernel = ^uint64(128) + 1  // -128
	ContextUser   = ^uint64(512) + 1  // -512
	ContextMax    = ^uint64(4095) + 1 // -4095
)

// Sample is one PERF_RECORD_SAMPLE. Fields the sample type did not ask
// for are zero.
type Sample struct {
	IP       uint64 // instruction pointer at the sample
	PID, TID uint32 // process and thread id
	Time     uint64 // perf clock, ns (CLOCK_MONOTONIC unless attr.use_clockid says otherwise)
	CPU      uint32
	Period   uint64 // event units since the previous sample: ns for cpu-clock
	Misc     uint16 // perf_event_header.misc: the cpumode is Misc&7 (1 kernel, 2 user)
	// Callchain is the raw chain, innermost first, with context markers
	// (ContextKernel, ContextUser) in it. It aliases the Batch's storage:
	// valid until the Batch is Reset.
	Callchain []uint64
}

// Batch is what Decode read from a ring buffer: the samples, and counts of
// the records that say samples are missing.
type Batch struct {
	Samples []Sample
	// Lost is the number of samples the kernel dropped because the ring
	// was full (the sum of PERF_RECORD_LOST's lost field), LostRecords the
	// number of such records.
	Lost, LostRecords uint64
	// Throttles and Unthrottles count PERF_RECORD_THROTTLE/UNTHROTTLE: the
	// kernel stopped sampling for a while because samples cost more than
	// kernel.perf_cpu_time_max_percent.
	Throttles, Unthrottles uint64
	// Other counts records of other types (skipped).
	Other uint64

	ips     []uint64 // storage the Callchain slices point into
	scratch []byte   // a record that wraps around the ring end, made contiguous
}

// Reset empties b, keeping its storage; the previous Samples' Callchains
// are overwritten by the next Decode.
func (b *Batch) Reset() {
	b.Samples = b.Samples[:0]
	b.ips = b.ips[:0]
	b.Lost, b.LostRecords, b.Throttles, b.Unthrottles, b.Other = 0, 0, 0, 0, 0
}

// Decode parses the records of a perf mmap ring buffer's data area
// between positions tail and head (perf_event_mmap_page's data_tail and
// data_head: byte counts that only grow; the offset in ring is
// position mod len(ring)) and appends them to into. ring's length must be a
// power of two; a record may wrap around its end. sampleType is the
// attr.sample_type the event was opened with, and must be a subset of the
// bits Decode lays out (IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD,
// CALLCHAIN, IDENTIFIER). Decode is a pure function of its arguments.
//
// It returns the position up to which records were consumed: head, or,
// on a malformed record (a size below 8 or past head, a sample shorter
// than its layout), that record's position with an error naming it. The
// caller then sets data_tail to head to resynchronise, losing the rest.
func Decode(ring []byte, head, tail, sampleType uint64, into *Batch) (uint64, error) {
	n := uint64(len(ring))
	if n == 0 || bits.OnesCount64(n) != 1 {
		return tail, fmt.Errorf("perf ring: data size %d is not a power of two", n)
	}
	if sampleType&^supportedSampleType != 0 {
		return tail, fmt.Errorf("perf ring: sample_type %#x has bits %#x Decode does not lay out", sampleType, sampleType&^supportedSampleType)
	}
	if head < tail || head-tail > n {
		return tail, fmt.Errorf("perf ring: head %d, tail %d: more than the ring's %d bytes", head, tail, n)
	}
	pos := tail
	for pos < head {
		var hdr [8]byte
		copyWrapped(hdr[:], ring, pos)
		typ := binary.NativeEndian.Uint32(hdr[0:])
		misc := binary.NativeEndian.Uint16(hdr[4:])
		size := uint64(binary.NativeEndian.Uint16(hdr[6:]))
		if size < 8 || pos+size > head {
			return pos, fmt.Errorf("perf ring: record at %d (type %d) has size %d, %d bytes left", pos, typ, size, head-pos)
		}
		rec := into.contiguous(ring, pos, size)[8:]
		switch typ {
		case RecordSample:
			if err := into.addSample(rec, misc, sampleType); err != nil {
				return pos, fmt.Errorf("perf ring: sample at %d: %w", pos, err)
			}
		case RecordLost: // u64 id, u64 lost, then sample_id
			if len(rec) < 16 {
				return pos, fmt.Errorf("perf ring: lost record at %d has %d bytes", pos, len(rec))
			}
			into.LostRecords++
			into.Lost += binary.NativeEndian.Uint64(rec[8:])
		case RecordThrottle:
			into.Throttles++
		case RecordUnthrottle:
			into.Unthrottles++
		default:
			into.Other++
		}
		pos += size
	}
	return pos, nil
}

// contiguous returns the size bytes at position pos of ring, copied into
// the batch's scratch buffer when they wrap around the end.
func (b *Batch) contiguous(ring []byte, pos, size uint64) []byte {
	off := pos & uint64(len(ring)-1)
	if off+size <= uint64(len(ring)) {
		return ring[off : off+size]
	}
	if uint64(cap(b.scratch)) < size {
		b.scratch = make([]byte, size)
	}
	s := b.scratch[:size]
	copyWrapped(s, ring, pos)
	return s
}

// copyWrapped fills dst from ring starting at position pos, wrapping.
func copyWrapped(dst, ring []byte, pos uint64) {
	off := int(pos & uint64(len(ring)-1))
	k := copy(dst, ring[off:])
	copy(dst[k:], ring)
}

// addSample lays out one PERF_RECORD_SAMPLE body in kernel order
// (perf_output_sample): IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID,
// CPU, PERIOD, CALLCHAIN.
func (b *Batch) addSample(rec []byte, misc uint16, st uint64) error {
	r := reader{b: rec}
	s := Sample{Misc: misc}
	if st&SampleIdentifier != 0 {
		r.u64()
	}
	if st&SampleIP != 0 {
		s.IP = r.u64()
	}
	if st&SampleTID != 0 {
		s.PID, s.TID = r.u32(), r.u32()
	}
	if st&SampleTime != 0 {
		s.Time = r.u64()
	}
	if st&SampleAddr != 0 {
		r.u64()
	}
	if st&SampleID != 0 {
		r.u64()
	}
	if st&SampleStreamID != 0 {
		r.u64()
	}
	if st&SampleCPU != 0 {
		s.CPU = r.u32()
		r.u32() // reserved
	}
	if st&SamplePeriod != 0 {
		s.Period = r.u64()
	}
	if st&SampleCallchain != 0 {
		nr := r.u64()
		if r.short {
			return fmt.Errorf("%d bytes, shorter than sample_type %#x lays out", len(rec), st)
		}
		if nr > uint64(len(r.b)-r.off)/8 {
			return fmt.Errorf("callchain of %d entries in a %d-byte record", nr, len(rec))
		}
		start := len(b.ips)
		for range nr {
			b.ips = append(b.ips, r.u64())
		}
		s.Callchain = b.ips[start:len(b.ips):len(b.ips)]
	}
	if r.short {
		return fmt.Errorf("%d bytes, shorter than sample_type %#x lays out", len(rec), st)
	}
	b.Samples = append(b.Samples, s)
	return nil
}

// reader reads host-endian fields (the ring is in the CPU's byte order); past the end it returns 0 and sets short.
type reader struct {
	b     []byte
	off   int
	short bool
}

func (r *reader) u64() uint64 {
	if r.off+8 > len(r.b) {
		r.short = true
		return 0
	}
	v := binary.NativeEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) u32() uint32 {
	if r.off+4 > len(r.b) {
		r.short = true
		return 0
	}
	v := binary.NativeEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}
