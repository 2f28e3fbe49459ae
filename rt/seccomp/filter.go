package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/rtload/rtload/results"
)

// Filter is one Config compiled, ready to be installed on a thread.
type Filter struct {
	cfg  Config
	prog []bpf.RawInstruction
}

// New compiles c (Program's errors).
func New(c Config) (*Filter, error) {
	prog, err := Program(c)
	if err != nil {
		return nil, err
	}
	return &Filter{cfg: c, prog: prog}, nil
}

// Len is the program's length in BPF instructions (0 for None).
func (f *Filter) Len() int { return len(f.prog) }

// Install installs the filter on the calling thread, tid (Install's
// rules: the thread must stay locked until it exits), and returns what
// the kernel shows of it: the thread's seccomp state before and after,
// NotAsAsked saying how it differs from what was asked. It returns nil
// for None on a thread with no inherited filter (nothing to record).
// Errors: reading the thread's status before (Install needs to know what
// the thread inherited), and Install's own.
func (f *Filter) Install(tid int) (*results.Seccomp, error) {
	before, err := ReadStatus(tid)
	if err != nil {
		return nil, err
	}
	if f.cfg.Profile == None && before.Filters <= 0 && before.Mode == 0 {
		return nil, nil
	}
	if err := Install(f.prog); err != nil {
		return nil, fmt.Errorf("seccomp %s: %w", f.cfg.Profile, err)
	}
	r := &results.Seccomp{Profile: f.cfg.Profile.String(), Instructions: len(f.prog), Inherited: before.Filters}
	if f.cfg.Profile == RuntimeDefault {
		r.Source = RuntimeDefaultSource + "; " + RuntimeDefaultSimplified
	}
	after, err := ReadStatus(tid)
	if err != nil {
		r.Mode, r.Filters, r.NotAsAsked = -1, -1, "not read back: "+err.Error()
		return r, nil
	}
	r.Mode, r.Filters, r.NoNewPrivs = after.Mode, after.Filters, after.NoNewPrivs
	r.NotAsAsked = notAsAsked(f.cfg.Profile, before, after)
	return r, nil
}

// notAsAsked says how a thread's state after installing a filter of
// profile p differs from what was asked, "" when it does not: a filter
// means mode 2 and one filter more than before; none, nothing more.
// Without a Seccomp_filters line (before Linux 5.9) only the mode is
// checked.
func notAsAsked(p Profile, before, after Status) string {
	want := 0
	if p != None {
		want = 1
	}
	switch {
	case want == 1 && after.Mode != 2:
		return fmt.Sprintf("thread shows Seccomp %d after loading the %s filter, want 2 (filter)", after.Mode, p)
	case before.Filters >= 0 && after.Filters != before.Filters+want:
		return fmt.Sprintf("thread shows %d seccomp filters after loading %s, want %d (%d inherited + %d)", after.Filters, p, before.Filters+want, before.Filters, want)
	}
	return ""
}
