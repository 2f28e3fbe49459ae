package scenario

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Limits enforced by Validate.
const (
	maxRounds   = 1000
	maxCount    = 100000
	maxThreads  = 1024
	maxBatch    = 1024
	minSize     = 16    // sequence number + send timestamp
	maxSize     = 65507 // largest IPv4 UDP payload
	minPeriod   = Duration(100 * time.Microsecond)
	maxPriority = 99
)

// Validate checks every field against its rules and the host, and returns
// an ErrorList holding every problem, sorted by line, or nil. Each variant is
// also applied to a copy and validated; its problems (those not already in
// the base spec) are reported with Path "variants[i]: <path>". Validate never
// changes s. A Host with NumCPU ≤ 0 skips the CPU-range checks.
func (s *Spec) Validate(h Host) error {
	errs := s.check(h)
	base := map[string]bool{}
	for _, e := range errs {
		base[e.Path+"\x00"+e.Msg] = true
	}
	for i, v := range s.Variants {
		c := s.Clone()
		c.Variants = nil
		vpos := s.posOf(fmt.Sprintf("variants[%d]", i))
		if aerrs := c.applyVariant(i, v, s.posOf); len(aerrs) > 0 {
			for _, e := range aerrs {
				e.File = s.File
			}
			errs = append(errs, aerrs...)
			continue
		}
		for _, e := range c.check(h) {
			if base[e.Path+"\x00"+e.Msg] {
				continue
			}
			if !setByVariant(e.Path, v) {
				// The variant broke a field it did not set: point at it.
				e.Line, e.Col = vpos.Line, vpos.Col
			}
			e.Path = fmt.Sprintf("variants[%d]: %s", i, e.Path)
			errs = append(errs, e)
		}
	}
	return errs.err()
}

// setByVariant reports whether path is, or lies below, a key v sets.
func setByVariant(path string, v Variant) bool {
	for k := range v.Set {
		k = strings.TrimSpace(k)
		if path == k || strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[") {
			return true
		}
	}
	return false
}

// posOf returns the position of path, or of its nearest recorded parent
// (defaulted fields point at their section), or the zero Pos.
func (s *Spec) posOf(path string) Pos {
	for {
		if p, ok := s.pos[path]; ok {
			return p
		}
		if path == "" {
			return Pos{}
		}
		path = parent(path)
	}
}

// parent strips the last ".key" or "[i]" from path.
func parent(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return ""
}

// checker collects validation problems for one spec.
type checker struct {
	s    *Spec
	h    Host
	errs ErrorList
}

func (c *checker) add(path, allowed, format string, args ...any) {
	p := c.s.posOf(path)
	shown := path
	if c.s.cmdline[path] {
		shown = "--set " + path
	}
	c.errs = append(c.errs, &Error{File: c.s.File, Line: p.Line, Col: p.Col, Path: shown, Msg: fmt.Sprintf(format, args...), Allowed: allowed})
}

func (c *checker) intRange(path string, v, lo, hi int) {
	if v < lo || v > hi {
		c.add(path, fmt.Sprintf("%d–%d", lo, hi), "%d out of range", v)
	}
}

func (c *checker) oneOf(path, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	noun := path[strings.LastIndexByte(path, '.')+1:]
	c.add(path, strings.Join(allowed, ", "), "unknown %s %q", noun, v)
}

func (c *checker) cpu(path string, cpu int) {
	if c.h.NumCPU <= 0 {
		if cpu < 0 {
			c.add(path, "≥ 0", "%d out of range", cpu)
		}
		return
	}
	if cpu < 0 || cpu >= c.h.NumCPU {
		allowed := "0"
		if c.h.NumCPU > 1 {
			allowed = fmt.Sprintf("0–%d", c.h.NumCPU-1)
		}
		c.add(path, allowed, "CPU %d out of range for this host (%d CPUs)", cpu, c.h.NumCPU)
	}
}

func (c *checker) nameRef(path, name string, names []string, what string) {
	for _, n := range names {
		if n == name {
			return
		}
	}
	allowed := strings.Join(names, ", ")
	if allowed == "" {
		allowed = "none: no endpoints defined"
	}
	c.add(path, allowed, "unknown %s %q", what, name)
}

// unique reports an empty or repeated name; seen maps names to first path.
func (c *checker) unique(path, name, what string, seen map[string]string) {
	if name == "" {
		c.add(path, "a non-empty name", "empty %s name", what)
		return
	}
	if first, dup := seen[name]; dup {
		c.add(path, "unique names", "duplicate %s name %q (also %s)", what, name, first)
		return
	}
	seen[name] = path
}

