package rt

import (
	"errors"
	"fmt"
)

// ErrNoPrivilege is matched (errors.Is) by every *PrivilegeError.
var ErrNoPrivilege = errors.New("missing privilege")

// ErrNotSupported means the machine lacks a feature (e.g. an invariant TSC).
var ErrNotSupported = errors.New("not supported")

// PrivilegeError says which operation needed which capability.
type PrivilegeError struct {
	// Op is the call and its argument, e.g. "sched_setattr(SCHED_FIFO 80)".
	Op string
	// Cap is the capability that would allow it, e.g. "CAP_SYS_NICE".
	Cap string
	// Degraded says what --allow-degraded gives up instead.
	Degraded string
	// Hint, when set, says how to get the privilege where "run as root"
	// is not the answer, e.g. the container setting to change: "in this
	// container (docker): start it with --cap-add SYS_NICE".
	Hint string
	Err  error
}

func (e *PrivilegeError) Error() string {
	s := fmt.Sprintf("%s: needs %s", e.Op, e.Cap)
	switch {
	case e.Hint != "" && e.Degraded != "":
		s += fmt.Sprintf("; %s (or --allow-degraded to %s)", e.Hint, e.Degraded)
	case e.Hint != "":
		s += "; " + e.Hint
	case e.Degraded != "":
		s += fmt.Sprintf(" (run as root, or --allow-degraded to %s)", e.Degraded)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches ErrNoPrivilege.
func (e *PrivilegeError) Is(target error) bool { return target == ErrNoPrivilege }

// Unwrap returns the syscall error.
func (e *PrivilegeError) Unwrap() error { return e.Err }
