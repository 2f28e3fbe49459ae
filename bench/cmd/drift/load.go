package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// phases is the busy-loop schedule, repeated: how many CPU spinners and
// memory streamers each phase runs. Idle phases between loaded ones make
// steps both ways, of several sizes and of both kinds of load.
var phases = []struct{ spin, mem int }{
	{0, 0}, {2, 0}, {0, 0}, {0, 1}, {3, 0}, {1, 1}, {0, 0}, {0, 2}, {4, 0},
	{0, 0}, {1, 0}, {2, 2}, {0, 0}, {3, 0}, {0, 1}, {0, 0}, {2, 0}, {1, 0},
}

// schedule runs the phases' busy loops as child processes and logs each
// phase to schedule.csv (start, end, spinners, streamers).
type schedule struct {
	self  string
	phase time.Duration
	log   *os.File

	mu         sync.Mutex
	kids       []*exec.Cmd
	spin, mem  int
	phaseStart time.Time
}

func newSchedule(dir, self string, phase time.Duration) (*schedule, error) {
	f, err := os.Create(dir + "/schedule.csv")
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(f, "start,end,spin,mem")
	return &schedule{self: self, phase: phase, log: f}, nil
}

// start starts phase i's busy loops. Each child ends on its own a minute
// after the phase should have (a bound even if this program hangs) and
// with this program (PR_SET_PDEATHSIG).
func (s *schedule) start(i int) {
	p := phases[i%len(phases)]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spin, s.mem, s.phaseStart = p.spin, p.mem, time.Now()
	for k := range p.spin + p.mem {
		kind := "spin"
		if k >= p.spin {
			kind = "mem"
		}
		cmd := exec.Command(s.self, "-busy", kind, "-for", (s.phase + time.Minute).String())
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "drift: busy loop: %v\n", err)
			continue
		}
		s.kids = append(s.kids, cmd)
	}
	fmt.Fprintf(os.Stderr, "drift: %s phase %d: %d spinners, %d memory streamers\n", time.Now().Format("15:04:05"), i, p.spin, p.mem)
}

// stopPhase kills the running phase's busy loops (each by its pid) and
// logs the phase.
func (s *schedule) stopPhase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.kids {
		k.Process.Kill()
		k.Wait()
	}
	s.kids = nil
	if !s.phaseStart.IsZero() {
		fmt.Fprintf(s.log, "%s,%s,%d,%d\n", s.phaseStart.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano), s.spin, s.mem)
	}
	s.spin, s.mem, s.phaseStart = 0, 0, time.Time{}
}

// running is the busy loops running now.
func (s *schedule) running() (spin, mem int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spin, s.mem
}

func (s *schedule) close() {
	s.stopPhase()
	s.log.Close()
}

// sampleLoad appends the load average and the busy loops running to path
// every 5 s until the returned stop is called.
func sampleLoad(path string, s *schedule) (stop func()) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "drift: %v\n", err)
		return func() {}
	}
	fmt.Fprintln(f, "time,load1,load5,spin,mem")
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			l1, l5 := loadavg()
			sp, me := s.running()
			fmt.Fprintf(f, "%s,%.2f,%.2f,%d,%d\n", time.Now().UTC().Format(time.RFC3339), l1, l5, sp, me)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait(); f.Close() }
}

// loadavg is /proc/loadavg's 1- and 5-minute load (0 when unreadable).
func loadavg() (l1, l5 float64) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0
	}
	l1, _ = strconv.ParseFloat(f[0], 64)
	l5, _ = strconv.ParseFloat(f[1], 64)
	return l1, l5
}

// busyLoop is a child's busy loop: spin (a dependent multiply-add chain,
// no memory traffic) or mem (copies between two 64 MiB buffers: the last
// level cache and memory bandwidth), for d at most.
func busyLoop(kind string, d time.Duration) error {
	if d <= 0 || d > 24*time.Hour {
		return fmt.Errorf("-for %v: want (0, 24h]", d)
	}
	end := time.Now().Add(d)
	switch kind {
	case "spin":
		x := uint64(1)
		for time.Now().Before(end) {
			for range 1 << 20 {
				x = x*6364136223846793005 + 1
			}
		}
		if x == 0 {
			fmt.Println(x)
		}
	case "mem":
		a, b := make([]byte, 64<<20), make([]byte, 64<<20)
		for time.Now().Before(end) {
			copy(a, b)
			copy(b, a)
		}
	default:
		return fmt.Errorf("-busy %q: want spin or mem", kind)
	}
	return nil
}
