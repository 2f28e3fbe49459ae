package exporter

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/sysinfo"
)

// waitPressure polls s.Pressure until ok or 10 s, and returns the last.
func waitPressure(t *testing.T, s *Server, ok func(Pressure) bool) Pressure {
	t.Helper()
	var p Pressure
	testutil.Eventually(10*time.Second, func() bool { p = s.Pressure(); return ok(p) })
	return p
}

// TestHeaderLimit: a request whose header passes MaxHeaderBytes gets 431
// and its connection is counted refused; a scrape still works.
func TestHeaderLimit(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", 64<<10))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("64 KiB header: %v %v, want 431", resp, err)
	}
	if p := waitPressure(t, s, func(p Pressure) bool { return p.Refused >= 1 }); p.Refused != 1 || p.Connections != 1 {
		t.Errorf("pressure %+v, want 1 connection, 1 refused", p)
	}
	if _, err := scrape(t, s.Addr()); err != nil {
		t.Errorf("scrape after a refused request: %v", err)
	}
	if p := s.Pressure(); p.Refused != 1 || p.Connections != 2 || p.Requests != 1 {
		t.Errorf("pressure %+v after a scrape, want 2 connections, 1 refused, 1 request", p)
	}
}

// TestConnCap: idle connections beyond MaxConns are never accepted (they
// wait in the kernel's backlog), so the endpoint holds at most MaxConns
// descriptors for them; one that sends nothing is closed after
// ReadHeaderTimeout, freeing its slot.
func TestConnCap(t *testing.T) {
	testutil.Long(t, "opens hundreds of connections")
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fds0, _ := sysinfo.OpenFDs()
	var conns []net.Conn
	for range MaxConns + 6 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	p := waitPressure(t, s, func(p Pressure) bool { return p.Connections >= MaxConns })
	// Our own client ends are MaxConns+6 descriptors; the server's at most
	// MaxConns, and one more while its Accept counts its own descriptors
	// (fdRoom reads /proc/self/fd, before and after each accept(2)): a
	// make test run caught that moment, +23.
	fds1, _ := sysinfo.OpenFDs()
	if want := 2*MaxConns + 6 + 1; p.Connections != MaxConns || fds1-fds0 > want {
		t.Errorf("accepted %d (want %d), descriptors +%d (want ≤ %d)", p.Connections, MaxConns, fds1-fds0, want)
	}
	// The first idle ones time out (ReadHeaderTimeout), and the waiting ones get their turn.
	start := time.Now()
	p = waitPressure(t, s, func(p Pressure) bool { return p.Refused >= MaxConns && p.Connections > MaxConns })
	if p.Refused < MaxConns || p.Connections <= MaxConns {
		t.Errorf("pressure %+v after %v: want the idle connections refused and the waiting ones accepted", p, time.Since(start))
	}
	if d := time.Since(start); d < ReadHeaderTimeout/2 {
		t.Errorf("idle connections refused after %v, before ReadHeaderTimeout %v", d, ReadHeaderTimeout)
	}
}