// check applies every rule to s alone (variants are not applied).
func (s *Spec) check(h Host) ErrorList {
	c := &checker{s: s, h: h}
	if s.Duration < 0 {
		c.add("duration", "≥ 0 (0 = until stopped)", "%s out of range", s.Duration)
	}
	if s.Interval < 0 || (s.Interval > 0 && s.Interval < Duration(100*time.Millisecond)) {
		c.add("interval", "0 (none) or ≥ 100ms", "%s out of range", s.Interval)
	}
	if s.LogChunk != 0 && s.LogChunk < 4<<10 {
		c.add("log_chunk", "0 (no rotation) or ≥ 4KiB", "%s out of range", s.LogChunk)
	}
	if s.LogLimit != 0 && s.LogLimit < s.LogChunk*2 {
		c.add("log_limit", "0 (no cap) or ≥ 2 × log_chunk", "%s out of range", s.LogLimit)
	}
	if s.Warmup < 0 {
		c.add("warmup", "≥ 0", "%s out of range", s.Warmup)
	}
	c.oneOf("clock", s.Clock, "auto", "tsc", "monotonic", "cycles")
	c.intRange("rounds", s.Rounds, 1, maxRounds)
	if s.Repeat != 0 && s.Repeat != s.Rounds {
		c.add("repeat", "the same value as rounds, or only one of them", "repeat %d and rounds %d differ", s.Repeat, s.Rounds)
	}
	c.intRange("cpu_dma_latency", s.CPUDMALatency, -1, 1_000_000)
	if len(s.Readers) == 0 && len(s.Probes) == 0 {
		c.add("readers", "at least one reader or probe", "no readers and no probes")
	}
	c.oneOf("network.namespace", s.Network.Namespace, "host", "private")

	var epNames []string
	taps := 0
	seen := map[string]string{}
	for i, e := range s.Endpoints {
		p := fmt.Sprintf("endpoints[%d].", i)
		c.unique(p+"name", e.Name, "endpoint", seen)
		epNames = append(epNames, e.Name)
		c.oneOf(p+"kind", e.Kind, "udp", "tap")
		c.intRange(p+"count", e.Count, 1, maxCount)
		if e.Kind == "tap" {
			if e.Address != "" {
				c.add(p+"address", "leave out: tap addresses are assigned from 198.18.0.0/15", "%s set on a tap group", e.Address)
			}
			c.intRange(p+"devices", e.Devices, 1, 256)
			c.intRange(p+"mtu", e.MTU, 68, 65521)
			c.intRange(p+"queues", e.Queues, 1, 16)
			if s.Network.Namespace == "host" {
				c.add("network.namespace", "private (tap devices live only in rtload's own namespace)", "tap endpoint %s in the host namespace", e.Name)
			}
			taps += e.Devices
		} else {
			if e.Devices != 0 || e.MTU != 0 || e.Queues != 0 || e.VnetHdr {
				c.add(p+"kind", "tap (devices, mtu, queues, vnet_hdr are tap fields)", "udp group with tap fields")
			}
			if a, err := netip.ParseAddr(e.Address); err != nil {
				c.add(p+"address", "127.0.0.0/8, ::1", "%q is not an IP address", e.Address)
			} else if !a.IsLoopback() || a.Zone() != "" {
				c.add(p+"address", "127.0.0.0/8, ::1", "%s is not a loopback address", e.Address)
			}
		}
		c.intRange(p+"port", e.Port, 0, 65535)
		if e.Port > 0 && e.Port <= 65535 && e.Count >= 1 && e.Port+e.Count-1 > 65535 {
			c.add(p+"port", fmt.Sprintf("port + count - 1 ≤ 65535 (port ≤ %d for count %d)", 65536-min(e.Count, 65536), e.Count),
				"ports %d–%d exceed 65535", e.Port, e.Port+e.Count-1)
		}
	}

	if taps > 256 {
		c.add("endpoints", "≤ 256 tap devices in all (one /24 of 198.18.0.0/16 each)", "%d tap devices", taps)
	}
	kinds := map[string]Endpoint{}
	for _, e := range s.Endpoints {
		kinds[e.Name] = e
	}

	for i, t := range s.Traffic {
		p := fmt.Sprintf("traffic[%d].", i)
		c.nameRef(p+"endpoint", t.Endpoint, epNames, "endpoint")
		switch {
		case t.Interval < 0:
			c.add(p+"interval", "> 0", "%s out of range", t.Interval)
		case t.Rate < 0:
			c.add(p+"rate", "> 0", "%g out of range", t.Rate)
		case t.Interval > 0 && t.Rate > 0:
			c.add(p+"interval", "exactly one of interval and rate", "both interval (%s) and rate (%g) set", t.Interval, t.Rate)
		case t.Interval == 0 && t.Rate == 0:
			c.add(p+"interval", "exactly one of interval and rate", "neither interval nor rate set")
		}
		if t.Size < minSize || t.Size > maxSize {
			c.add(p+"size", fmt.Sprintf("%d B–%d B", minSize, maxSize), "%d B out of range", uint64(t.Size))
		}
		c.oneOf(p+"spread", t.Spread, "even", "burst", "poisson")
		if t.CPU != nil {
			c.cpu(p+"cpu", *t.CPU)
		}
	}

	seen = map[string]string{}
	for i, r := range s.Readers {
		p := fmt.Sprintf("readers[%d].", i)
		c.unique(p+"name", r.Name, "reader", seen)
		for j, ep := range r.Endpoints {
			c.nameRef(fmt.Sprintf("%sendpoints[%d]", p, j), ep, epNames, "endpoint")
		}
		cpu := r.CPU
		c.threadSched(p, &cpu, r.Policy, r.Priority)
		switch {
		case r.Period <= 0:
			c.add(p+"period", "≥ "+minPeriod.String(), "%s out of range", r.Period)
		case r.Period < minPeriod:
			c.add(p+"period", "≥ "+minPeriod.String(), "%s too short", r.Period)
		}
		c.oneOf(p+"method", r.Method, "recvfrom", "recvmsg", "recvmmsg")
		c.intRange(p+"batch", r.Batch, 1, maxBatch)
		c.oneOf(p+"overrun", r.Overrun, "skip", "catchup")
		if r.Threshold < 0 {
			c.add(p+"threshold", "≥ 0 (0 = none)", "%s out of range", r.Threshold)
		}
		if r.BreakTrace && r.Threshold == 0 {
			c.add(p+"breaktrace", "a threshold to break at", "breaktrace without threshold")
		}
		c.counters(p, r.Counters)
	}

	for i, n := range s.Noise {
		p := fmt.Sprintf("noise[%d].", i)
		c.oneOf(p+"kind", n.Kind, "spin", "memory", "syscall", "messaging", "file_write", "udp")
		if n.Kind == "messaging" {
			c.intRange(p+"threads", n.Threads, 0, maxThreads) // its groups × fds decide
		} else {
			c.intRange(p+"threads", n.Threads, 1, maxThreads)
		}
		for j, cpu := range n.CPUs {
			c.cpu(fmt.Sprintf("%scpus[%d]", p, j), cpu)
		}
		c.oneOf(p+"policy", n.Policy, "other", "fifo", "rr")
		switch n.Policy {
		case "fifo", "rr":
			c.intRange(p+"priority", n.Priority, 1, maxPriority)
			if !s.AllowRTNoise {
				c.add(p+"policy", "other; or set allow_rt_noise: true",
					"SCHED_%s %d noise can starve the machine (every CPU it runs on is lost to everything below priority %d)", strings.ToUpper(n.Policy), n.Priority, n.Priority)
			}
		default:
			if n.Priority != 0 {
				c.add(p+"priority", "0 for policy other", "%d out of range", n.Priority)
			}
		}
		c.intRange(p+"nice", n.Nice, -20, 19)
		if n.Duty.On < 0 || n.Duty.Off < 0 || (n.Duty.Off > 0 && n.Duty.On <= 0) {
			c.add(p+"duty", "on > 0 and off ≥ 0 (off 0 = always on)", "on %s off %s", n.Duty.On, n.Duty.Off)
		}
		// 0 means the kind's default for every kind parameter.
		switch n.Kind {
		case "memory":
			if n.Size != 0 && (n.Size < 2<<10 || n.Size > 16<<30) {
				c.add(p+"size", "2KiB–16GiB (0 = 64MiB)", "%s out of range", n.Size)
			}
		case "messaging":
			if n.Size > 1<<20 {
				c.add(p+"size", "1 B–1MiB (0 = 100 B)", "%s out of range", n.Size)
			}
			c.intRange(p+"groups", n.Groups, 0, 64)
			c.intRange(p+"fds", n.FDs, 0, 64)
			c.intRange(p+"loops", n.Loops, 0, 1_000_000)
		case "file_write":
			if n.Size > 1<<20 {
				c.add(p+"size", "1 B–1MiB block (0 = 256 B)", "%s out of range", n.Size)
			}
			c.intRange(p+"blocks", n.Blocks, 0, 1_000_000)
		case "udp":
			if n.Size != 0 && (n.Size < minSize || n.Size > maxSize) {
				c.add(p+"size", fmt.Sprintf("%d B–%d B (0 = 64 B)", minSize, maxSize), "%s out of range", n.Size)
			}
			if n.Rate < 0 || n.Rate > 10_000_000 {
				c.add(p+"rate", "0–10000000 messages/s per thread (0 = 10000)", "%g out of range", n.Rate)
			}
		case "syscall":
			if n.Syscall != "" {
				c.oneOf(p+"syscall", n.Syscall, "getppid", "clock_gettime", "sched_yield")
			}
		}
	}

	for i, pr := range s.Probes {
		p := fmt.Sprintf("probes[%d].", i)
		c.unique(p+"name", pr.Name, "probe", seen)
		c.oneOf(p+"kind", pr.Kind, "tap_send", "file_write", "messaging")
		if pr.Kind != "tap_send" {
			c.probeOther(p, pr)
			continue
		}
		ep, ok := kinds[pr.Endpoint]
		var tapNames []string
		for _, e := range s.Endpoints {
			if e.Kind == "tap" {
				tapNames = append(tapNames, e.Name)
			}
		}
		if !ok || ep.Kind != "tap" {
			allowed := strings.Join(tapNames, ", ")
			if allowed == "" {
				allowed = "none: no tap endpoints defined"
			}
			c.add(p+"endpoint", allowed, "%q is not a tap endpoint", pr.Endpoint)
		}
		c.intRange(p+"packets", pr.Packets, 1, 10_000_000)
		if len(pr.Size) == 0 {
			c.add(p+"size", "one or more sizes", "no sizes")
		}
		for j, sz := range pr.Size {
			hi := 65535
			if ok && ep.Kind == "tap" && ep.MTU >= 68 {
				hi = min(hi, ep.MTU+14)
			}
			if sz < 60 || int(sz) > hi {
				c.add(fmt.Sprintf("%ssize[%d]", p, j), fmt.Sprintf("60 B–%d B (frame size; ≤ mtu + 14)", hi), "%d B out of range", uint64(sz))
			}
		}
		c.threadSched(p, pr.CPU, pr.Policy, pr.Priority)
	}

	seen = map[string]string{}
	for i, v := range s.Variants {
		c.unique(fmt.Sprintf("variants[%d].name", i), v.Name, "variant", seen)
	}

	if s.Report.BucketWidth == 0 {
		c.add("report.bucket_width", "> 0", "0 out of range")
	}
	if s.Report.Overflow <= s.Report.BucketOrigin {
		c.add("report.overflow", fmt.Sprintf("> bucket_origin (%d)", s.Report.BucketOrigin), "%d out of range", s.Report.Overflow)
	}
	return c.errs
}

