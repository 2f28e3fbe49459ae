package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// base is a small valid scenario; rows below append to or replace its parts.
const (
	baseEP  = "endpoints: [{name: e, count: 1}]\n"
	baseTr  = "traffic: [{endpoint: e, interval: 1ms}]\n"
	baseRd  = "readers: [{endpoints: [e]}]\n"
	baseDoc = baseEP + baseTr + baseRd
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // substring of the error; "" = valid
	}{
		{"base is valid", baseDoc, ""},
		{"seed-like variants are valid", baseDoc + "variants: [{name: a, set: {readers[0].method: recvmsg}}, {name: b, set: {\"readers[0].policy\": other}}]\n", ""},
		{"reader without endpoints is valid", "readers: [{}]\n", ""},
		{"ipv6 loopback is valid", "endpoints: [{count: 1, address: \"::1\"}]\n" + "readers: [{}]\n", ""},
		{"top port fits exactly", "endpoints: [{count: 36, port: 65500}]\nreaders: [{}]\n", ""},

		// Top level.
		{"duration negative", "duration: -1s\n" + baseDoc, "x.yaml:1:11: duration: -1s out of range (allowed: 0 (until stopped: a soak, --duration forever, with rotated logs and checkpoints) or up to 24h per trial)"},
		// Issue 34 row 14: --duration 1000h was accepted without a word.
		{"duration past a day", "duration: 1000h\n" + baseDoc, "x.yaml:1:11: duration: 1000h0m0s out of range (allowed: 0 (until stopped: a soak, --duration forever, with rotated logs and checkpoints) or up to 24h per trial)"},
		{"duration of a day", "duration: 24h\n" + baseDoc, ""},
		{"a variant past a day", baseDoc + "variants: [{name: long, set: {duration: 25h}}]\n", "variants[0]: duration: 25h0m0s out of range"},
		{"interval too short", "interval: 10ms\n" + baseDoc, "interval: 10ms out of range (allowed: 0 (none) or ≥ 100ms)"},
		{"log limit below two chunks", "log_chunk: 1MiB\nlog_limit: 1MiB\n" + baseDoc, "log_limit: 1MiB out of range (allowed: 0 (no cap) or ≥ 2 × log_chunk)"},
		{"reader counters are valid", baseEP + baseTr + "readers: [{endpoints: [e], counters: [instructions, cache-misses, branch-misses]}]\n", ""},
		{"reader counter unknown", baseEP + baseTr + "readers: [{endpoints: [e], counters: [instructions, cycles]}]\n",
			"x.yaml:3:53: readers[0].counters[1]: unknown counter \"cycles\" (allowed: instructions, cache-references, cache-misses, branches, branch-misses)"},
		{"reader counter twice", baseEP + baseTr + "readers: [{endpoints: [e], counters: [branches, branches]}]\n",
			"readers[0].counters[1]: counter \"branches\" listed twice (allowed: each counter once)"},
		{"breaktrace needs a threshold", baseEP + baseTr + "readers: [{endpoints: [e], cpu: 0, breaktrace: true}]\n", "readers[0].breaktrace: breaktrace without threshold (allowed: a threshold to break at)"},
		{"warmup negative", "warmup: -5ms\n" + baseDoc, "warmup: -5ms out of range (allowed: ≥ 0)"},
		{"clock unknown", "clock: rdtsc\n" + baseDoc, "x.yaml:1:8: clock: unknown clock \"rdtsc\" (allowed: auto, tsc, monotonic, cycles)"},
		{"rounds zero", "rounds: 0\n" + baseDoc, "rounds: 0 out of range (allowed: 1–1000, or auto)"},
		{"rounds too many", "rounds: 1001\n" + baseDoc, "rounds: 1001 out of range (allowed: 1–1000, or auto)"},
		{"processes", "processes: 8\n" + baseDoc, ""},
		{"processes zero", "processes: 0\n" + baseDoc, "processes: 0 out of range (allowed: 1–1000)"},
		{"processes too many", "processes: 1001\n" + baseDoc, "processes: 1001 out of range (allowed: 1–1000)"},
		{"processes in a soak", "processes: 2\nduration: 0\n" + baseDoc, "processes: 2 processes with duration 0 (allowed: 1 with duration 0 (a soak runs in one process))"},
		{"processes with rounds: auto", "processes: 2\nrounds: auto\n" + baseDoc, "processes: 2 processes with rounds: auto (allowed: 1 with rounds: auto"},
		{"processes with a profile", "processes: 2\nprofile: {enabled: true}\n" + baseDoc, "processes: 2 processes with profile (allowed: 1 with profile.enabled"},
		{"no readers", baseEP, "readers: no readers and no probes (allowed: at least one reader or probe)"},

		// Endpoints.
		{"endpoint kind", "endpoints: [{name: e, count: 1, kind: tcp}]\n" + baseTr + baseRd, "endpoints[0].kind: unknown kind \"tcp\" (allowed: udp, tap)"},
		{"tap in the host namespace", "network: {namespace: host}\nendpoints: [{name: e, count: 1, kind: tap}]\n" + baseTr + baseRd, "network.namespace: tap endpoint e in the host namespace (allowed: private"},
		{"tap address is assigned", "endpoints: [{name: e, count: 1, kind: tap, address: 10.0.0.1}]\n" + baseTr + baseRd, "endpoints[0].address: 10.0.0.1 set on a tap group (allowed: leave out: tap addresses are assigned from 198.18.0.0/15)"},
		{"tap mtu", "endpoints: [{name: e, count: 1, kind: tap, mtu: 70000}]\n" + baseTr + baseRd, "endpoints[0].mtu: 70000 out of range (allowed: 68–65521)"},
		{"tap queues", "endpoints: [{name: e, count: 1, kind: tap, queues: 0}]\n" + baseTr + baseRd, "endpoints[0].queues: 0 out of range (allowed: 1–16)"},
		{"udp with tap fields", "endpoints: [{name: e, count: 1, mtu: 9000}]\n" + baseTr + baseRd, "endpoints[0].kind: udp group with tap fields"},
		{"namespace value", "network: {namespace: shared}\n" + baseEP + baseTr + baseRd, "network.namespace: unknown namespace \"shared\" (allowed: host, private)"},
		{"probe on a udp group", baseEP + "probes: [{kind: tap_send, endpoint: e}]\n", "probes[0].endpoint: \"e\" is not a tap endpoint (allowed: none: no tap endpoints defined)"},
		{"probe size above mtu", "endpoints: [{name: t, count: 1, kind: tap, mtu: 1500}]\nprobes: [{kind: tap_send, endpoint: t, size: [64, 9000]}]\n", "probes[0].size[1]: 9000 B out of range (allowed: 60 B–1514 B (frame size; ≤ mtu + 14))"},
		{"probe packets", "endpoints: [{name: t, count: 1, kind: tap}]\nprobes: [{kind: tap_send, endpoint: t, packets: 0}]\n", "probes[0].packets: 0 out of range (allowed: 1–10000000)"},
		{"probe kind", "endpoints: [{name: t, count: 1, kind: tap}]\nprobes: [{kind: tap_recv, endpoint: t}]\n", "probes[0].kind: unknown kind \"tap_recv\" (allowed: tap_send, file_write, messaging)"},
		{"count zero", "endpoints: [{name: e, count: 0}]\n" + baseTr + baseRd, "endpoints[0].count: 0 out of range (allowed: 1–100000)"},
		{"count missing points at the section", "endpoints:\n  - name: e\n" + baseTr + baseRd, "x.yaml:2:5: endpoints[0].count: 0 out of range (allowed: 1–100000)"},
		{"count negative", "endpoints: [{name: e, count: -3}]\n" + baseTr + baseRd, "endpoints[0].count: -3 out of range (allowed: 1–100000)"},
		{"count too large", "endpoints: [{name: e, count: 100001}]\n" + baseTr + baseRd, "endpoints[0].count: 100001 out of range"},
		{"address not loopback", "endpoints: [{name: e, count: 1, address: 10.0.0.1}]\n" + baseTr + baseRd, "endpoints[0].address: 10.0.0.1 is not a loopback address (allowed: 127.0.0.0/8, ::1)"},
		{"address v6 not loopback", "endpoints: [{name: e, count: 1, address: \"fe80::1\"}]\n" + baseTr + baseRd, "endpoints[0].address: fe80::1 is not a loopback address"},
		{"address not an ip", "endpoints: [{name: e, count: 1, address: localhost}]\n" + baseTr + baseRd, "endpoints[0].address: \"localhost\" is not an IP address (allowed: 127.0.0.0/8, ::1)"},
		{"port out of range", "endpoints: [{name: e, count: 1, port: 70000}]\n" + baseTr + baseRd, "endpoints[0].port: 70000 out of range (allowed: 0–65535)"},
		{"port negative", "endpoints: [{name: e, count: 1, port: -1}]\n" + baseTr + baseRd, "endpoints[0].port: -1 out of range (allowed: 0–65535)"},
		{"ports overflow", "endpoints: [{name: e, count: 100, port: 65500}]\n" + baseTr + baseRd, "endpoints[0].port: ports 65500–65599 exceed 65535 (allowed: port + count - 1 ≤ 65535 (port ≤ 65436 for count 100))"},
		{"duplicate endpoint name", "endpoints: [{name: e, count: 1}, {name: e, count: 1}]\n" + baseTr + baseRd, "endpoints[1].name: duplicate endpoint name \"e\" (also endpoints[0].name)"},

		// Traffic.
		{"traffic unknown endpoint", baseEP + "traffic: [{endpoint: f, interval: 1ms}]\n" + baseRd, "traffic[0].endpoint: unknown endpoint \"f\" (allowed: e)"},
		{"traffic without endpoints", "traffic: [{endpoint: f, interval: 1ms}]\nreaders: [{}]\n", "traffic[0].endpoint: unknown endpoint \"f\" (allowed: none: no endpoints defined)"},
		{"interval and rate", baseEP + "traffic: [{endpoint: e, interval: 1ms, rate: 5}]\n" + baseRd, "traffic[0].interval: both interval (1ms) and rate (5) set (allowed: exactly one of interval and rate)"},
		{"neither interval nor rate", baseEP + "traffic: [{endpoint: e}]\n" + baseRd, "traffic[0].interval: neither interval nor rate set"},
		{"negative interval", baseEP + "traffic: [{endpoint: e, interval: -1ms}]\n" + baseRd, "traffic[0].interval: -1ms out of range (allowed: 1µs–24h between two messages to a socket; or leave out and set rate)"},
		{"negative rate", baseEP + "traffic: [{endpoint: e, rate: -1}]\n" + baseRd, "traffic[0].rate: -1 out of range (allowed: 1.16e-05 (one a day)–1000000 msg/s per socket; or leave out and set interval)"},
		{"interval 1µs is valid", baseEP + "traffic: [{endpoint: e, interval: 1us}]\n" + baseRd, ""},
		{"interval a day is valid", baseEP + "traffic: [{endpoint: e, interval: 24h}]\n" + baseRd, ""},
		{"rate one a day is valid", baseEP + "traffic: [{endpoint: e, rate: 0.0000116}]\n" + baseRd, ""},
		{"10 million msg/s is valid", "endpoints: [{name: e, count: 1000}]\ntraffic: [{endpoint: e, interval: 100us}]\n" + baseRd, ""},
		{"interval above a day", baseEP + "traffic: [{endpoint: e, interval: 25h}]\n" + baseRd, "traffic[0].interval: 25h0m0s out of range (allowed: 1µs–24h"},
		{"rate below one a day", baseEP + "traffic: [{endpoint: e, rate: 0.00001}]\n" + baseRd, "traffic[0].rate: 1e-05 out of range (allowed: 1.16e-05 (one a day)–1000000 msg/s per socket"},
		{"size too small", baseEP + "traffic: [{endpoint: e, interval: 1ms, size: 8}]\n" + baseRd, "traffic[0].size: 8 B out of range (allowed: 16 B–65507 B)"},
		{"size too large", baseEP + "traffic: [{endpoint: e, interval: 1ms, size: 64KiB}]\n" + baseRd, "traffic[0].size: 65536 B out of range (allowed: 16 B–65507 B)"},
		{"spread unknown", baseEP + "traffic: [{endpoint: e, interval: 1ms, spread: random}]\n" + baseRd, "traffic[0].spread: unknown spread \"random\" (allowed: even, burst, poisson)"},
		{"traffic cpu missing on host", baseEP + "traffic: [{endpoint: e, interval: 1ms, cpu: 5}]\n" + baseRd, "traffic[0].cpu: CPU 5 out of range for this host (2 CPUs) (allowed: 0–1)"},

		// Readers.
		{"reader unknown endpoint", baseEP + baseTr + "readers: [{endpoints: [e, g]}]\n", "readers[0].endpoints[1]: unknown endpoint \"g\" (allowed: e)"},
		{"reader cpu missing on host", baseEP + baseTr + "readers:\n  - cpu: 5\n", "x.yaml:4:10: readers[0].cpu: CPU 5 out of range for this host (2 CPUs) (allowed: 0–1)"},
		{"reader cpu negative", baseEP + baseTr + "readers: [{cpu: -1}]\n", "readers[0].cpu: CPU -1 out of range"},
		{"duplicate reader name", baseEP + baseTr + "readers: [{name: r}, {name: r}]\n", "readers[1].name: duplicate reader name \"r\""},
		{"policy unknown", baseEP + baseTr + "readers: [{policy: deadline}]\n", "readers[0].policy: unknown policy \"deadline\" (allowed: fifo, rr, other)"},
		{"priority 120", baseEP + baseTr + "readers: [{priority: 120}]\n", "readers[0].priority: 120 out of range (allowed: 1–99)"},
		{"priority 0 for rr", baseEP + baseTr + "readers: [{policy: rr, priority: 0}]\n", "readers[0].priority: 0 out of range (allowed: 1–99)"},
		{"priority for other", baseEP + baseTr + "readers: [{policy: other, priority: 5}]\n", "readers[0].priority: 5 out of range (allowed: 0 for policy other)"},
		{"period zero", baseEP + baseTr + "readers: [{period: 0}]\n", "readers[0].period: 0s out of range (allowed: ≥ 100µs)"},
		{"period negative", baseEP + baseTr + "readers: [{period: -1ms}]\n", "readers[0].period: -1ms out of range (allowed: ≥ 100µs)"},
		{"period too short", baseEP + baseTr + "readers: [{period: 50us}]\n", "readers[0].period: 50µs too short (allowed: ≥ 100µs)"},
		{"method unknown", baseEP + baseTr + "readers: [{method: read}]\n", "readers[0].method: unknown method \"read\" (allowed: recvfrom, recvmsg, recvmmsg)"},
		{"batch zero", baseEP + baseTr + "readers: [{batch: 0}]\n", "readers[0].batch: 0 out of range (allowed: 1–1024)"},
		{"controls off is valid", baseEP + baseTr + "readers: [{endpoints: [e], controls: 0}]\n", ""},
		{"controls too many", baseEP + baseTr + "readers: [{endpoints: [e], controls: 4097}]\n", "readers[0].controls: 4097 out of range (allowed: 0–4096)"},
		{"controls negative", baseEP + baseTr + "readers: [{endpoints: [e], controls: -1}]\n", "readers[0].controls: -1 out of range (allowed: 0–4096)"},
		{"controls on a timer-only reader", "readers: [{controls: 8}]\n", "readers[0].controls: controls 8 on a timer-only reader (allowed: 0 for a reader without endpoints"},
		{"batch too large", baseEP + baseTr + "readers: [{batch: 1025}]\n", "readers[0].batch: 1025 out of range (allowed: 1–1024)"},
		{"overrun unknown", baseEP + baseTr + "readers: [{overrun: drop}]\n", "readers[0].overrun: unknown overrun \"drop\" (allowed: skip, catchup)"},

		// Noise.
		{"noise kind", baseDoc + "noise: [{kind: disk, threads: 1}]\n", "noise[0].kind: unknown kind \"disk\" (allowed: spin, memory, syscall, messaging, file_write, udp)"},
		{"rt noise needs the opt-in", baseDoc + "noise: [{kind: spin, threads: 1, policy: fifo, priority: 50}]\n", "noise[0].policy: SCHED_FIFO 50 noise can starve the machine (every CPU it runs on is lost to everything below priority 50) (allowed: other; or set allow_rt_noise: true)"},
		{"rt noise with the opt-in", baseDoc + "allow_rt_noise: true\nnoise: [{kind: spin, threads: 1, policy: fifo, priority: 120}]\n", "noise[0].priority: 120 out of range (allowed: 1–99)"},
		{"duty off without on", baseDoc + "noise: [{kind: spin, threads: 1, duty: {off: 10ms}}]\n", "noise[0].duty: on 0s off 10ms (allowed: on > 0 and off ≥ 0 (off 0 = always on))"},
		{"udp noise rate", baseDoc + "noise: [{kind: udp, threads: 1, rate: -5}]\n", "noise[0].rate: -5 out of range (allowed: 0–10000000 messages/s per thread (0 = 10000))"},
		{"syscall noise name", baseDoc + "noise: [{kind: syscall, threads: 1, syscall: fork}]\n", "noise[0].syscall: unknown syscall \"fork\" (allowed: getppid, clock_gettime, sched_yield)"},
		{"messaging probe transport", baseDoc + "probes: [{kind: messaging, transport: tcp}]\n", "probes[0].transport: unknown transport \"tcp\" (allowed: socket, pipe)"},
		{"file_write probe block", baseDoc + "probes: [{kind: file_write, block: 0}]\n", "probes[0].block: 0B out of range (allowed: 1 B–1MiB)"},
		{"noise threads zero", baseDoc + "noise: [{threads: 0}]\n", "noise[0].threads: 0 out of range (allowed: 1–1024)"},
		{"noise threads missing", baseDoc + "noise: [{kind: spin}]\n", "noise[0].threads: 0 out of range (allowed: 1–1024)"},
		{"noise threads too many", baseDoc + "noise: [{threads: 5000}]\n", "noise[0].threads: 5000 out of range"},
		// The threads of a trial, all entries together (issue 34 row 8: 12
		// entries of 1024 validated, and the run died of the Go runtime's
		// thread exhaustion after 32 s).
		{"threads at the bound are valid", baseDoc + "noise: [" + strings.Repeat("{threads: 1024}, ", 3) + "{threads: 1022}]\n", ""},
		{"threads past the bound", baseDoc + "noise:\n" + strings.Repeat("  - {kind: spin, threads: 1024}\n", 12),
			"x.yaml:8:27: noise[3].threads: a trial would run 12290 threads (readers 1, traffic senders 1, noise workers 12288, probes 0) (allowed: at most 4096 threads in a trial, all entries together: the Go runtime stops at 10000 OS threads, and rtload may need two per thread it runs)"},
		{"messaging noise past the bound", baseDoc + "noise: [{kind: messaging, groups: 64, fds: 64}]\n",
			"noise[0].groups: a trial would run 8194 threads (readers 1, traffic senders 1, noise workers 8192, probes 0)"},
		{"a variant past the bound", baseDoc + "noise: [{threads: 1}]\nvariants: [{name: many, set: {noise[0].kind: messaging, noise[0].groups: 64, noise[0].fds: 40}}]\n",
			"x.yaml:5:74: variants[0]: noise[0].groups: a trial would run 5122 threads"},
		{"noise cpu missing on host", baseDoc + "noise: [{threads: 1, cpus: [0, 7]}]\n", "noise[0].cpus[1]: CPU 7 out of range for this host (2 CPUs) (allowed: 0–1)"},
		{"noise nice", baseDoc + "noise: [{threads: 1, nice: 20}]\n", "noise[0].nice: 20 out of range (allowed: -20–19)"},

		// Variants.
		{"variant without name", baseDoc + "variants: [{set: {duration: 1s}}]\n", "variants[0].name: empty variant name (allowed: a non-empty name)"},
		{"duplicate variant", baseDoc + "variants: [{name: a}, {name: a}]\n", "variants[1].name: duplicate variant name \"a\""},
		{"variant unknown path", baseDoc + "variants:\n  - name: a\n    set: {readers[0].prority: 1}\n", "x.yaml:6:31: variants[0]: readers[0].prority: unknown field \"prority\" (allowed: name, endpoints, cpu, policy, priority, period, method, batch, overrun, max_backlog, threshold, breaktrace, counters, controls, seccomp)"},
		{"variant index out of range", baseDoc + "variants: [{name: a, set: {readers[3].cpu: 1}}]\n", "variants[0]: readers[3]: index 3 out of range (allowed: 0–0)"},
		{"variant bad value", baseDoc + "variants: [{name: a, set: {duration: soon}}]\n", "variants[0]: duration: invalid duration \"soon\""},
		{"variant sets variants", baseDoc + "variants: [{name: a, set: {variants[0].name: b}}]\n", "variants[0]: variants[0].name: a variant cannot set variants"},
		{"variant priority 120", baseDoc + "variants:\n  - name: hi\n    set: {readers[0].priority: 120}\n", "x.yaml:6:32: variants[0]: readers[0].priority: 120 out of range (allowed: 1–99)"},
		{"variant breaks a field it does not set", baseDoc + "variants:\n  - name: lo\n    set: {endpoints[0].name: f}\n", "x.yaml:5:5: variants[0]: traffic[0].endpoint: unknown endpoint \"e\" (allowed: f)"},

		// Names that become file and directory names.
		{"scenario name escapes results/", "name: ../../escaped\n" + baseDoc, "x.yaml:1:7: name: scenario name \"../../escaped\" holds a path separator (allowed: at most 64 bytes of UTF-8 without '/', '\\', control characters, and not . or ..)"},
		{"scenario name dot-dot", "name: ..\n" + baseDoc, "name: scenario name \"..\" is not a file name"},
		{"scenario name dot", "name: .\n" + baseDoc, "name: scenario name \".\" is not a file name"},
		{"scenario name backslash", "name: 'a\\b'\n" + baseDoc, "holds a path separator"},
		{"scenario name control character", "name: \"a\\tb\"\n" + baseDoc, "name: scenario name \"a\\tb\" holds a control character"},
		{"scenario name escape sequence", "name: \"run\\e[2J\"\n" + baseDoc, "holds a control character"},
		{"scenario name too long", "name: " + strings.Repeat("n", 65) + "\n" + baseDoc, "name: scenario name \"" + strings.Repeat("n", 64) + "…\" is 65 bytes long"},
		{"scenario name of 64 bytes", "name: " + strings.Repeat("n", 64) + "\n" + baseDoc, ""},
		{"scenario name with spaces and unicode", "name: \"µs test – 1\"\n" + baseDoc, ""},
		{"variant name with a slash", baseDoc + "variants: [{name: a/b}]\n", "variants[0].name: variant name \"a/b\" holds a path separator"},
		{"reader name with a slash", baseEP + baseTr + "readers: [{name: ../r, endpoints: [e]}]\n", "readers[0].name: reader name \"../r\" holds a path separator"},
		{"reader name newline", baseEP + baseTr + "readers: [{name: \"a\\nb\", endpoints: [e]}]\n", "readers[0].name: reader name \"a\\nb\" holds a control character"},
		{"variant setting a bad name", baseDoc + "variants: [{name: v, set: {name: ../x}}]\n", "variants[0]: name: scenario name \"../x\" holds a path separator"},

		// Repeat.
		{"repeat zero", "repeat: 0\n" + baseDoc, "x.yaml:1:9: repeat: 0 out of range (allowed: 1–1000)"},
		{"repeat negative", "repeat: -1\n" + baseDoc, "repeat: -1 out of range (allowed: 1–1000)"},

		// Report.
		{"bucket width zero", baseDoc + "report: {bucket_width: 0}\n", "report.bucket_width: 0 out of range (allowed: > 0)"},
		{"overflow below origin", baseDoc + "report: {bucket_origin: 100, overflow: 100}\n", "report.overflow: 100 out of range (allowed: > bucket_origin (100))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			before := s.Clone()
			err = s.Validate(Host{NumCPU: 2})
			if diff := cmp.Diff(before, s, cmp.AllowUnexported(Spec{})); diff != "" {
				t.Errorf("Validate mutated the spec (-before +after):\n%s", diff)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate passed, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant substring\n%s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false")
			}
		})
	}
}