// TestFDReserve: with fewer than FDReserve descriptors free below
// RLIMIT_NOFILE the endpoint accepts nothing (it waits, and counts the
// waits), and accepts again once they are free.
func TestFDReserve(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	open, err := sysinfo.OpenFDs()
	if err != nil {
		t.Fatal(err)
	}
	tight := old
	tight.Cur = uint64(open + FDReserve)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &tight); err != nil {
		t.Skipf("setrlimit RLIMIT_NOFILE %d: %v", tight.Cur, err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()
	s, err := Listen("127.0.0.1:0", false) // its own socket leaves fewer than FDReserve free
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := waitPressure(t, s, func(p Pressure) bool { return p.FDWaits >= 3 })
	if p.FDWaits < 3 || p.Connections != 0 {
		t.Fatalf("pressure %+v with %d descriptors free: want waits and no connection accepted", p, tight.Cur-uint64(open))
	}
	restore()
	if p := waitPressure(t, s, func(p Pressure) bool { return p.Connections == 1 }); p.Connections != 1 {
		t.Errorf("pressure %+v after the limit was raised: want the waiting connection accepted", p)
	}
}

// TestRoundsKept: a variant's series are kept for its last RoundsKept
// rounds only, so slice after slice /metrics stays the same size.
func TestRoundsKept(t *testing.T) {
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	count := func() (series int, rounds map[string]bool) {
		body, err := scrape(t, s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		rounds = map[string]bool{}
		for line := range strings.Lines(body) {
			if strings.HasPrefix(line, "rtload_") && strings.Contains(line, `round="`) {
				series++
				r := line[strings.Index(line, `round="`)+7:]
				rounds[r[:strings.IndexByte(r, '"')]] = true
			}
		}
		return series, rounds
	}
	var sizes []int
	for round := range 12 {
		for _, v := range []string{"a", "b"} {
			s.Update(Interval{Scenario: "soak", Variant: v, Round: round, Reader: "rt", Wakeups: 100,
				Noise: []NoiseWork{{Kind: "spin", Unit: "loops", Count: 1}}})
		}
		n, rounds := count()
		sizes = append(sizes, n)
		if round >= RoundsKept && (len(rounds) != RoundsKept || !rounds[fmt.Sprint(round)] || !rounds[fmt.Sprint(round-RoundsKept+1)]) {
			t.Errorf("after round %d: series of rounds %v, want the last %d", round, rounds, RoundsKept)
		}
	}
	if sizes[len(sizes)-1] != sizes[RoundsKept-1] {
		t.Errorf("series per scrape over 12 rounds: %v, want constant from round %d on", sizes, RoundsKept)
	}
}

// floodSeconds is TestFlood's length; issue 22's full flood (300
// connections, 60 s) runs against a real soak in cmd/rtload's
// TestSoakFlood (-soak-flood).
const floodSeconds = 3

// TestFlood: 300 clients sending 1 MiB headers for floodSeconds (from a
// child process, so that only the endpoint's allocations are counted),
// with GC off as during a soak: the endpoint accepts at most AcceptRate a
// second (plus the burst), serves none of them, refuses each (all but
// those still in flight), and each costs at most floodConnBudget of heap,
// which only the soak's next collection frees.
func TestFlood(t *testing.T) {
	testutil.Long(t, "a flood of connections for seconds")
	if addr := os.Getenv("RTLOAD_FLOOD_ADDR"); addr != "" {
		t.Skip("the flood client runs as TestFloodClient")
	}
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	b0 := heapAllocBytes()
	client := exec.Command(os.Args[0], "-test.run=^TestFloodClient$", "-test.v")
	client.Env = append(os.Environ(), "RTLOAD_FLOOD_ADDR="+s.Addr(), fmt.Sprintf("RTLOAD_FLOOD_SECONDS=%d", floodSeconds))
	start := time.Now()
	out, err := client.CombinedOutput()
	during, took := s.Pressure(), time.Since(start)
	if err != nil {
		t.Fatalf("flood client: %v\n%s", err, out)
	}
	// Connections still in the kernel's backlog are accepted (at AcceptRate) and refused after it.
	// The kernel's backlog still holds dead flood connections: the
	// endpoint goes on accepting them at AcceptRate (and refusing them).
	p := s.Pressure()
	grown := heapAllocBytes() - b0
	t.Logf("%s: endpoint %+v during the flood, %+v after; heap +%d KiB (%d B per connection)", floodLine(out), during, p, grown>>10, grown/max(p.Connections, 1))
	if maxConns := uint64(AcceptRate*took.Seconds()) + AcceptBurst + MaxConns; during.Connections > maxConns {
		t.Errorf("%d connections accepted in %v, want ≤ %d (AcceptRate %d/s, burst %d)", during.Connections, took, maxConns, AcceptRate, AcceptBurst)
	}
	if p.Requests != 0 || p.Refused+MaxConns < p.Connections {
		t.Errorf("%d requests served and %d of %d flood connections refused, want none served and all refused but the ≤ %d in flight", p.Requests, p.Refused, p.Connections, MaxConns)
	}
	if per := grown / max(p.Connections, 1); per > floodConnBudget {
		t.Errorf("heap +%d B per flood connection, budget %d", per, floodConnBudget)
	}
}

// TestFloodClient is TestFlood's child: the flood itself.
func TestFloodClient(t *testing.T) {
	addr := os.Getenv("RTLOAD_FLOOD_ADDR")
	if addr == "" {
		t.Skip("run by TestFlood")
	}
	secs, _ := strconv.Atoi(os.Getenv("RTLOAD_FLOOD_SECONDS"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(secs, 1))*time.Second)
	defer cancel()
	t.Logf("flood: %+v", testutil.Flood(ctx, addr, 300, 1<<20))
}

// floodLine is the flood client's summary line.
func floodLine(out []byte) string {
	for line := range strings.Lines(string(out)) {
		if i := strings.Index(line, "flood: "); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	return "flood"
}

// floodConnBudget is the heap a refused 1 MiB-header connection may
// allocate (bytes): at AcceptRate that is AcceptRate × 60 × 32 KiB ≈ 38 MiB
// of garbage for a minute's flood with GC off.
const floodConnBudget = 32 << 10

func heapAllocBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
