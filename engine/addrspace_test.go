package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/sysinfo"
)

// TestCheckAddressSpace: a run is refused under RLIMIT_AS only when its
// estimate does not fit, and the refusal names the limit, each part of
// the estimate and the ulimit -v to give. Fixtures are this machine's
// measured figures (VmSize at start 1.22 GiB statically linked; a cgo
// build's threads take 8 MiB stacks and up to 16 malloc arenas on 2 CPUs).
func TestCheckAddressSpace(t *testing.T) {
	const doc = `
name: as
duration: 1s
endpoints: [{name: socks, count: 4}]
traffic: [{endpoint: socks, interval: 20ms}]
readers: [{name: rt, endpoints: [socks], cpu: 1, period: 10ms}]
noise: [{kind: spin, threads: 5}]
`
	static := sysinfo.AddressSpace{Limit: 1536 << 20, VMSize: 1250 << 20, Threads: 5, StackBytes: 8 << 20, ArenaMax: 16}
	cgo := static
	cgo.Glibc = true
	unlimited := static
	unlimited.Limit = 0
	for _, tt := range []struct {
		name  string
		a     sysinfo.AddressSpace
		extra string
		want  []string // substrings; none: fits
	}{
		{"unlimited", unlimited, "", nil},
		{"static build fits 1.5 GiB", static, "", nil},
		{"a static soak does not: its heap grows by the GC headroom", static, "interval: 1s\n",
			[]string{"RLIMIT_AS (ulimit -v) is 1.50GiB (1572864 KiB)", "1.22GiB mapped now", "256.0MiB a soak's heap may grow before it collects", "(ulimit -v ", "ulimit -v unlimited"}},
		{"memory noise counts", static, "variants: [{name: mem, set: {noise[0].kind: memory, noise[0].size: 256MiB}}]\n",
			[]string{"1.2GiB of memory noise"}},
		{"a cgo build's threads and arenas", cgo, "",
			[]string{"23 more threads' stacks of 8.0MiB (RLIMIT_STACK: a cgo build's threads are pthreads)", "12 glibc malloc arenas of 64.0MiB", "CGO_ENABLED=0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, trials := load(t, doc+tt.extra)
			err := checkAddressSpace(trials, SoakHeapHeadroom, tt.a, 2)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("not refused: need %d bytes, limit %d", addressSpaceNeed(trials, SoakHeapHeadroom, tt.a, 2).total(), tt.a.Limit)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
			if !errors.Is(err, rt.ErrNotSupported) {
				t.Error("refusal does not match rt.ErrNotSupported (exit 3)")
			}
		})
	}
}
