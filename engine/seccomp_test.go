package engine

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt/seccomp"
)

const seccompYAML = `
name: e2e-seccomp
duration: 1s
warmup: 100ms
endpoints:
  - {name: socks, count: 50}
traffic:
  - {endpoint: socks, interval: 10ms}
readers:
  - {name: rt, endpoints: [socks], cpu: 1, policy: fifo, priority: 80, period: 10ms}
variants:
  - {name: none, set: {readers[0].seccomp: none}}
  - {name: default-recvfrom, set: {readers[0].seccomp: runtime-default, readers[0].method: recvfrom}}
  - {name: default-recvmsg, set: {readers[0].seccomp: runtime-default, readers[0].method: recvmsg}}
  - {name: default-recvmmsg, set: {readers[0].seccomp: runtime-default, readers[0].method: recvmmsg}}
  - {name: allow-all-64, set: {readers[0].seccomp.profile: allow-all, readers[0].seccomp.instructions: 64}}
`

// threadFilters is every live thread of this process by TID, with its
// seccomp state.
func threadFilters(t *testing.T) map[int]seccomp.Status {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]seccomp.Status{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := seccomp.ReadStatus(tid); err == nil { // a thread may exit meanwhile
			out[tid] = st
		}
	}
	return out
}

// TestReaderUnderSeccomp runs a short trial under each profile: the
// reader's thread shows its filter as the kernel holds it (Seccomp 2, one
// filter more than it inherited, no_new_privs, the program's length),
// every recv call of every method succeeds under runtime-default (the
// calls of the reader and of the Go runtime on its thread are all in the
// list: an EPERM would count as an error, or stop the thread), and when
// the run is over no thread of the process carries a filter it did not
// have before: each filtered thread exited with its goroutine instead of
// going back to the Go runtime's pool.
func TestReaderUnderSeccomp(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	before := threadFilters(t)
	inherited, err := seccomp.ReadStatus(os.Getpid())
	if err != nil {
		t.Skipf("no seccomp status on this kernel: %v", err)
	}
	spec, trials := load(t, seccompYAML)
	sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"none": 0, "default-recvfrom": 310, "default-recvmsg": 310, "default-recvmmsg": 310, "allow-all-64": 64}
	if len(sum.Trials) != len(want) {
		t.Fatalf("%d trials, want %d", len(sum.Trials), len(want))
	}
	for _, tr := range sum.Trials {
		rx := tr.Readers[0]
		n := want[tr.Variant]
		if rx.Errors != 0 || rx.Data == 0 || rx.Data+rx.EAGAIN != rx.Calls {
			t.Errorf("%s: %d calls, %d data, %d EAGAIN, %d errors; want every call data or EAGAIN",
				tr.Variant, rx.Calls, rx.Data, rx.EAGAIN, rx.Errors)
		}
		sc := rx.Seccomp
		if n == 0 {
			if inherited.Mode == 0 && sc != nil {
				t.Errorf("%s: seccomp %v, want none recorded", tr.Variant, sc)
			}
			continue
		}
		if sc == nil {
			t.Errorf("%s: no seccomp recorded", tr.Variant)
			continue
		}
		if sc.Mode != 2 || sc.Instructions != n || !sc.NoNewPrivs || sc.NotAsAsked != "" ||
			(sc.Filters >= 0 && sc.Filters != sc.Inherited+1) || sc.Inherited != inherited.Filters {
			t.Errorf("%s: %+v, want Seccomp 2, %d instructions, one filter more than the %d inherited, no_new_privs", tr.Variant, *sc, n, inherited.Filters)
		}
		if tr.Marked(results.MarkInvalid) {
			t.Logf("%s marked: %s", tr.Variant, tr.MarkText(results.MarkInvalid))
		}
	}
	for tid, st := range threadFilters(t) {
		if b, ok := before[tid]; (ok && st != b) || (!ok && st.Filters != inherited.Filters) {
			t.Errorf("thread %d after the run: %+v (before: %+v, process: %+v): a filtered thread outlived its reader", tid, st, b, inherited)
		}
	}
}
