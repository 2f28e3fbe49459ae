package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const tracefsRoot = "/sys/kernel/tracing"

// events are the tracepoints a capture enables (those missing on this
// kernel are skipped and named on stderr).
var events = []string{
	"timer/hrtimer_start", "timer/hrtimer_expire_entry",
	"sched/sched_waking", "sched/sched_switch",
	"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
	"exceptions/page_fault_user", "exceptions/page_fault_kernel",
	"irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit",
}

// capture is one ftrace instance of rtload's own, on one CPU.
type capture struct {
	dir   string // tracefs instance directory
	cpu   int
	clock string
}

// mountTracefs mounts tracefs at its usual place when it is not there yet
// (as root; the bench tools run as root anyway).
func mountTracefs() error {
	if _, err := os.Stat(filepath.Join(tracefsRoot, "instances")); err == nil {
		return nil
	}
	if err := syscall.Mount("nodev", tracefsRoot, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("tracefs not mounted at %s and mount failed: %w (mount -t tracefs nodev %s)", tracefsRoot, os.NewSyscallError("mount", err), tracefsRoot)
	}
	fmt.Fprintf(os.Stderr, "wakesplit: mounted tracefs at %s\n", tracefsRoot)
	return nil
}

// kallsym returns the address of a kernel text symbol from /proc/kallsyms
// (0 when hidden or absent).
func kallsym(name string) uint64 {
	f, err := os.Open("/proc/kallsyms") // procfs: the kernel's own file
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) >= 3 && w[2] == name {
			v, _ := strconv.ParseUint(w[0], 16, 64)
			return v
		}
	}
	return 0
}

// filters keep the trace small on a busy CPU: system calls, page faults
// and timer starts only of tasks named comm (the traced program; its
// threads share the name, except rtload's, which are named for their roles
// since issue 14: rtl-rd/<reader>, rtl-tx/…, so "rtload" also matches
// "rtl-*"), timer expiries only of sleeping tasks'
// timers (hrtimer_wakeup), wakeups only of real-time tasks. Context
// switches and timer interrupts stay unfiltered.
func filters(comm string) map[string]string {
	if len(comm) > 15 { // TASK_COMM_LEN − 1
		comm = comm[:15]
	}
	own := fmt.Sprintf("COMM == %q", comm)
	if comm == "rtload" {
		own += ` || COMM ~ "rtl-*"`
	}
	f := map[string]string{
		"raw_syscalls/sys_enter": own, "raw_syscalls/sys_exit": own,
		"exceptions/page_fault_user": own, "exceptions/page_fault_kernel": own,
		"timer/hrtimer_start": own,
		"sched/sched_waking":  "prio < 100",
	}
	if a := kallsym("hrtimer_wakeup"); a != 0 {
		f["timer/hrtimer_expire_entry"] = fmt.Sprintf("function == 0x%x", a)
	}
	return f
}

// newCapture creates the instance wakesplit-<pid> and configures it:
// only cpu, the x86-tsc clock where the kernel has it (mono otherwise),
// record-tgid, bufKB per CPU, every event in events with the filters for
// program comm. On error the instance is removed.
func newCapture(cpu, bufKB int, comm string) (c *capture, err error) {
	if err := mountTracefs(); err != nil {
		return nil, err
	}
	c = &capture{dir: filepath.Join(tracefsRoot, "instances", fmt.Sprintf("wakesplit-%d", os.Getpid())), cpu: cpu}
	if err := os.Mkdir(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("tracefs instance: %w", err)
	}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	c.clock = "mono"
	if b, err := os.ReadFile(filepath.Join(c.dir, "trace_clock")); err == nil && strings.Contains(string(b), "x86-tsc") {
		c.clock = "x86-tsc"
	}
	mask := fmt.Sprintf("%x", uint64(1)<<cpu)
	for _, kv := range [][2]string{{"tracing_on", "0"}, {"trace_clock", c.clock}, {"tracing_cpumask", mask},
		{"buffer_size_kb", fmt.Sprint(bufKB)}, {"trace_options", "record-tgid"}, {"trace_options", "irq-info"}} {
		if err := c.write(kv[0], kv[1]); err != nil {
			return c, err
		}
	}
	flt := filters(comm)
	for _, ev := range events {
		if f, ok := flt[ev]; ok {
			if err := c.write(filepath.Join("events", ev, "filter"), f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return c, err
			}
		}
		if err := c.write(filepath.Join("events", ev, "enable"), "1"); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(os.Stderr, "wakesplit: event %s not on this kernel, skipped\n", ev)
				continue
			}
			return c, err
		}
	}
	return c, nil
}