// TestValidateExactLine pins the compiler-style format on the seed scenario
// with one value broken.
func TestValidateExactLine(t *testing.T) {
	data := strings.Replace(readSeed(t), "priority: 80", "priority: 120", 1)
	s, err := Load("configs/laight-450.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(Host{NumCPU: 2})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("Validate = %v, want one problem", err)
	}
	const want = "configs/laight-450.yaml:23:15: readers[0].priority: 120 out of range (allowed: 1–99)"
	if got := list[0].Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := err.Error(), "scenario configs/laight-450.yaml: 1 problem\n"+want; got != want {
		t.Errorf("list:\n%s\nwant\n%s", got, want)
	}
}

// TestValidateSortsAndCollects checks that every problem is reported, in
// line order.
func TestValidateSortsAndCollects(t *testing.T) {
	s, err := Load("x.yaml", []byte("readers:\n  - cpu: 9\n    priority: 0\nduration: -1s\nclock: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(Host{NumCPU: 2})
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Validate = %v", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Path)
	}
	want := []string{"readers[0].cpu", "readers[0].priority", "duration", "clock"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// TestValidateUnknownHost skips CPU range checks when NumCPU is unknown.
func TestValidateUnknownHost(t *testing.T) {
	s, err := Load("x.yaml", []byte("readers: [{cpu: 64}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(Host{}); err != nil {
		t.Errorf("Validate(Host{}) = %v", err)
	}
	if err := s.Validate(Host{NumCPU: 1}); err == nil || !strings.Contains(err.Error(), "(allowed: 0)") {
		t.Errorf("Validate(NumCPU 1) = %v", err)
	}
}

// TestValidateSendPeriod: the fresh-user report's schedules. A sender's
// interval or rate is bounded (1µs–24h a socket, 10 million msg/s over the
// endpoint's sockets), and the one problem named is the field the user
// wrote: never max_send_lag, whose default (the interval) follows it.
func TestValidateSendPeriod(t *testing.T) {
	const rateAllowed = "(allowed: 1.16e-05 (one a day)–1000000 msg/s per socket; or leave out and set interval)"
	const ivAllowed = "(allowed: 1µs–24h between two messages to a socket; or leave out and set rate)"
	for _, tt := range []struct {
		name, count, traffic, want string
	}{
		{"a message a nanosecond by rate", "1", "rate: 1000000000", "x.yaml:2:31: traffic[0].rate: 1e+09 out of range " + rateAllowed},
		{"by interval", "1", "interval: 1ns", "x.yaml:2:35: traffic[0].interval: 1ns out of range " + ivAllowed},
		{"rate 1e12 (period 0)", "1", "rate: 1e12", "x.yaml:2:31: traffic[0].rate: 1e+12 out of range " + rateAllowed},
		{"rate 1e-300 (period beyond int64 ns)", "1", "rate: 1e-300", "x.yaml:2:31: traffic[0].rate: 1e-300 out of range " + rateAllowed},
		{"interval written as 0s", "1", "interval: 0s", "x.yaml:2:35: traffic[0].interval: 0s out of range " + ivAllowed},
		{"rate written as 0", "1", "rate: 0", "x.yaml:2:31: traffic[0].rate: 0 out of range " + rateAllowed},
		{"over 10 million msg/s by rate", "450", "rate: 1000000",
			"x.yaml:2:31: traffic[0].rate: 1e+06 msg/s to each of 450 sockets is 450000000 msg/s, out of range (allowed: ≤ 22222.222222222223 msg/s per socket for 450 sockets: at most 10000000 msg/s over the endpoint's sockets (one sender thread))"},
		{"by interval", "1000", "interval: 50us",
			"x.yaml:2:35: traffic[0].interval: 50µs to each of 1000 sockets is 20000000 msg/s, out of range (allowed: ≥ 100µs for 1000 sockets: at most 10000000 msg/s over the endpoint's sockets (one sender thread))"},
		{"a bad max_send_lag written is still named", "1", "rate: 1e12, max_send_lag: 0s",
			"x.yaml:2:31: traffic[0].rate: 1e+12 out of range " + rateAllowed + "\nx.yaml:2:51: traffic[0].max_send_lag: 0s out of range (allowed: > 0 (default: the interval))"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "endpoints: [{name: e, count: " + tt.count + "}]\ntraffic: [{endpoint: e, " + tt.traffic + "}]\n" + baseRd
			s, err := Load("x.yaml", []byte(src))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			err = s.Validate(Host{NumCPU: 2})
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("Validate = %v, want an ErrorList", err)
			}
			var got []string
			for _, e := range l {
				got = append(got, e.Error())
			}
			if g := strings.Join(got, "\n"); g != tt.want {
				t.Errorf("problems\n%s\nwant\n%s", g, tt.want)
			}
		})
	}
}

// TestLoadLenientOnePass: a file with decode mistakes (a bad duration, an
// unknown key, a number that is not one) and value mistakes (out of range,
// an unknown method) lists all of them in one Validate, sorted by line,
// and nothing about the fields that did not decode beyond their own
// problem; Load still refuses the file at its decode problems alone.
func TestLoadLenientOnePass(t *testing.T) {
	src := `name: bad8
duration: 2
warmup: fast
rounds: 0
endpoints: [{count: 2}]
readers:
  - cpu: 1
    priority: 120
    method: recvmsgx
    period: -1ms
    bogus: 1
traffic:
  - rate: lots
    endpoint: ep0
`
	want := []string{
		`bad.yaml:2:11: duration: invalid duration "2"`,
		`bad.yaml:3:9: warmup: invalid duration "fast"`,
		`bad.yaml:4:9: rounds: 0 out of range`,
		`bad.yaml:8:15: readers[0].priority: 120 out of range`,
		`bad.yaml:9:13: readers[0].method: unknown method "recvmsgx"`,
		`bad.yaml:10:13: readers[0].period: -1ms out of range`,
		`bad.yaml:11:5: readers[0].bogus: unknown field "bogus"`,
		`bad.yaml:13:11: traffic[0].rate: expected a finite number, got "lots"`,
	}
	if _, err := Load("bad.yaml", []byte(src)); err == nil || strings.Count(err.Error(), "\n") != 4 {
		t.Fatalf("Load: want its 4 decode problems, got %v", err)
	}
	s, err := LoadLenient("bad.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(Host{NumCPU: 2})
	if err == nil {
		t.Fatal("Validate passes a spec with 8 mistakes")
	}
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "scenario bad.yaml: 8 problems" || len(lines) != 9 {
		t.Fatalf("want 8 problems, got:\n%s", err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i+1], w) {
			t.Errorf("problem %d: %q, want %q…", i+1, lines[i+1], w)
		}
	}
	// A --set of a field that did not decode replaces its problem.
	if err := s.Apply([]string{"duration=2s"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(Host{NumCPU: 2}); err == nil || strings.Contains(err.Error(), `duration: invalid duration "2"`) ||
		!strings.Contains(err.Error(), "7 problems") {
		t.Errorf("after --set duration=2s: %v", err)
	}
}

// TestApplyFlagNamesFlag: a value given through a flag is blamed on the
// flag, in decoding and in validation.
func TestApplyFlagNamesFlag(t *testing.T) {
	s := mustLoad(t, "endpoints: [{count: 2}]\nreaders: [{}]\n")
	err := s.ApplyFlag("--duration", "duration", "2")
	if err == nil || !strings.Contains(err.Error(), `--duration: invalid duration "2"`) || strings.Contains(err.Error(), "--set") {
		t.Errorf("ApplyFlag --duration 2: %v", err)
	}
	if err := s.ApplyFlag("--rounds", "rounds", "0"); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(Host{NumCPU: 2}); err == nil || !strings.Contains(err.Error(), "--rounds: 0 out of range") {
		t.Errorf("Validate after --rounds 0: %v", err)
	}
}

// TestCmdlineVsVariants (issue 34 row 10): a field set on the command
// line (--set, or a flag such as --duration) that a variant sets too, or
// sets a part of, is refused naming the variants: their values would run,
// while summary.json would record the command line's (on main `--set
// readers[0].method=recvmmsg` on laight-450 ran recvfrom and recvmsg,
// exited 0 and recorded recvmmsg). A field no variant sets is applied.
func TestCmdlineVsVariants(t *testing.T) {
	const variants = "variants:\n" +
		"  - {name: a, set: {readers[0].method: recvfrom}}\n" +
		"  - {name: b, set: {\"readers[0].method\": recvmsg, duration: 2s}}\n" +
		"  - {name: c, set: {readers[0].endpoints: e}}\n"
	for _, tc := range []struct {
		name       string
		flag, path string // flag "": --set
		value      string
		want       string // "" = valid
	}{
		{"a field two variants set", "", "readers[0].method", "recvmmsg",
			`x.yaml: --set readers[0].method: variants "a" and "b" set it (variants[0].set: readers[0].method; variants[1].set: readers[0].method): theirs would run, not this one (allowed: a field no variant sets; to run another value, change the variants in a copy of the scenario)`},
		{"a flag for a field one variant sets", "--duration", "duration", "1s", `--duration: variant "b" sets it (variants[1].set: duration): its value would run, not this one`},
		{"--duration past a day", "--duration", "duration", "1000h", `--duration: 1000h0m0s out of range (allowed: 0 (until stopped: a soak, --duration forever, with rotated logs and checkpoints) or up to 24h per trial)`},
		{"a part of a field a variant sets", "", "readers[0].endpoints[0]", "e", `--set readers[0].endpoints[0]: variant "c" sets it`},
		{"a field no variant sets", "", "readers[0].cpu", "0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load("x.yaml", []byte(baseDoc+variants))
			if err != nil {
				t.Fatal(err)
			}
			if tc.flag == "" {
				err = s.Apply([]string{tc.path + "=" + tc.value})
			} else {
				err = s.ApplyFlag(tc.flag, tc.path, tc.value)
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			err = s.Validate(Host{NumCPU: 2})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want valid", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid)):
				t.Errorf("Validate: %v\nwant %q", err, tc.want)
			}
		})
	}
}
