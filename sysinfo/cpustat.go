package sysinfo

import (
	"bytes"
	"errors"
)

// CPUTimes is one CPU's line of /proc/stat (proc_stat(5)): the time it
// spent in each state since boot, in USER_HZ ticks (1/100 s on Linux,
// whatever CONFIG_HZ is). Steal is the time the hypervisor ran something
// else while this vCPU was runnable: 0 outside a VM and on hosts that do
// not report it. Fields the kernel does not print (steal before 2.6.11)
// are 0, and HasSteal says whether steal was there.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
	HasSteal                                              bool
}

// UserHZ is the unit of /proc/stat's times: USER_HZ, 100 per second on
// every Linux architecture (the ABI fixes it, unlike CONFIG_HZ).
const UserHZ = 100

// TickNs is one USER_HZ tick in ns: the resolution of every /proc/stat
// time.
const TickNs = 1e9 / UserHZ

var pathStat = []byte("/proc/stat\x00")

// errNoCPU says /proc/stat has no line for the CPU asked for.
var errNoCPU = errors.New("no such cpu line in /proc/stat")

// CPUTimes reads cpu's line of /proc/stat. It allocates nothing once its
// buffer holds the file.
func (p *ProcReader) CPUTimes(cpu int) (CPUTimes, error) {
	b, err := p.readProc(pathStat)
	if err != nil {
		return CPUTimes{}, err
	}
	p.want = append(p.want[:0], "cpu"...)
	p.want = appendDecimal(p.want, cpu)
	t, ok := ParseCPUTimes(b, p.want)
	if !ok {
		return CPUTimes{}, pathError("parse", pathStat, errNoCPU)
	}
	return t, nil
}

// ParseCPUTimes finds the line named name ("cpu1") in a /proc/stat text
// and reads its times; ok false when there is none or it is malformed.
func ParseCPUTimes(stat, name []byte) (t CPUTimes, ok bool) {
	for len(stat) > 0 {
		var line []byte
		line, stat, _ = bytes.Cut(stat, []byte{'\n'})
		f, rest := nextField(line)
		if !bytes.Equal(f, name) {
			continue
		}
		dst := []*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal}
		for i, d := range dst {
			f, rest = nextField(rest)
			if f == nil {
				return t, i >= 4 // user nice system idle at least
			}
			v, ok := parseDecimal(f)
			if !ok {
				return CPUTimes{}, false
			}
			*d = v
			t.HasSteal = i == 7
		}
		return t, true
	}
	return CPUTimes{}, false
}
