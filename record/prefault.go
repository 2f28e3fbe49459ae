package record

import "unsafe"

// pageBytes is the smallest page size of the platforms rtload runs on
// (4 KiB on x86-64 and arm64; a larger page is touched several times,
// which is harmless).
const pageBytes = 4096

// prefault writes the zero value once into every page s spans, so that
// each page is resident before a real-time thread writes to it. rtload
// locks memory with mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): a page
// the Go heap got fresh from the kernel is only faulted in (and then kept)
// on its first touch, which without this happened on the reader, in the
// measured window: a page fault after 3–6% of its wakeups, 26 of 33 of them
// in HDR.Record, the rest in the wakeup ring's Put (bench/GAPS.md). A
// write, not a read: reading an untouched page maps the shared zero page
// and the first write would still fault. Called by the constructors; it
// allocates nothing.
func prefault[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	step := 1
	if sz := int(unsafe.Sizeof(zero)); sz > 0 && sz < pageBytes {
		step = pageBytes / sz
	}
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
	s[len(s)-1] = zero
}
