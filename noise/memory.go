package noise

import "golang.org/x/sys/unix"

// memoryWorker is the memory kind: streaming copies between the two
// halves of a private buffer (first → second, then back), in 64 KiB
// chunks, counted in bytes copied. The buffer is allocated at Start but
// first touched by the noise thread, so its pages are local to that
// thread's CPU on a NUMA machine.
type memoryWorker struct {
	buf     []byte
	half    int
	pos     int  // offset inside the half being copied
	reverse bool // copying second → first
}

// memoryChunksPerStep bounds one step to 1 MiB of copying (tens to
// hundreds of µs) between stop checks.
const memoryChunksPerStep = 16

func newMemoryWorker(size int) *memoryWorker {
	half := size / 2
	return &memoryWorker{buf: make([]byte, 2*half), half: half}
}

func (*memoryWorker) phase(int64) {}

func (m *memoryWorker) step(s *slot, _ int64) unix.Errno {
	var n int
	for range memoryChunksPerStep {
		c := min(memoryChunk, m.half-m.pos)
		a, b := m.buf[m.pos:m.pos+c], m.buf[m.half+m.pos:m.half+m.pos+c]
		if m.reverse {
			a, b = b, a
		}
		n += copy(b, a)
		m.pos += c
		if m.pos == m.half {
			m.pos, m.reverse = 0, !m.reverse
		}
	}
	s.units.Add(uint64(n))
	s.bytes.Add(uint64(n))
	return 0
}

func (m *memoryWorker) finish(*slot) error {
	m.buf = nil
	return nil
}
