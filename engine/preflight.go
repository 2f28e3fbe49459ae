package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// Preflight checks, before anything is built, every privilege the trials
// need and returns all that are missing at once, joined (errors.Is
// rt.ErrNoPrivilege). With allowDegraded it returns only those that
// --allow-degraded cannot replace (network namespaces, tap devices); the
// others are then noted per thread as the run degrades.
func Preflight(trials []scenario.Trial, allowDegraded bool) error {
	var errs []error
	seen := map[string]bool{}
	add := func(e *rt.PrivilegeError, degradable bool) {
		if seen[e.Op] || (degradable && allowDegraded) {
			return
		}
		seen[e.Op] = true
		errs = append(errs, e)
	}
	var rtprio, rl unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_RTPRIO, &rtprio)
	_ = unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl)
	nice := sysinfo.HasCap("CAP_SYS_NICE")
	for _, tr := range trials {
		sp := tr.Spec
		for _, r := range sp.Readers {
			if pol := schedPolicy(r.Policy); pol != rt.Other && !nice && rtprio.Cur < uint64(r.Priority) {
				add(&rt.PrivilegeError{Op: fmt.Sprintf("sched_setattr(%s %d) for reader %s", pol, r.Priority, r.Name),
					Cap: "CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority)", Degraded: "run at SCHED_OTHER and mark results degraded"}, true)
			}
		}
		for _, p := range sp.Probes {
			if pol := schedPolicy(p.Policy); pol != rt.Other && !nice && rtprio.Cur < uint64(p.Priority) {
				add(&rt.PrivilegeError{Op: fmt.Sprintf("sched_setattr(%s %d) for probe %s", pol, p.Priority, p.Name),
					Cap: "CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority)", Degraded: "run at SCHED_OTHER and mark results degraded"}, true)
			}
		}
		if len(sp.Readers) > 0 && !sysinfo.HasCap("CAP_IPC_LOCK") && rl.Cur != unix.RLIM_INFINITY {
			add(&rt.PrivilegeError{Op: "mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT)", Cap: "CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK)",
				Degraded: "run with memory unlocked (page faults may show as latency) and mark results degraded"}, true)
		}
		if sp.CPUDMALatency >= 0 && unix.Access("/dev/cpu_dma_latency", unix.W_OK) != nil {
			if _, err := os.Stat("/dev/cpu_dma_latency"); err == nil {
				add(&rt.PrivilegeError{Op: "open /dev/cpu_dma_latency", Cap: "root (the file is 0600)",
					Degraded: "let CPUs enter deep idle states (or set cpu_dma_latency: -1)"}, true)
			}
		}
		if sp.Network.Namespace == scenario.NamespacePrivate && !sysinfo.HasCap("CAP_SYS_ADMIN") {
			add(&rt.PrivilegeError{Op: "unshare(CLONE_NEWNET) for network.namespace: private", Cap: "CAP_SYS_ADMIN (run as root; --allow-degraded cannot replace a private namespace)"}, false)
		}
		for _, e := range sp.Endpoints {
			if e.Kind == scenario.EndpointTap && !sysinfo.HasCap("CAP_NET_ADMIN") {
				add(&rt.PrivilegeError{Op: "TUNSETIFF for tap endpoints", Cap: "CAP_NET_ADMIN (run as root; --allow-degraded cannot replace tap devices)"}, false)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &PreflightError{errs}
}

// PreflightError lists every missing privilege, one per line.
type PreflightError struct{ Missing []error }

func (e *PreflightError) Error() string {
	if len(e.Missing) == 1 {
		return "missing privilege: " + e.Missing[0].Error()
	}
	s := fmt.Sprintf("%d missing privileges:", len(e.Missing))
	for _, m := range e.Missing {
		s += "\n  - " + m.Error()
	}
	return s
}

// Unwrap returns the individual *rt.PrivilegeError values.
func (e *PreflightError) Unwrap() []error { return e.Missing }