// counterNames are the per-call hardware counters a reader may ask for,
// perf(1)'s names (rt.CounterEvents holds the same list).
var counterNames = []string{"instructions", "cache-references", "cache-misses", "branches", "branch-misses"}

// counters checks a reader's per-call counters: known names, each once.
func (c *checker) counters(p string, names []string) {
	seen := map[string]bool{}
	for j, n := range names {
		path := fmt.Sprintf("%scounters[%d]", p, j)
		switch {
		case !slices.Contains(counterNames, n):
			c.add(path, strings.Join(counterNames, ", "), "unknown counter %q", n)
		case seen[n]:
			c.add(path, "each counter once", "counter %q listed twice", n)
		}
		seen[n] = true
	}
}

// probeOther checks the file_write and messaging probes.
func (c *checker) probeOther(p string, pr Probe) {
	c.threadSched(p, pr.CPU, pr.Policy, pr.Priority)
	switch pr.Kind {
	case "file_write":
		if pr.Block < 1 || pr.Block > 1<<20 {
			c.add(p+"block", "1 B–1MiB", "%s out of range", pr.Block)
		}
		c.intRange(p+"blocks", pr.Blocks, 1, 1_000_000)
		if pr.Duration <= 0 {
			c.add(p+"duration", "> 0", "%s out of range", pr.Duration)
		}
	case "messaging":
		c.intRange(p+"groups", pr.Groups, 1, 64)
		c.intRange(p+"fds", pr.FDs, 1, 64)
		c.intRange(p+"loops", pr.Loops, 1, 10_000_000)
		if len(pr.Size) != 1 || pr.Size[0] < 1 || pr.Size[0] > 1<<20 {
			c.add(p+"size", "one size, 1 B–1MiB (bytes per message)", "%v", pr.Size)
		}
		c.oneOf(p+"transport", pr.Transport, "socket", "pipe")
	}
}

// threadSched checks a thread's cpu (when set), policy and priority: 1–99
// for fifo/rr, 0 for other. p is the path prefix ("readers[0].").
func (c *checker) threadSched(p string, cpu *int, policy string, priority int) {
	if cpu != nil {
		c.cpu(p+"cpu", *cpu)
	}
	c.oneOf(p+"policy", policy, "fifo", "rr", "other")
	switch policy {
	case "fifo", "rr":
		c.intRange(p+"priority", priority, 1, maxPriority)
	case "other":
		if priority != 0 {
			c.add(p+"priority", "0 for policy other", "%d out of range", priority)
		}
	}
}
