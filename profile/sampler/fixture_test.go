package sampler

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/profile"
)

// recordFixture makes TestRecordFixture write ../testdata/ring-recvmsg.bin
// and kallsyms-recvmsg.txt, and TestAttributeRecvmsgOverRecvfrom write
// ../testdata/attrib-{recvmsg,recvfrom}.pb.gz and attrib-live.json; run
// one of them with -run to record only its fixtures.
var recordFixture = flag.Bool("record-fixture", false, "record profile's testdata fixtures from real recvmsg and recvfrom loops (root)")

// TestRecordFixture snapshots the raw ring of a small (2-page) buffer
// while it holds records that wrap around its end, and the /proc/kallsyms
// lines its kernel addresses resolve to, for profile's decoder tests. It
// only runs with -record-fixture. File layout (host byte order): "RTLRING1",
// then u64 sample_type, head, tail, tid, len(data), then the data area.
func TestRecordFixture(t *testing.T) {
	if !*recordFixture {
		t.Skip("records fixtures only with -record-fixture")
	}
	testutil.Requires(t, testutil.Root)
	l := startRecvLoop(t, "recvmsg", 1_000_000)
	s, err := Open(Config{TID: l.tid, Event: EventCPUClock, Period: 50_000, RingPages: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	close(l.start)
	defer func() { l.stop.Store(true); <-l.done }()
	size := uint64(len(s.data))
	deadline := time.Now().Add(2 * time.Second)
	poll := time.NewTicker(50 * time.Microsecond) // how often the ring is looked at
	defer poll.Stop()
	for i := 0; i < 100_000 && time.Now().Before(deadline); i++ {
		head, tail := atomic.LoadUint64(&s.meta.Data_head), s.meta.Data_tail
		if tail%size+(head-tail) > size && head-tail > size/2 {
			snap := slices.Clone(s.data)
			if head2 := atomic.LoadUint64(&s.meta.Data_head); head2-tail > size {
				s.Drain() // the kernel overwrote what we copied: try again
				continue
			}
			writeFixture(t, snap, head, tail, l.tid)
			return
		}
		if head-tail > size/2 {
			s.Drain()
		}
		<-poll.C
	}
	t.Fatal("the ring never wrapped within 2 s or 100 000 polls")
}

func writeFixture(t *testing.T, data []byte, head, tail uint64, tid int) {
	var b bytes.Buffer
	b.WriteString("RTLRING1")
	for _, v := range []uint64{sampleType, head, tail, uint64(tid), uint64(len(data))} {
		b.Write(binary.NativeEndian.AppendUint64(nil, v))
	}
	b.Write(data)
	if err := os.WriteFile("../testdata/ring-recvmsg.bin", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var batch profile.Batch
	if _, err := profile.Decode(data, head, tail, sampleType, &batch); err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	for _, s := range batch.Samples {
		for _, pc := range s.Callchain {
			if pc >= 1<<63 && pc < profile.ContextMax {
				addrs = append(addrs, pc, pc-1)
			}
		}
	}
	lines := kallsymsLines(t, addrs)
	hdr := fmt.Sprintf("# kallsyms subset %s: the symbols of ring-recvmsg.bin's kernel addresses and their successors\n", time.Now().UTC().Format("2006-01-02"))
	if err := os.WriteFile("../testdata/kallsyms-recvmsg.txt", []byte(hdr+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("ring: %d bytes, head %d tail %d (wraps at %d), %d samples; kallsyms subset %d lines",
		len(data), head, tail, tail%uint64(len(data)), len(batch.Samples), len(lines))
}

// kallsymsLines returns the /proc/kallsyms text lines whose symbol holds
// one of addrs, and the line after each (the symbol's end).
func kallsymsLines(t *testing.T, addrs []uint64) []string {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		addr uint64
		text string
	}
	var all []line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || !strings.ContainsAny(fs[1], "tTwW") {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err == nil && a != 0 {
			all = append(all, line{a, sc.Text()})
		}
	}
	slices.SortStableFunc(all, func(a, b line) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	keep := map[int]bool{}
	for _, a := range addrs {
		i, _ := slices.BinarySearchFunc(all, a, func(l line, a uint64) int {
			switch {
			case l.addr < a:
				return -1
			case l.addr > a:
				return 1
			}
			return 0
		})
		if i == len(all) || all[i].addr != a {
			i--
		}
		for j := i; j >= 0 && j < len(all) && j <= i+1; j++ {
			keep[j] = true
		}
		for j := i - 1; j >= 0 && all[j].addr == all[i].addr; j-- {
			keep[j] = true // aliases at the same address
		}
	}
	var out []string
	for i, l := range all {
		if keep[i] {
			out = append(out, l.text)
		}
	}
	return out
}
