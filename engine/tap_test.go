package engine

import (
	"context"
	"os"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/net/netns"
)

const tapYAML = `
name: e2e-tap
duration: 1500ms
warmup: 200ms
network: {namespace: private}
endpoints:
  - name: socks
    kind: tap
    count: 450
    devices: 2
    queues: 2
traffic:
  - endpoint: socks
    interval: 20ms
readers:
  - name: rt
    endpoints: [socks]
    cpu: 1
    period: 10ms
`

func requireTap(t *testing.T) {
	t.Helper()
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("needs /dev/net/tun")
	}
}

// ownNamespaces lists the rtload namespaces this process owns.
func ownNamespaces(t *testing.T) []string {
	t.Helper()
	ents, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	var own []string
	for _, e := range ents {
		if e.PID == os.Getpid() {
			own = append(own, e.Name)
		}
	}
	return own
}

// TestRunTap450 runs the 450-socket workload with its traffic written as
// frames into two multi-queue tap devices: every frame reaches its socket,
// in order, and the namespace is gone afterwards.
func TestRunTap450(t *testing.T) {
	requireTap(t)
	spec, trials := load(t, tapYAML)
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tr := sum.Trials[0]
	tx, rx := tr.Traffic[0], tr.Readers[0]
	if tr.Namespace == "" {
		t.Error("trial does not name its namespace")
	}
	checkSent(t, tr, 450*1700/20) // 450 sockets × (1.7 s / 20 ms) due
	if rx.Messages != tx.Sent || rx.Lost != 0 || rx.Reordered != 0 || rx.Drops != 0 || tx.SendErrors != 0 {
		t.Errorf("received %d of %d sent; lost %d reordered %d drops %d send errors %d", rx.Messages, tx.Sent, rx.Lost, rx.Reordered, rx.Drops, tx.SendErrors)
	}
	if rx.SocketsRead != 450 {
		t.Errorf("sockets read %d, want 450", rx.SocketsRead)
	}
	if own := ownNamespaces(t); len(own) != 0 {
		t.Errorf("namespaces left behind: %v", own)
	}
}

// TestTapSendProbe runs seed 004's probe on two sizes around PAGE_SIZE:
// every frame written is accepted by the device and reaches the sink.
func TestTapSendProbe(t *testing.T) {
	requireTap(t)
	spec, trials := load(t, `
name: e2e-tap-send
duration: 100ms
endpoints: [{name: t, kind: tap, count: 1, mtu: 9000}]
probes: [{name: send, kind: tap_send, endpoint: t, packets: 2000, size: [64, 4097], cpu: 1, policy: fifo, priority: 80}]
variants:
  - {name: plain, set: {"endpoints[0].vnet_hdr": "false"}}
  - {name: vnet, set: {"endpoints[0].vnet_hdr": "true"}}
`)
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range sum.Trials {
		if len(tr.Probes) != 1 || len(tr.Probes[0].Sizes) != 2 {
			t.Fatalf("%s: probes %+v", tr.Variant, tr.Probes)
		}
		p := tr.Probes[0]
		if p.VnetHdr != (tr.Variant == "vnet") || p.Applied.Policy != "SCHED_FIFO" {
			t.Errorf("%s: vnet_hdr %v policy %s", tr.Variant, p.VnetHdr, p.Applied.Policy)
		}
		for _, sz := range p.Sizes {
			if sz.Packets != 2000 || sz.Written != 2000 || sz.Errors != 0 || sz.RxPackets != 2000 || sz.RxDropped != 0 || sz.SinkReceived != 2000 {
				t.Errorf("%s %d B: %+v", tr.Variant, sz.Size, sz)
			}
			if sz.MeanNs <= 0 || sz.PerWrite.Count != 2000 || sz.Hist.Total != 2000 {
				t.Errorf("%s %d B: mean %.0f ns, %d per-write samples, hist total %d", tr.Variant, sz.Size, sz.MeanNs, sz.PerWrite.Count, sz.Hist.Total)
			}
		}
	}
	if own := ownNamespaces(t); len(own) != 0 {
		t.Errorf("namespaces left behind: %v", own)
	}
}
