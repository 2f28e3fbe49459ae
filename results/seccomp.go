package results

import (
	"fmt"
	"strconv"
)

// Seccomp is the seccomp(2) filter a reader's thread ran under
// (readers[i].seccomp), as loaded and as the kernel showed it once loaded
// (/proc/self/task/TID/status). A reader carries one when it asked for a
// filter or its thread inherited one (rtload itself under a container's
// profile).
type Seccomp struct {
	// Profile is the filter asked for: "none", "runtime-default" or
	// "allow-all".
	Profile string `json:"profile"`
	// Instructions is the length of the program loaded, in BPF
	// instructions (0 for none).
	Instructions int `json:"instructions"`
	// Source names the allowlist runtime-default compiles and what it
	// simplifies ("" for the other profiles).
	Source string `json:"source,omitempty"`
	// Mode and Filters are the thread's Seccomp (0 off, 1 strict, 2
	// filter) and Seccomp_filters (filters attached, its own and
	// inherited) lines once the filter was loaded, before its loop; −1:
	// the kernel shows none (Seccomp_filters needs Linux 5.9). Inherited
	// is Seccomp_filters before: the filters the thread had from its
	// process. NoNewPrivs is the thread's NoNewPrivs once loaded.
	Mode       int  `json:"mode"`
	Filters    int  `json:"filters"`
	Inherited  int  `json:"inherited_filters"`
	NoNewPrivs bool `json:"no_new_privs"`
	// NotAsAsked says how the thread differs from what was asked (its
	// mode not 2, not exactly one filter more than it inherited); ""
	// when it is as asked. The trial is then marked invalid.
	NotAsAsked string `json:"not_as_asked,omitempty"`
}

// String is the filter in one line, as report and compare print it:
// "runtime-default, 310 instructions (thread: Seccomp 2, 1 filter)", with
// the filters the thread inherited when there are any; "none" for a
// reader without (nil).
func (s *Seccomp) String() string {
	if s == nil {
		return "none"
	}
	out := s.Profile
	if s.Instructions > 0 {
		out += ", " + strconv.Itoa(s.Instructions) + " instructions"
	}
	filters := "? filters"
	if s.Filters >= 0 {
		filters = strconv.Itoa(s.Filters) + " filter"
		if s.Filters != 1 {
			filters += "s"
		}
	}
	out += fmt.Sprintf(" (thread: Seccomp %d, %s", s.Mode, filters)
	if s.Inherited > 0 {
		out += fmt.Sprintf(", %d inherited", s.Inherited)
	}
	return out + ")"
}
