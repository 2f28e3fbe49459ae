package sysinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// maxProcStat bounds the /proc/stat read (about 200 bytes a CPU, then the
// interrupt counts).
const maxProcStat = 4 << 20

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture rtload builds for (proc_stat(5)).
const userHZ = 100

// CPUSteal is each CPU's steal time so far, indexed by CPU number: the
// time a hypervisor ran something else while the CPU (a vCPU) had work,
// the eighth value of its cpuN line in /proc/stat (proc_stat(5)), in steps
// of 1/USER_HZ (10 ms). A thread on a vCPU the host descheduled neither
// runs nor waits in its run queue as the guest counts them: a sender's
// 100 ms gap with no sleep, no run-queue wait and no preemption was
// exactly 10 such ticks on its CPU. CPUs missing from /proc/stat
// (offline) read 0.
type CPUSteal []time.Duration

// ReadCPUSteal reads every CPU's steal time from /proc/stat.
func ReadCPUSteal() (CPUSteal, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxProcStat))
	if err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	return parseCPUSteal(b)
}

// parseCPUSteal reads the cpuN lines of a /proc/stat text; a line with
// fewer than 8 values (a kernel before 2.6.11) reads 0 steal.
func parseCPUSteal(b []byte) (CPUSteal, error) {
	var out CPUSteal
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil || cpu < 0 || cpu >= 1<<16 {
			return nil, fmt.Errorf("/proc/stat: %q is not a cpu line", f[0])
		}
		var steal uint64
		if len(f) > 8 {
			if steal, err = strconv.ParseUint(f[8], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/stat: %s steal %q: %w", f[0], f[8], err)
			}
		}
		for len(out) <= cpu {
			out = append(out, 0)
		}
		out[cpu] = time.Duration(steal) * (time.Second / userHZ)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	return out, nil
}

// Sub is the steal from o to s, CPU by CPU (s's length).
func (s CPUSteal) Sub(o CPUSteal) CPUSteal {
	out := make(CPUSteal, len(s))
	for i, v := range s {
		if i < len(o) {
			v -= o[i]
		}
		out[i] = max(v, 0)
	}
	return out
}

// On is the steal of the CPUs listed (all of them when cpus is empty).
func (s CPUSteal) On(cpus []int) time.Duration {
	var d time.Duration
	if len(cpus) == 0 {
		for _, v := range s {
			d += v
		}
		return d
	}
	for _, c := range cpus {
		if c >= 0 && c < len(s) {
			d += s[c]
		}
	}
	return d
}
