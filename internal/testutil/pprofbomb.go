package testutil

import "bytes"

// The wire format of a pprof profile, written by hand: pprof's writer
// cannot make the shapes below (it packs what it holds, and checks it).
func pbVarint(b []byte, u uint64) []byte {
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func pbBytes(b []byte, field int, v []byte) []byte {
	b = pbVarint(b, uint64(field)<<3|2)
	b = pbVarint(b, uint64(len(v)))
	return append(b, v...)
}

func pbUint(b []byte, field int, u uint64) []byte {
	return pbVarint(pbVarint(b, uint64(field)<<3), u)
}

// PprofFrameBomb is issue 34's generator: one location with lines entries
// line{function_id:1}, and one sample with refs packed references to it
// (lines × refs frames once read back), uncompressed.
func PprofFrameBomb(lines, refs int) []byte {
	var p []byte
	p = pbBytes(p, 1, pbUint(pbUint(nil, 1, 1), 2, 2)) // sample_type samples/count
	sample := pbBytes(nil, 1, bytes.Repeat([]byte{1}, refs))
	sample = pbUint(sample, 2, 1)
	p = pbBytes(p, 2, sample)
	loc := pbUint(nil, 1, 1)
	line := pbUint(nil, 1, 1)
	for range lines {
		loc = pbBytes(loc, 4, line)
	}
	p = pbBytes(p, 4, loc)
	p = pbBytes(p, 5, pbUint(pbUint(nil, 1, 1), 2, 3)) // function 1, named "f"
	for _, s := range []string{"", "samples", "count", "f"} {
		p = pbBytes(p, 6, []byte(s))
	}
	return p
}
