package tap

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/rtload/rtload/net/udp"
)

// Flow is one UDP flow inside Ethernet II frames: DstMAC is the tap
// device's MAC (Device.MAC), Dst the receiving socket's bound address and
// port. Src and Dst are of one family and lie in 198.18.0.0/15 (IPv4) or
// 2001:2::/48 (IPv6).
type Flow struct {
	SrcMAC, DstMAC net.HardwareAddr
	Src, Dst       netip.AddrPort
}

const (
	ethLen  = 14
	ip4Len  = 20
	ip6Len  = 40
	udpLen  = 8
	maxPay4 = 65535 - ip4Len - udpLen // IPv4 total length is 16 bits
	maxPay6 = 65535 - udpLen          // IPv6 payload length is 16 bits
)

// Builder holds one preallocated frame per flow: Ethernet II, IPv4 (DF, ID
// 0, TTL 64) or IPv6 (hop limit 64), UDP, then a PayloadLen-byte payload
// that starts with the rtload header (udp.Header) and is zero after it.
// With vnetHdr each frame starts with a zeroed 10-byte virtio_net_hdr. Not
// safe for concurrent use.
type Builder struct {
	frames  [][]byte
	base    []uint32 // UDP checksum sum of each frame with a zero header
	hdrOff  int      // offset of the rtload header in a frame
	csumOff int      // offset of the UDP checksum in a frame
	pay     int
}

// NewBuilder validates the flows and builds the template frames (header
// checksums by hand; the IPv4 header is the same for every frame, so its
// checksum is computed once here).
func NewBuilder(flows []Flow, payloadLen int, vnetHdr bool) (*Builder, error) {
	if len(flows) == 0 {
		return nil, fmt.Errorf("tap builder: no flows")
	}
	if payloadLen < udp.HeaderSize {
		return nil, fmt.Errorf("tap builder: payload %d bytes < header %d bytes", payloadLen, udp.HeaderSize)
	}
	v6 := flows[0].Dst.Addr().Is6()
	ipLen, maxPay := ip4Len, maxPay4
	if v6 {
		ipLen, maxPay = ip6Len, maxPay6
	}
	if payloadLen > maxPay {
		return nil, fmt.Errorf("tap builder: payload %d bytes out of range (allowed: %d–%d)", payloadLen, udp.HeaderSize, maxPay)
	}
	pre := 0
	if vnetHdr {
		pre = VnetHdrLen
	}
	udpOff := pre + ethLen + ipLen
	size := udpOff + udpLen + payloadLen
	b := &Builder{frames: make([][]byte, len(flows)), base: make([]uint32, len(flows)),
		hdrOff: udpOff + udpLen, csumOff: udpOff + 6, pay: payloadLen}
	buf := make([]byte, size*len(flows))
	for i, f := range flows {
		if len(f.SrcMAC) != 6 || len(f.DstMAC) != 6 {
			return nil, fmt.Errorf("tap builder: flow %d: MAC addresses must be 6 bytes (src %v, dst %v)", i, f.SrcMAC, f.DstMAC)
		}
		if f.Src.Addr().Is6() != v6 || f.Dst.Addr().Is6() != v6 {
			return nil, fmt.Errorf("tap builder: flow %d: %s -> %s mixes address families", i, f.Src, f.Dst)
		}
		for _, a := range []netip.Addr{f.Src.Addr(), f.Dst.Addr()} {
			if !inRange(a) {
				return nil, fmt.Errorf("tap builder: flow %d: %s: %w", i, a, ErrAddress)
			}
		}
		if f.Dst.Port() == 0 {
			return nil, fmt.Errorf("tap builder: flow %d: destination port 0", i)
		}
		fr := buf[i*size : (i+1)*size : (i+1)*size]
		e := fr[pre:]
		copy(e[0:6], f.DstMAC)
		copy(e[6:12], f.SrcMAC)
		ip := e[ethLen:]
		var sum uint32
		if v6 {
			binary.BigEndian.PutUint16(e[12:14], 0x86dd)
			ip[0] = 0x60
			binary.BigEndian.PutUint16(ip[4:6], uint16(udpLen+payloadLen))
			ip[6] = 17 // UDP
			ip[7] = 64
			s, d := f.Src.Addr().As16(), f.Dst.Addr().As16()
			copy(ip[8:24], s[:])
			copy(ip[24:40], d[:])
			// Pseudo-header: addresses, upper-layer length (32 bits), next header.
			sum = sum16(ip[8:40]) + uint32(udpLen+payloadLen) + 17
		} else {
			binary.BigEndian.PutUint16(e[12:14], 0x0800)
			ip[0] = 0x45
			binary.BigEndian.PutUint16(ip[2:4], uint16(ip4Len+udpLen+payloadLen))
			binary.BigEndian.PutUint16(ip[6:8], 0x4000) // DF
			ip[8] = 64
			ip[9] = 17
			s, d := f.Src.Addr().As4(), f.Dst.Addr().As4()
			copy(ip[12:16], s[:])
			copy(ip[16:20], d[:])
			binary.BigEndian.PutUint16(ip[10:12], fold(sum16(ip[:ip4Len])))
			sum = sum16(ip[12:20]) + uint32(udpLen+payloadLen) + 17
		}
		u := ip[ipLen:]
		binary.BigEndian.PutUint16(u[0:2], f.Src.Port())
		binary.BigEndian.PutUint16(u[2:4], f.Dst.Port())
		binary.BigEndian.PutUint16(u[4:6], uint16(udpLen+payloadLen))
		// The payload is zero here, so the UDP header alone completes the base sum.
		b.base[i] = sum + sum16(u[:udpLen])
		b.frames[i] = fr
	}
	return b, nil
}

// sum16 adds b as big-endian 16-bit words (len(b) even, ≤ 64 KiB) without
// folding.
func sum16(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	return s
}

// fold folds s to 16 bits and complements it (RFC 1071).
func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// Len is the number of flows.
func (b *Builder) Len() int { return len(b.frames) }

// FrameLen is the length of every frame in bytes, virtio_net_hdr included.
func (b *Builder) FrameLen() int { return len(b.frames[0]) }

// Frame writes the rtload header (seq, sentNs) into flow i's frame,
// updates its UDP checksum (base sum plus the header's eight 16-bit words;
// a zero result is sent as 0xffff) and returns the frame. The slice is
// reused by the next call for the same flow. No allocation.
func (b *Builder) Frame(i int, seq uint64, sentNs int64) []byte {
	f := b.frames[i]
	h := f[b.hdrOff : b.hdrOff+udp.HeaderSize]
	udp.PutHeader(h, udp.Header{Seq: seq, SentNs: sentNs})
	c := fold(b.base[i] + sum16(h))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(f[b.csumOff:b.csumOff+2], c)
	return f
}
