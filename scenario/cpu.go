package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CPU is a reader's CPU: a CPU number (0, 1, …), or CPUAuto, written
// `cpu: auto`, for "a CPU this process may use, chosen by rtload"
// (ChooseCPUs). It decodes from YAML and --set as a number or "auto", and
// encodes to JSON as a number, or "auto" while unresolved.
type CPU int

// CPUAuto is the value of `cpu: auto`. It is no CPU number: ResolveCPUs
// replaces it before a run, and the engine never sees it.
const CPUAuto CPU = math.MinInt32

const cpuAllowed = "auto, or a CPU number ≥ 0"

// String returns "auto" or the number.
func (c CPU) String() string {
	if c == CPUAuto {
		return "auto"
	}
	return strconv.Itoa(int(c))
}

// MarshalText encodes c as String does.
func (c CPU) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText decodes "auto" or an integer.
func (c *CPU) UnmarshalText(text []byte) error {
	if p := c.parseText(string(text)); p != nil {
		return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
	}
	return nil
}

// MarshalJSON encodes a CPU number as a JSON number (summary.json keeps
// its shape) and CPUAuto as "auto".
func (c CPU) MarshalJSON() ([]byte, error) {
	if c == CPUAuto {
		return []byte(`"auto"`), nil
	}
	return strconv.AppendInt(nil, int64(c), 10), nil
}

// UnmarshalJSON accepts a number or the string "auto".
func (c *CPU) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return c.UnmarshalText([]byte(s))
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	*c = CPU(n)
	return nil
}

// parseText decodes "auto" or an integer; a negative number decodes, and
// Validate reports it. c is left unchanged on failure.
func (c *CPU) parseText(s string) *problem {
	t := strings.TrimSpace(s)
	if t == "auto" {
		*c = CPUAuto
		return nil
	}
	n, err := strconv.ParseInt(t, 10, 32)
	if err != nil || n == int64(CPUAuto) {
		return &problem{msg: fmt.Sprintf("expected a CPU number or auto, got %q", s), allowed: cpuAllowed}
	}
	*c = CPU(n)
	return nil
}

// CPUChoice is one reader whose `cpu: auto` was resolved.
type CPUChoice struct {
	// Reader is the reader's name; Index its position in readers.
	Reader string `json:"reader"`
	Index  int    `json:"index"`
	// CPU is the CPU chosen.
	CPU int `json:"cpu"`
	// Why says how, e.g. "the highest allowed CPU no other reader uses
	// (allowed 0-3; CPU 0 left to housekeeping)".
	Why string `json:"why"`
}

// ChooseCPUs resolves every `cpu: auto` of readers, in reader order, from
// allowed (the CPUs this process may use: sched_getaffinity(2), which in a
// container is its cpuset). The rule:
//
//   - CPUs are reserved for rtload's own machinery (the Go runtime's
//     threads, main, the writer): housekeeping when given, else the lowest
//     allowed CPU, which is usually the boot CPU, the one that keeps the
//     kernel's timekeeping (it can never be nohz_full) and, by default,
//     most unbound interrupts.
//   - Each auto reader takes the highest allowed CPU that no other reader
//     (fixed, or auto before it) uses and that is not reserved.
//   - When none is left it takes a reserved CPU no reader uses (with a
//     note that housekeeping shares it); with one allowed CPU, that one.
//   - When every allowed CPU already has a reader it is an error: two
//     readers at the same SCHED_FIFO priority on one CPU delay each
//     other, and the scenario should say so with fixed CPUs.
//
// Fixed CPUs are not checked here (Validate does). It returns one choice
// per auto reader; the error is an ErrorList-ready *Error with Path
// "readers[i].cpu" and no position. Pure: no syscall, no clock.
func ChooseCPUs(allowed, housekeeping []int, readers []Reader) ([]CPUChoice, *Error) {
	allowed = slices.Compact(slices.Sorted(slices.Values(allowed)))
	used := map[int]bool{}
	for _, r := range readers {
		if r.CPU != CPUAuto {
			used[int(r.CPU)] = true
		}
	}
	reserved := map[int]bool{}
	for _, c := range housekeeping {
		reserved[c] = true
	}
	if len(housekeeping) == 0 && len(allowed) > 0 {
		reserved[allowed[0]] = true
	}
	var out []CPUChoice
	for i, r := range readers {
		if r.CPU != CPUAuto {
			continue
		}
		if len(allowed) == 0 {
			return out, &Error{Path: fmt.Sprintf("readers[%d].cpu", i), Msg: "auto: the CPUs this process may use are unknown",
				Allowed: "a fixed CPU number"}
		}
		cpu, why := pickCPU(allowed, used, reserved)
		if cpu < 0 {
			return out, &Error{Path: fmt.Sprintf("readers[%d].cpu", i),
				Msg:     fmt.Sprintf("auto: every allowed CPU (%s) already has a reader", cpuListText(allowed)),
				Allowed: "fewer readers, or fixed CPUs (readers may share a CPU when given so)"}
		}
		used[cpu] = true
		out = append(out, CPUChoice{Reader: r.Name, Index: i, CPU: cpu, Why: why + " (allowed " + cpuListText(allowed) + ")"})
	}
	return out, nil
}

// pickCPU applies ChooseCPUs' rule to one reader: -1 when no CPU is left.
func pickCPU(allowed []int, used, reserved map[int]bool) (int, string) {
	if len(allowed) == 1 && !used[allowed[0]] {
		return allowed[0], "the only allowed CPU; rtload's own threads share it"
	}
	for _, c := range slices.Backward(allowed) {
		if !used[c] && !reserved[c] {
			return c, "the highest allowed CPU no other reader uses, housekeeping kept off it"
		}
	}
	for _, c := range allowed {
		if !used[c] {
			return c, "no CPU apart from housekeeping's is free: shares it with rtload's own threads"
		}
	}
	return -1, ""
}

// ResolveCPUs replaces every `cpu: auto` of s's readers by ChooseCPUs'
// choice (housekeeping_cpus, when given, are the reserved CPUs) and marks
// the reader AutoCPU, so that summary.json shows both the CPU and that
// rtload chose it. Call it after Validate, on the spec and on every trial
// of Expand (a variant may set a reader's cpu to auto), before the run. A
// spec without auto readers is left as it is. The error is an ErrorList
// naming the reader's cpu field.
func (s *Spec) ResolveCPUs(allowed []int) ([]CPUChoice, error) {
	choices, e := ChooseCPUs(allowed, s.HousekeepingCPUs, s.Readers)
	if e != nil {
		p := s.posOf(e.Path)
		e.File, e.Line, e.Col = s.File, p.Line, p.Col
		return nil, ErrorList{e}
	}
	for _, c := range choices {
		s.Readers[c.Index].CPU = CPU(c.CPU)
		s.Readers[c.Index].AutoCPU = true
	}
	return choices, nil
}

// cpuListText lists CPUs for a message, "0,1,2,3": the first
// maxListed, then how many there are in all (the kernel's "0-3" ranges
// are rt's and sysinfo's to print; this package is stdlib only).
func cpuListText(cpus []int) string {
	if len(cpus) == 0 {
		return "none"
	}
	parts := make([]string, 0, min(len(cpus), maxListed))
	for _, c := range cpus[:min(len(cpus), maxListed)] {
		parts = append(parts, strconv.Itoa(c))
	}
	s := strings.Join(parts, ",")
	if len(cpus) > maxListed {
		s += fmt.Sprintf(",… (%d CPUs)", len(cpus))
	}
	return s
}

// maxListed bounds the CPUs a message lists.
const maxListed = 16