func (c *capture) write(name, v string) error {
	f, err := os.OpenFile(filepath.Join(c.dir, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("tracefs %s: %w", name, err)
	}
	if _, err := f.WriteString(v); err != nil {
		f.Close()
		return fmt.Errorf("tracefs %s = %s: %w", name, v, err)
	}
	return f.Close()
}

// close stops tracing and removes the instance (idempotent).
func (c *capture) close() {
	if c == nil || c.dir == "" {
		return
	}
	_ = c.write("tracing_on", "0")
	if err := os.Remove(c.dir); err != nil {
		fmt.Fprintf(os.Stderr, "wakesplit: remove %s: %v (rmdir it by hand)\n", c.dir, err)
	}
	c.dir = ""
}

// run traces argv: tracing on, the command (stdout to stdout, stderr
// passed through; SIGINT and SIGTERM forwarded to it), tracing off. It
// returns the command's pid.
func (c *capture) run(argv []string, stdout io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := c.write("tracing_on", "1"); err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	for wait := true; wait; {
		select {
		case s := <-sig:
			_ = cmd.Process.Signal(s)
		case err = <-done:
			wait = false
		}
	}
	if e := c.write("tracing_on", "0"); e != nil && err == nil {
		err = e
	}
	if err != nil {
		return cmd.Process.Pid, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return cmd.Process.Pid, nil
}

// lost reads the CPU's ring-buffer stats: events overwritten or dropped.
func (c *capture) lost() string {
	f, err := os.Open(filepath.Join(c.dir, "per_cpu", fmt.Sprintf("cpu%d", c.cpu), "stats")) // tracefs: the kernel's own file
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	var parts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		if k == "overrun" || k == "dropped events" {
			parts = append(parts, k+"="+strings.TrimSpace(v))
		}
	}
	return strings.Join(parts, " ")
}

// save writes a header (pid, cpu, clock, lost events, the command) and the
// instance's trace text to path, which must not exist (O_EXCL, no
// symlink followed).
func (c *capture) save(path string, pid int, argv []string) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	in, err := os.Open(filepath.Join(c.dir, "trace")) // tracefs: the kernel's own file
	if err != nil {
		out.Close()
		return err
	}
	defer in.Close()
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "# wakesplit: pid=%d cpu=%d clock=%s %s\n# wakesplit: cmd=%s\n", pid, c.cpu, c.clock, c.lost(), strings.Join(argv, " "))
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// traceCommand is `wakesplit trace`: capture one command into path.
// comm names the program's tasks for the filters ("" = argv[0]'s base name).
func traceCommand(cpu, bufKB int, path string, argv []string, comm string, stdout io.Writer) error {
	if comm == "" {
		comm = filepath.Base(argv[0])
	}
	c, err := newCapture(cpu, bufKB, comm)
	if err != nil {
		return err
	}
	defer c.close()
	pid, err := c.run(argv, stdout)
	if err != nil {
		return err
	}
	if l := c.lost(); !strings.HasSuffix(l, "overrun=0 dropped events=0") && l != "" {
		fmt.Fprintf(os.Stderr, "wakesplit: ring buffer lost events (%s): raise -buffer-kb\n", l)
	}
	return c.save(path, pid, argv)
}
