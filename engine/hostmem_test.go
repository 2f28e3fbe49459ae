package engine

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/rtload/rtload/rt"
)

// TestReadHostMemory: MemAvailable, or the room under the cgroup's
// memory limit when lower (v2 and v1; the namespace's mount root when the
// path is not under the mount); "max" is no limit.
func TestReadHostMemory(t *testing.T) {
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       24683652 kB\nMemFree:        22890136 kB\nMemAvailable:   24061052 kB\n")}
	for _, tt := range []struct {
		name string
		fs   fstest.MapFS
		want hostMemory
	}{
		{"meminfo only", fstest.MapFS{"proc/meminfo": meminfo}, hostMemory{24061052 << 10, "MemAvailable in /proc/meminfo"}},
		{"cgroup v2 limit", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/box\n")},
			"sys/fs/cgroup/box/memory.max": {Data: []byte("2147483648\n")}, "sys/fs/cgroup/box/memory.current": {Data: []byte("1073741824\n")}},
			hostMemory{1 << 30, "cgroup /box: memory.max − memory.current"}},
		{"cgroup v2 without a limit", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/box\n")},
			"sys/fs/cgroup/box/memory.max": {Data: []byte("max\n")}, "sys/fs/cgroup/box/memory.current": {Data: []byte("1073741824\n")}},
			hostMemory{24061052 << 10, "MemAvailable in /proc/meminfo"}},
		{"cgroup v1 in a namespace", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("5:cpu,cpuacct:/\n4:memory:/docker/3f2a\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("536870912\n")}, "sys/fs/cgroup/memory/memory.usage_in_bytes": {Data: []byte("268435456\n")}},
			hostMemory{256 << 20, "cgroup /docker/3f2a: memory.limit_in_bytes − memory.usage_in_bytes"}},
		{"nothing readable", fstest.MapFS{}, hostMemory{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := readHostMemory(tt.fs); got != tt.want {
				t.Errorf("readHostMemory = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestNoiseMemory: the fresh-user report's 1024 memory threads of 16 GiB
// each are refused before anything runs, naming the entries, the total
// and the host's available memory; memory noise within half of it runs.
func TestNoiseMemory(t *testing.T) {
	const doc = `
name: mem
duration: 1s
readers: [{name: timer, endpoints: [], cpu: 1, period: 10ms}]
`
	host := hostMemory{23 << 30, "MemAvailable in /proc/meminfo"}
	for _, tt := range []struct {
		name, noise string
		want        string
	}{
		{"the report's", "noise: [{kind: memory, threads: 1024, size: 16GiB}]",
			"memory noise: noise[0] (1024 threads × 16GiB) allocate 16384.0GiB in all, more than half of the 23.0GiB this host has available (MemAvailable in /proc/meminfo): at most 11.5GiB; lower noise[].threads or noise[].size"},
		{"entries add up", "noise: [{kind: memory, threads: 4, size: 2GiB}, {kind: spin, threads: 2}, {kind: memory, threads: 2}, {kind: memory, threads: 1, size: 4GiB}]",
			"memory noise: noise[0] (4 threads × 2GiB) + noise[2] (2 threads × 64MiB) + noise[3] (1 threads × 4GiB) allocate 12.1GiB in all, more than half of the 23.0GiB this host has available (MemAvailable in /proc/meminfo): at most 11.5GiB; lower noise[].threads or noise[].size"},
		{"a variant's", "noise: [{kind: memory, threads: 1}]\nvariants: [{name: small}, {name: big, set: {noise[0].size: 12GiB}}]",
			"memory noise in variant big: noise[0] (1 threads × 12GiB) allocate 12.0GiB"},
		{"within half", "noise: [{kind: memory, threads: 2, size: 5GiB}]", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, trials := load(t, doc+tt.noise+"\n")
			err := checkNoiseMemory(trials, host)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("checkNoiseMemory = %v, want nil", err)
			case tt.want == "":
				return
			case err == nil:
				t.Fatalf("checkNoiseMemory = nil, want %q", tt.want)
			}
			if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("error\n%s\nwant it to start\n%s", got, tt.want)
			}
			if !errors.Is(err, rt.ErrNotSupported) {
				t.Error("error does not match rt.ErrNotSupported (exit 3)")
			}
		})
	}
}
