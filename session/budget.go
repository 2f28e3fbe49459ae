package session

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// A reading command's CPU budget. Results from elsewhere can be crafted to
// cost far more CPU than any run writes (thousands of histograms, each
// within every per-file limit); the per-file limits bound each file, and
// this bounds the command: past its limit of CPU time (user + system,
// getrusage(2) RUSAGE_SELF) spent reading and rendering, the command stops
// with a message saying so and exits ExitUsage. check counts only its
// reading of the baseline and its comparison, not the run in between.

// budgetPoll is how often the budget looks at the CPU time used.
const budgetPoll = 100 * time.Millisecond

// CPUBudget watches the process's CPU time while it is running (between
// resume and pause) and ends the process when the total passes limit.
type CPUBudget struct {
	what  string
	limit time.Duration
	errw  io.Writer
	exit  func(code int)

	mu      sync.Mutex
	used    time.Duration // in earlier running spans
	since   time.Duration // process CPU time when the current span began
	running bool
	done    chan struct{}
}

// StartBudget starts a budget of limit (0: none) for the command what,
// running; end stops it.
func StartBudget(errw io.Writer, what string, limit time.Duration) *CPUBudget {
	b := &CPUBudget{what: what, limit: limit, errw: errw, exit: os.Exit, done: make(chan struct{})}
	if limit <= 0 {
		return b
	}
	b.Resume()
	go b.watch()
	return b
}

// processCPU is the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spent is the CPU time counted so far.
func (b *CPUBudget) spent() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.used
	if b.running {
		s += processCPU() - b.since
	}
	return s
}

func (b *CPUBudget) watch() {
	t := time.NewTicker(budgetPoll)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-t.C:
		}
		if s := b.spent(); s > b.limit {
			fmt.Fprintf(b.errw, "rtload %s: stopped after %.1fs of CPU time reading results (--cpu-budget %v): they hold far more work than any run rtload writes, or were crafted to; give a larger --cpu-budget (or 0) to read them anyway\n",
				b.what, s.Seconds(), b.limit)
			b.exit(ExitUsage)
			return
		}
	}
}

// Pause stops counting (check's run); Resume counts again.
func (b *CPUBudget) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		b.used += processCPU() - b.since
		b.running = false
	}
}

func (b *CPUBudget) Resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running && b.limit > 0 {
		b.since, b.running = processCPU(), true
	}
}

// End stops the budget; it is idempotent.
func (b *CPUBudget) End() {
	b.Pause()
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}
