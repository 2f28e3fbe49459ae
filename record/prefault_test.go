package record

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of the n bytes at p that mincore(2) reports
// resident, and the pages spanned.
func resident(t *testing.T, p unsafe.Pointer, n uintptr) (in, pages int) {
	t.Helper()
	ps := uintptr(os.Getpagesize())
	start := uintptr(p) &^ (ps - 1)
	end := (uintptr(p) + n + ps - 1) &^ (ps - 1)
	vec := make([]byte, (end-start)/ps)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// TestPrefault checks that the constructors leave every page of an HDR's
// counts, a Linear's counts and a Ring's buffer resident (mincore(2)), so
// that the real-time thread never takes a first-touch page fault on them
// under mlockall(MCL_ONFAULT). A fresh allocation of the same size without
// prefault is measured beside them (logged: whether the Go heap hands out
// untouched pages here decides whether this test can tell the two apart).
func TestPrefault(t *testing.T) {
	h := NewHDR(1 << 62) // ~430 KiB of counts
	l := NewLinear(1, 0, 1<<19)
	r := NewRing[Wakeup](1 << 16) // 3.5 MiB
	for _, c := range []struct {
		name string
		p    unsafe.Pointer
		n    uintptr
	}{
		{"HDR counts", unsafe.Pointer(&h.counts[0]), uintptr(len(h.counts)) * 8},
		{"Linear counts", unsafe.Pointer(&l.counts[0]), uintptr(len(l.counts)) * 8},
		{"Ring buffer", unsafe.Pointer(&r.buf[0]), uintptr(len(r.buf)) * unsafe.Sizeof(r.buf[0])},
	} {
		if in, pages := resident(t, c.p, c.n); in != pages {
			t.Errorf("%s: %d of %d pages resident after construction; want all", c.name, in, pages)
		}
	}
	raw := make([]Wakeup, 1<<16)
	in, pages := resident(t, unsafe.Pointer(&raw[0]), uintptr(len(raw))*unsafe.Sizeof(raw[0]))
	t.Logf("without prefault, a fresh %d-page allocation had %d pages resident", pages, in)
	prefault(raw)
	if in, pages := resident(t, unsafe.Pointer(&raw[0]), uintptr(len(raw))*unsafe.Sizeof(raw[0])); in != pages {
		t.Errorf("after prefault: %d of %d pages resident; want all", in, pages)
	}
}

// TestPrefaultEdges covers empty slices, elements larger than a page and
// a slice ending inside a page.
func TestPrefaultEdges(t *testing.T) {
	prefault([]uint64(nil))
	big := make([][pageBytes + 8]byte, 3)
	big[2][0] = 1
	prefault(big)
	if big[2][0] != 0 {
		t.Error("prefault skipped an element larger than a page")
	}
	odd := make([]uint64, 513)
	odd[512] = 7
	prefault(odd)
	if odd[512] != 0 {
		t.Error("prefault skipped the last element")
	}
	if a := testing.AllocsPerRun(10, func() { prefault(odd) }); a != 0 {
		t.Errorf("prefault allocs %v, want 0", a)
	}
}
