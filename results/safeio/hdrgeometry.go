package safeio

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// HdrHistogram geometry. A V2 encoding declares its histogram's lowest and
// highest trackable values and significant digits, and decoding allocates
// (and every merge and percentile walks) the counts array that geometry
// needs, whatever the encoding's length: 60 bytes of base64 can ask for
// 1..2^63 at 5 digits, six million counts. A summary of a few hundred KB
// of such encodings kept report on the CPU for minutes. So every encoding
// is checked from its header alone before it is decoded (CheckHDR,
// DecodeHDR, and Summary's schema check for each one in summary.json).

// MaxHDRCounts is the most counts a decoded histogram may need: 3
// significant digits over the whole int64 range (rtload's own
// histograms, and what HdrHistogram's users write) need 56,320.
const MaxHDRCounts = 1 << 16

// MaxHDRBytes bounds one HdrHistogram encoding in summary.json (and every
// decode of one): rtload's own are a few KiB.
const MaxHDRBytes = 1 << 20

// HDRHeader reads encodings' headers with one zlib reader (Check), for
// a summary's many; its zero value is ready, and Close releases it.
type HDRHeader struct {
	z   io.ReadCloser
	buf [3072]byte
	hdr [40]byte
}

// CheckHDR refuses an HdrHistogram V2 compressed base64 encoding whose
// histogram would need more than MaxHDRCounts counts, or whose header
// is not one HdrHistogram can decode. Only the start of enc is read.
func CheckHDR(enc string) error {
	var h HDRHeader
	defer h.Close()
	return h.Check(enc)
}

// Close closes h's zlib reader.
func (h *HDRHeader) Close() {
	if h.z != nil {
		h.z.Close()
	}
}

// Check is CheckHDR reusing h's buffers and zlib reader.
func (h *HDRHeader) Check(enc string) error {
	if enc == "" {
		return nil
	}
	if len(enc) > MaxHDRBytes {
		return fmt.Errorf("hdr encoding of %d bytes exceeds the limit of %d", len(enc), MaxHDRBytes)
	}
	n := min(len(enc), len(h.buf)/3*4)
	raw := h.buf[:]
	var full []byte
	m, err := base64.StdEncoding.Decode(raw, []byte(enc[:n]))
	if err != nil {
		return fmt.Errorf("hdr encoding: %w", err)
	}
	raw = raw[:m]
	for {
		if len(raw) < 8 {
			return fmt.Errorf("hdr encoding: %d bytes, too short for its header", len(raw))
		}
		if cookie := int32(binary.BigEndian.Uint32(raw)) &^ 0xf0; cookie != 0x1c849304 {
			return fmt.Errorf("hdr encoding: cookie %#x, not a V2 compressed histogram", uint32(cookie))
		}
		err = h.header(raw[8:])
		if err == nil || full != nil || n == len(enc) {
			break
		}
		// The header did not inflate from the prefix: decode it all.
		if full, err = base64.StdEncoding.DecodeString(enc); err != nil {
			return fmt.Errorf("hdr encoding: %w", err)
		}
		raw = full
	}
	if err != nil {
		return fmt.Errorf("hdr encoding: header: %w", err)
	}
	sig := int32(binary.BigEndian.Uint32(h.hdr[12:]))
	lowest := int64(binary.BigEndian.Uint64(h.hdr[16:]))
	highest := int64(binary.BigEndian.Uint64(h.hdr[24:]))
	counts, err := hdrCounts(lowest, highest, sig)
	if err != nil {
		return fmt.Errorf("hdr histogram: %w", err)
	}
	if counts > MaxHDRCounts {
		return fmt.Errorf("hdr histogram of values %d to %d at %d significant digits needs %d counts, more than the limit of %d: refused (rtload writes 3 digits)", lowest, highest, sig, counts, MaxHDRCounts)
	}
	return nil
}

// header inflates the 40-byte V2 header from the zlib stream z.
func (h *HDRHeader) header(z []byte) error {
	var err error
	if h.z == nil {
		h.z, err = zlib.NewReader(bytes.NewReader(z))
	} else {
		err = h.z.(zlib.Resetter).Reset(bytes.NewReader(z), nil)
	}
	if err != nil {
		return err
	}
	_, err = io.ReadFull(h.z, h.hdr[:])
	return err
}

// hdrCounts is the length of the counts array HdrHistogram allocates for
// a histogram of lowest..highest at sig significant digits (hdrhistogram-go
// newExactGeometry, with its wire checks).
func hdrCounts(lowest, highest int64, sig int32) (int64, error) {
	if sig < 0 || sig > 5 {
		return 0, fmt.Errorf("%d significant digits, not 0 to 5", sig)
	}
	lowest = max(lowest, 1)
	subMag := int(math.Ceil(math.Log2(2 * math.Pow10(int(sig)))))
	halfMag := max(subMag, 1) - 1
	unitMag := bits.Len64(uint64(lowest)) - 1
	if unitMag+halfMag > 61 {
		return 0, fmt.Errorf("lowest value %d too large for %d significant digits", lowest, sig)
	}
	subCount := int64(1) << (halfMag + 1)
	smallest := subCount << unitMag
	buckets := int64(1)
	for smallest <= highest {
		if smallest > math.MaxInt64/2 {
			buckets++
			break
		}
		smallest <<= 1
		buckets++
	}
	return (buckets + 1) * (subCount / 2), nil
}
