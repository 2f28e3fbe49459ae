package profile

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/pprof/profile"
)

// Reading a pprof profile from a results directory is bounded by what it
// builds, not only by its size in bytes: pprof's parser makes a Location
// pointer per location reference, and FromPprof a Frame per line of each
// location referenced, so one location of L lines referenced S times (a
// few bytes each, packed) is L×S frames: 198 gzipped bytes took explain
// past 8 GB (issue 34). So before pprof's parser runs, checkPprof walks
// the protobuf's wire format (holding nothing), counts what parsing and
// FromPprof would make, and refuses the profile past MaxPprofFrames
// frames or MaxPprofMemory bytes, naming the file, the count and the
// limit.

// MaxPprofFrames bounds the frames a profile read back may make (each
// location's lines times its references, one per location without lines
// and per sample without locations): 8 MiB of Frames, and what explain's
// attribution builds from them (about 130 bytes a frame in all, measured
// with two profiles of 1 M frames: 284 MB). rtload's own profiles make a
// few thousand (1,027 and 1,673 in profile/testdata's).
const MaxPprofFrames = 1 << 18

// MaxPprofMemory bounds the memory parsing a profile and converting it
// with FromPprof may take, as checkPprof estimates it from the sizes of
// pprof's and this package's types: far above what rtload's profiles
// take (tens of KiB), far below what a crafted one would.
const MaxPprofMemory = 32 << 20

// ErrPprofLimit is matched by the error of a profile refused past
// MaxPprofFrames or MaxPprofMemory (its text is "refused").
var ErrPprofLimit = errors.New("refused")

