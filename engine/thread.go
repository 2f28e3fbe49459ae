package engine

import "github.com/rtload/rtload/rt"

// startThread starts one of the trial's threads with s applied and read
// back (rt.Start) and runs setup on it before the caller goes on: what
// needs the thread pinned and at its policy (binding its cycles clock,
// opening its per-call counters). It returns once setup has returned,
// with what the kernel applied and setup's error; body runs next on the
// same thread, only when setup succeeded (a thread whose setup failed
// exits). setup nil is none. The one handshake of every thread the engine
// starts and reads back: readers, senders, probes.
func startThread(s rt.Sched, setup func(rt.Applied) error, body func(rt.Applied)) (*rt.Thread, rt.Applied, error) {
	type ready struct {
		a   rt.Applied
		err error
	}
	ch := make(chan ready, 1)
	th, err := rt.Start(s, func(a rt.Applied) {
		var serr error
		if setup != nil {
			serr = setup(a)
		}
		ch <- ready{a, serr}
		if serr == nil {
			body(a)
		}
	})
	if err != nil {
		return nil, rt.Applied{}, err
	}
	r := <-ch
	return th, r.a, r.err
}
