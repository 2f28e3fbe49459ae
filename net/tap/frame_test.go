package tap_test

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/rtload/rtload/net/tap"
	"github.com/rtload/rtload/net/udp"
)

var (
	srcMAC = net.HardwareAddr{0x02, 0x72, 0x74, 0x6c, 0x00, 0x02} // locally administered
	dstMAC = net.HardwareAddr{0x02, 0x72, 0x74, 0x6c, 0x00, 0x01}
)

// reference serializes the frame Builder should produce with gopacket
// (ComputeChecksums, FixLengths).
func reference(t *testing.T, f tap.Flow, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: f.SrcMAC, DstMAC: f.DstMAC}
	u := &layers.UDP{SrcPort: layers.UDPPort(f.Src.Port()), DstPort: layers.UDPPort(f.Dst.Port())}
	var ip gopacket.SerializableLayer
	if f.Dst.Addr().Is6() {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 := &layers.IPv6{Version: 6, NextHeader: layers.IPProtocolUDP, HopLimit: 64,
			SrcIP: f.Src.Addr().AsSlice(), DstIP: f.Dst.Addr().AsSlice()}
		if err := u.SetNetworkLayerForChecksum(ip6); err != nil {
			t.Fatal(err)
		}
		ip = ip6
	} else {
		eth.EthernetType = layers.EthernetTypeIPv4
		ip4 := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP,
			SrcIP: f.Src.Addr().AsSlice(), DstIP: f.Dst.Addr().AsSlice()}
		if err := u.SetNetworkLayerForChecksum(ip4); err != nil {
			t.Fatal(err)
		}
		ip = ip4
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true},
		eth, ip, u, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	// gopacket pads Ethernet frames to the 60-byte minimum; tap takes short
	// frames as they are and Builder does not pad (IP lengths are exact).
	if n := 14 + 20 + 8 + len(payload); f.Dst.Addr().Is4() && n < len(b) && len(b) == 60 {
		if !bytes.Equal(b[n:], make([]byte, 60-n)) {
			t.Fatalf("gopacket padding % x not zero", b[n:])
		}
		b = b[:n]
	}
	return b
}

func TestBuilderMatchesGopacket(t *testing.T) {
	flows := map[string][]tap.Flow{
		"ipv4": {
			{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("198.18.0.2:40000"), Dst: netip.MustParseAddrPort("198.18.0.1:5000")},
			{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("198.19.255.254:1"), Dst: netip.MustParseAddrPort("198.19.0.1:65535")},
		},
		"ipv6": {
			{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("[2001:2::2]:40000"), Dst: netip.MustParseAddrPort("[2001:2::1]:5000")},
			{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("[2001:2:0:ffff::ffff]:65535"), Dst: netip.MustParseAddrPort("[2001:2::1]:1")},
		},
	}
	// seqs include values whose checksum folds to 0 (sent as 0xffff) or
	// carries across many words.
	seqs := []uint64{0, 1, 4, 0xffff, 1 << 40, ^uint64(0)}
	for fam, fl := range flows {
		for _, size := range []int{16, 64, 1400, 4000, 9000} {
			for _, vnet := range []bool{false, true} {
				b, err := tap.NewBuilder(fl, size, vnet)
				if err != nil {
					t.Fatalf("%s %d: %v", fam, size, err)
				}
				for i, f := range fl {
					for _, seq := range seqs {
						sent := int64(seq*7919) - 3
						got := b.Frame(i, seq, sent)
						payload := make([]byte, size)
						udp.PutHeader(payload, udp.Header{Seq: seq, SentNs: sent})
						want := reference(t, f, payload)
						if vnet {
							if !bytes.Equal(got[:tap.VnetHdrLen], make([]byte, tap.VnetHdrLen)) {
								t.Errorf("%s size %d flow %d seq %d: virtio_net_hdr % x not zero", fam, size, i, seq, got[:tap.VnetHdrLen])
							}
							got = got[tap.VnetHdrLen:]
						}
						if !bytes.Equal(got, want) {
							t.Errorf("%s size %d vnet %v flow %d seq %d: frame differs from gopacket's\n got % x\nwant % x",
								fam, size, vnet, i, seq, got[:min(len(got), 80)], want[:min(len(want), 80)])
							continue
						}
						// Decode too: gopacket's checksum verification of what we built.
						p := gopacket.NewPacket(got, layers.LayerTypeEthernet, gopacket.Default)
						if el := p.ErrorLayer(); el != nil {
							t.Errorf("%s size %d: decode: %v", fam, size, el.Error())
						}
						u, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
						if u == nil || u.Checksum == 0 {
							t.Errorf("%s size %d: no UDP layer or zero checksum", fam, size)
							continue
						}
						h, ok := udp.ReadHeader(u.Payload)
						if !ok || h.Seq != seq || h.SentNs != sent || len(u.Payload) != size {
							t.Errorf("%s size %d: header %+v ok %v len %d", fam, size, h, ok, len(u.Payload))
						}
					}
				}
			}
		}
	}
}

func TestBuilderFrameAllocs(t *testing.T) {
	f := tap.Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("198.18.0.2:40000"), Dst: netip.MustParseAddrPort("198.18.0.1:5000")}
	b, err := tap.NewBuilder([]tap.Flow{f, f}, 1400, true)
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	if a := testing.AllocsPerRun(100, func() { b.Frame(1, seq, int64(seq)); seq++ }); a != 0 {
		t.Fatalf("Frame allocs %v", a)
	}
}

func TestBuilderErrors(t *testing.T) {
	good := tap.Flow{SrcMAC: srcMAC, DstMAC: dstMAC, Src: netip.MustParseAddrPort("198.18.0.2:40000"), Dst: netip.MustParseAddrPort("198.18.0.1:5000")}
	with := func(f func(*tap.Flow)) []tap.Flow { g := good; f(&g); return []tap.Flow{g} }
	for _, tc := range []struct {
		name    string
		flows   []tap.Flow
		size    int
		wantErr string
		is      error
	}{
		{"no flows", nil, 64, "no flows", nil},
		{"payload below header", []tap.Flow{good}, 15, "payload 15 bytes < header 16", nil},
		{"ipv4 payload above 65507", []tap.Flow{good}, 65508, "allowed: 16–65507", nil},
		{"short MAC", with(func(f *tap.Flow) { f.SrcMAC = srcMAC[:4] }), 64, "6 bytes", nil},
		{"mixed families", with(func(f *tap.Flow) { f.Src = netip.MustParseAddrPort("[2001:2::2]:1") }), 64, "mixes address families", nil},
		{"destination outside 198.18.0.0/15", with(func(f *tap.Flow) { f.Dst = netip.MustParseAddrPort("10.0.0.1:5000") }), 64, "10.0.0.1", tap.ErrAddress},
		{"port 0", with(func(f *tap.Flow) { f.Dst = netip.MustParseAddrPort("198.18.0.1:0") }), 64, "destination port 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tap.NewBuilder(tc.flows, tc.size, false)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.wantErr)) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err %v is not %v", err, tc.is)
			}
		})
	}
}