// ReadPprof parses an uncompressed pprof profile (data, read from the file
// name, which errors name) into a Profile, as FromPprof: it refuses one
// past MaxPprofFrames or MaxPprofMemory (an error wrapping ErrPprofLimit)
// before pprof's parser builds anything, and one that is not valid
// (pprof's CheckValid: a sample with fewer values than sample types, a
// reference to a location that is not there). data must be inflated
// already (store.ReadProfileFile does so, bounded): pprof's parser
// inflates gzip without bound, so a gzip stream here is refused.
func ReadPprof(data []byte, name string) (*Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		return nil, fmt.Errorf("%s: gzip-compressed: inflate it first (store.ReadProfileFile)", name)
	}
	if err := checkPprof(data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pp, err := profile.ParseUncompressed(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := FromPprof(pp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// pprofCount is what a profile's wire format holds, by kind.
type pprofCount struct {
	samples, refs, values, labels int64
	// labelMaps counts the maps of labels pprof makes: one per kind of
	// label (string, number, number with a unit) a sample has.
	labelMaps                  int64
	locations, lines, maxLines int64
	functions, mappings        int64
	strings, stringBytes       int64
	comments, valueTypes       int64
}

// The bytes each thing costs once parsed by pprof (its decoding, the
// indexes postDecode and CheckValid build) and converted by FromPprof,
// from the sizes of the types that hold it; a slice grown by append
// counts twice, a pointer in a slice twice, an entry in each of the two
// maps by id (postDecode's, CheckValid's) 24 bytes; memory adds a quarter
// for the allocator's size classes. Checked against what parsing and
// FromPprof allocate (TestPprofMemoryEstimate: 1.2–1.4× it, with the
// frames).
var (
	sizeofPtr = int64(reflect.TypeFor[*int]().Size())
	costOf    = struct {
		sample, labelMap, ref, value, label, location, line, function, mapping, str, comment, valueType, frame int64
	}{
		// pprof's Sample, its pointer, its slot in the location buffer,
		// and a Stack.
		sample: int64(reflect.TypeFor[profile.Sample]().Size()) + 3*sizeofPtr + int64(reflect.TypeFor[Stack]().Size()),
		// A small map of one group (8 slots of a string key and a slice).
		labelMap: 48 + 8 + 8*(16+24),
		// Its location index (appended) and its *Location.
		ref:   3 * 8,
		value: 2 * 8,
		// The label index (4 int64s, appended), and its value appended
		// to the map's slice.
		label:     2*4*8 + 2*16,
		location:  int64(reflect.TypeFor[profile.Location]().Size()) + 3*sizeofPtr + 2*24,
		line:      2 * int64(reflect.TypeFor[profile.Line]().Size()),
		function:  int64(reflect.TypeFor[profile.Function]().Size()) + 3*sizeofPtr + 2*24,
		mapping:   int64(reflect.TypeFor[profile.Mapping]().Size()) + 3*sizeofPtr + 2*24,
		str:       2*16 + 16, // its header, appended, and size-class slack
		comment:   2*8 + 2*16,
		valueType: int64(reflect.TypeFor[profile.ValueType]().Size()) + 2*sizeofPtr,
		frame:     int64(reflect.TypeFor[Frame]().Size()),
	}
)

// memory is the bytes c costs parsed and converted, but for the frames
// (bounded by MaxPprofFrames: at most 8 MiB more).
func (c *pprofCount) memory() int64 {
	return 5 * (c.samples*costOf.sample + c.labelMaps*costOf.labelMap + c.refs*costOf.ref + c.values*costOf.value +
		c.labels*costOf.label + c.locations*costOf.location + c.lines*costOf.line + c.functions*costOf.function +
		c.mappings*costOf.mapping + c.strings*costOf.str + c.stringBytes + c.comments*costOf.comment +
		c.valueTypes*costOf.valueType) / 4
}

// errWire is a wire format pprof's parser would refuse too; checkPprof
// refuses it itself, so that nothing it could not walk reaches the parser.
var errWire = errors.New("not a pprof profile (bad protobuf wire format)")

// checkPprof walks data (an uncompressed profile.proto Profile) as pprof's
// parser does and refuses it past MaxPprofMemory or MaxPprofFrames.
func checkPprof(data []byte) error {
	c, err := countPprof(data)
	if err != nil {
		return err
	}
	if m := c.memory(); m > MaxPprofMemory {
		return fmt.Errorf("parsing it would take more than %d MiB of memory (%d samples, %d location references, %d locations, %d lines, %d functions, %d strings): %w (rtload's own profiles take tens of KiB)",
			MaxPprofMemory>>20, c.samples, c.refs, c.locations, c.lines, c.functions, c.strings, ErrPprofLimit)
	}
	// Frames: each reference makes one per line of its location (one for
	// a location without lines), each sample at least one. Exact counting
	// needs each location's lines by id, wanted only when the crude bound
	// (every location as long as the longest) passes the limit.
	if (c.refs*max(c.maxLines, 1))+c.samples <= MaxPprofFrames {
		return nil
	}
	if frames := pprofFrames(data); frames > MaxPprofFrames {
		return fmt.Errorf("%d frames (each referenced location's lines times its references), more than the limit of %d: %w (rtload's own profiles make a few thousand)",
			frames, MaxPprofFrames, ErrPprofLimit)
	}
	return nil
}

// countPprof counts what data (an uncompressed profile.proto Profile)
// holds, walking it as pprof's parser does; errWire where pprof's parser
// would refuse it.
func countPprof(data []byte) (pprofCount, error) {
	var c pprofCount
	err := walkMessage(data, func(field int, typ int, b []byte, _ uint64) error {
		switch field {
		case 1, 11: // sample_type, period_type
			c.valueTypes++
		case 2: // sample
			c.samples++
			var kinds [3]bool // string, number, unit labels
			err := walkMessage(b, func(field, typ int, b []byte, _ uint64) error {
				switch field {
				case 1: // location_id, packed or not
					c.refs += packedCount(typ, b)
				case 2: // value
					c.values += packedCount(typ, b)
				case 3: // label: str = 2, num = 3, num_unit = 4
					c.labels++
					return walkMessage(b, func(field, _ int, _ []byte, _ uint64) error {
						if field >= 2 && field <= 4 {
							kinds[field-2] = true
						}
						return nil
					})
				}
				return nil
			})
			for _, k := range kinds {
				if k {
					c.labelMaps++
				}
			}
			return err
		case 3: // mapping
			c.mappings++
		case 4: // location
			c.locations++
			var lines int64
			err := walkMessage(b, func(field, _ int, _ []byte, _ uint64) error {
				if field == 4 { // line
					lines++
				}
				return nil
			})
			c.lines += lines
			c.maxLines = max(c.maxLines, lines)
			return err
		case 5: // function
			c.functions++
		case 6: // string_table
			c.strings++
			c.stringBytes += int64(len(b))
		case 13: // comment
			c.comments += packedCount(typ, b)
		}
		return nil
	})
	return c, err
}

// pprofFrames counts the frames FromPprof would make of data (walked
// once already by checkPprof: no error is left to find). Locations of one
// line or none are the rule and are not kept: the map holds only those
// with more, by id (the last of an id, as pprof keeps it).
func pprofFrames(data []byte) int64 {
	long := map[uint64]int64{}
	walkMessage(data, func(field, _ int, b []byte, _ uint64) error {
		if field != 4 {
			return nil
		}
		var id uint64
		var lines int64
		walkMessage(b, func(field, typ int, _ []byte, u uint64) error {
			switch {
			case field == 1 && typ == 0:
				id = u
			case field == 4:
				lines++
			}
			return nil
		})
		if lines > 1 {
			long[id] = lines
		} else {
			delete(long, id)
		}
		return nil
	})
	var frames int64
	walkMessage(data, func(field, _ int, b []byte, _ uint64) error {
		if field != 2 {
			return nil
		}
		frames++ // a sample without locations makes one frame
		walkMessage(b, func(field, typ int, b []byte, u uint64) error {
			if field != 1 {
				return nil
			}
			if typ != 2 {
				frames += max(long[u], 1)
				return nil
			}
			for len(b) > 0 {
				id, rest, _ := varint(b)
				b = rest
				frames += max(long[id], 1)
			}
			return nil
		})
		return nil
	})
	return frames
}

// packedCount is the number of values of a repeated scalar field: one, or
// as many varints as its packed bytes hold (as pprof counts them).
func packedCount(typ int, b []byte) int64 {
	if typ != 2 {
		return 1
	}
	var n int64
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// walkMessage calls f for each field of the protobuf message data with
// its number, wire type and value (b for length-delimited, u for the
// others), as pprof's decodeField reads them; it stops at f's error or at
// a wire format pprof would refuse (errWire).
func walkMessage(data []byte, f func(field, typ int, b []byte, u uint64) error) error {
	for len(data) > 0 {
		key, rest, ok := varint(data)
		if !ok {
			return errWire
		}
		data = rest
		field, typ := int(key>>3), int(key&7)
		var b []byte
		var u uint64
		switch typ {
		case 0:
			if u, data, ok = varint(data); !ok {
				return errWire
			}
		case 1:
			if len(data) < 8 {
				return errWire
			}
			data = data[8:]
		case 2:
			var n uint64
			if n, data, ok = varint(data); !ok || n > uint64(len(data)) {
				return errWire
			}
			b, data = data[:n], data[n:]
		case 5:
			if len(data) < 4 {
				return errWire
			}
			data = data[4:]
		default:
			return errWire
		}
		if err := f(field, typ, b, u); err != nil {
			return err
		}
	}
	return nil
}

// varint decodes a protobuf varint (at most 10 bytes, as pprof reads it).
func varint(data []byte) (uint64, []byte, bool) {
	var u uint64
	for i := 0; i < 10 && i < len(data); i++ {
		u |= uint64(data[i]&0x7f) << (7 * i)
		if data[i] < 0x80 {
			return u, data[i+1:], true
		}
	}
	return 0, nil, false
}
