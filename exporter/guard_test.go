package exporter

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
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
	// Sent once the connection is the HTTP server's: a header already
	// queued past any request's size when accepted is dropped unread
	// instead (TestFlood).
	testutil.Eventually(10*time.Second, func() bool { return s.guard.handed.Load() == 1 })
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

// TestConnCap: idle connections beyond MaxConns are never served (the
// first waits, accepted, for a slot; the others in the kernel's backlog),
// so the endpoint holds at most MaxConns+1 descriptors for them; one that
// sends nothing is closed after ReadHeaderTimeout, freeing its slot. They
// are alive: none is dropped.
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
	// MaxConns and the one waiting for a slot, and one more while its
	// Accept counts its own descriptors (fdRoom reads /proc/self/fd,
	// before and after each accept(2)): a make test run caught that
	// moment, +23.
	fds1, _ := sysinfo.OpenFDs()
	if want := 2*MaxConns + 6 + 2; p.Connections > MaxConns+1 || fds1-fds0 > want {
		t.Errorf("accepted %d (want %d, or one more waiting for a slot), descriptors +%d (want ≤ %d)", p.Connections, MaxConns, fds1-fds0, want)
	}
	if d := s.guard.dropped.Load(); d != 0 {
		t.Errorf("%d idle connections dropped, want none (they are alive)", d)
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
// with GC off as during a soak: the endpoint hands at most AcceptRate a
// second (plus the burst) to the HTTP server, serves none of them,
// refuses each (all but those still in flight), and each costs at most
// floodConnBudget of heap, which only the soak's next collection frees;
// the others, dead when accepted (their 1 MiB already queued, or closed),
// are dropped at once, allocating nothing.
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
	p := s.Pressure()
	dropped := s.guard.dropped.Load()
	handed := p.Connections - dropped
	grown := heapAllocBytes() - b0
	t.Logf("%s: endpoint %+v during the flood, %+v after, %d dropped at accept, %d handed on; heap +%d KiB (%d B per connection handed on)",
		floodLine(out), during, p, dropped, handed, grown>>10, grown/max(handed, 1))
	if maxHanded := uint64(AcceptRate*took.Seconds()) + AcceptBurst + 1; handed > maxHanded {
		t.Errorf("%d connections handed on in %v, want ≤ %d (AcceptRate %d/s, burst %d)", handed, took, maxHanded, AcceptRate, AcceptBurst)
	}
	if p.Requests != 0 || p.Refused+MaxConns < p.Connections {
		t.Errorf("%d requests served and %d of %d flood connections refused, want none served and all refused but the ≤ %d in flight", p.Requests, p.Refused, p.Connections, MaxConns)
	}
	if per := grown / max(handed, 1); per > floodConnBudget {
		t.Errorf("heap +%d B per flood connection handed on, budget %d", per, floodConnBudget)
	}
}

// floodRecovery is TestFloodRecovery's flood: 3 s in make test; issue 34
// row 7's measurement is -flood-recovery=30s.
var floodRecovery = flag.Duration("flood-recovery", 3*time.Second, "TestFloodRecovery: how long the flood lasts")

// recoveryBound is how soon after a flood ends a scrape must succeed
// (issue 34 row 7: 5 s; before, the first one came 91 s after a 30 s
// flood, behind the kernel's backlog of dead flood connections accepted
// at AcceptRate).
const recoveryBound = 5 * time.Second

// TestFloodRecovery floods the endpoint as an unprivileged user (nobody,
// when the test runs as root): 300 clients sending 1 MiB headers for
// -flood-recovery, then scrapes as Prometheus would, every 500 ms with a
// 1 s timeout, and requires one to succeed within recoveryBound of the
// flood's end. The endpoint drops the flood's connections as it accepts
// them, so none is left queued in front of the scrape.
func TestFloodRecovery(t *testing.T) {
	if os.Getenv("RTLOAD_FLOOD_ADDR") != "" {
		t.Skip("the flood client runs as TestFloodClient")
	}
	s, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secs := max(1, int(floodRecovery.Seconds()))
	t.Setenv("RTLOAD_FLOOD_ADDR", s.Addr())
	t.Setenv("RTLOAD_FLOOD_SECONDS", strconv.Itoa(secs))
	start := time.Now()
	if os.Geteuid() == 0 {
		testutil.RunTestAsNobody(t, "TestFloodClient", "RTLOAD_FLOOD_NOBODY")
	} else {
		out, err := exec.Command(os.Args[0], "-test.run=^TestFloodClient$", "-test.v").CombinedOutput()
		if err != nil {
			t.Fatalf("flood client: %v\n%s", err, out)
		}
		t.Log(floodLine(out))
	}
	end := time.Now()
	during := s.Pressure()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	var first time.Duration
	var errs []string
	for i := 0; first == 0 && time.Since(end) < recoveryBound; i++ {
		resp, err := client.Get("http://" + s.Addr() + "/metrics")
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		if err == nil {
			first = time.Since(end)
			break
		}
		errs = append(errs, fmt.Sprintf("%.2fs: %v", time.Since(end).Seconds(), err))
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("flood of %v (%d s asked): endpoint %+v, %d dropped at accept; first scrape answered %v after its end (%d failed before: %v)",
		end.Sub(start).Round(time.Millisecond), secs, during, s.guard.dropped.Load(), first.Round(time.Millisecond), len(errs), errs)
	if first == 0 {
		t.Errorf("no scrape answered within %v of the flood's end: %v", recoveryBound, errs)
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

// TestAcceptDropAllocs: dropping a dead connection at accept allocates
// nothing in Go, so a flood leaves no garbage for a soak with GC off:
// ListenBacklog queued connections, half closed by their peer, half
// holding more than a request may (junkBytes), accepted and dropped by
// the raw accept loop with 0 mallocs.
func TestAcceptDropAllocs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGuardedListener(ln.(*net.TCPListener))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	junk := make([]byte, junkBytes+1)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range ListenBacklog {
		c, err := net.Dial("tcp", g.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			c.Close()
		} else if _, err := c.Write(junk); err != nil {
			t.Fatal(err)
		}
	}
	var fd uintptr
	g.raw.Control(func(f uintptr) { fd = f })
	// The peers' FINs and data are on loopback: in the queue before the
	// accepts, except under a stall; a connection found alive ends the
	// loop and is counted, never dropped wrongly.
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	done := g.acceptFn(fd)
	runtime.ReadMemStats(&m1)
	if g.acceptErr != nil {
		t.Fatal(g.acceptErr)
	}
	if done {
		t.Logf("a connection was still alive when accepted (fd %d): %d dropped before it", g.candidate, g.dropped.Load())
		syscall.Close(g.candidate)
	} else if d := g.dropped.Load(); d != ListenBacklog {
		t.Errorf("%d dropped, want %d", d, ListenBacklog)
	}
	if n, d := m1.Mallocs-m0.Mallocs, g.dropped.Load(); n != 0 || d == 0 {
		t.Errorf("%d mallocs to accept and drop %d connections, want 0 for at least one", n, d)
	}
}
