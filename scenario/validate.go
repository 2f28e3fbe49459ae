package scenario

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits enforced by Validate.
const (
	maxCount    = 100000
	maxThreads  = 1024
	maxBatch    = 1024
	maxControls = 4096  // probe.MaxControls
	minSize     = 16    // sequence number + send timestamp
	maxSize     = 65507 // largest IPv4 UDP payload
	minPeriod   = Duration(100 * time.Microsecond)
	maxPriority = 99
	maxNameLen  = 64 // bytes; names end up in file and directory names

	// A sender's schedule. minSendInterval: one message to a socket per
	// µs at most; a shorter interval is shorter than the sendmmsg call
	// that sends it and than a sleep's wakeup latency, so the schedule
	// would be fiction. maxSendInterval: one a day; beyond it a run sends
	// nothing to measure. maxSenderRate: one traffic entry is one sender
	// thread, and one reaches about 180,000 msg/s here (2 CPUs, all of
	// its time in __sys_sendmmsg: bench/GAPS.md, 10,000 sockets), so 10
	// million msg/s, 50 times that, is past any one thread and still
	// measures its ceiling (a run that falls short is marked traffic not
	// as specified); 1e9 msg/s asks for a message every nanosecond.
	minSendInterval = Duration(time.Microsecond)
	maxSendInterval = Duration(24 * time.Hour)
	maxSenderRate   = 10_000_000 // msg/s, all sockets of one traffic entry
)

// The per-socket rates the send intervals allow (msg/s).
const (
	minSendRate = float64(time.Second) / float64(maxSendInterval)
	maxSendRate = float64(time.Second) / float64(minSendInterval)
)

// Validate checks every field against its rules and the host, and returns
// an ErrorList holding every problem, sorted by line, or nil. Each variant is
// also applied to a copy and validated; its problems (those not already in
// the base spec) are reported with Path "variants[i]: <path>". A problem
// seen again (the same message at the same place, as aliases and
// variants repeat them) is listed once. The work is bounded: a spec whose
// variants or trials would copy more than MaxWork entries is refused
// before any variant is applied, and checking stops after maxProblems
// problems. Validate never changes s. A Host with NumCPU ≤ 0 skips the
// CPU-range checks.
func (s *Spec) Validate(h Host) error {
	col := &collector{}
	for _, e := range s.check(h) {
		col.add(e)
	}
	if e := s.checkWork(); e != nil {
		col.add(e)
		return s.withoutHeldFields(col.list).err()
	}
	for _, e := range s.checkInterleave() {
		col.add(e)
	}
	for _, e := range s.checkCmdlineVsVariants() {
		col.add(e)
	}
	base := map[string]bool{}
	for _, e := range col.list {
		base[e.Path+"\x00"+e.Msg] = true
	}
	for i, v := range s.Variants {
		if col.full() {
			break
		}
		c := s.cloneBase()
		vpos := s.posOf(fmt.Sprintf("variants[%d]", i))
		if aerrs := c.applyVariant(i, v, s.posOf); len(aerrs) > 0 {
			for _, e := range aerrs {
				e.File = s.File
				col.add(e)
			}
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
			col.add(e)
		}
	}
	return s.withoutHeldFields(col.list).err()
}

// checkCmdlineVsVariants refuses a field set on the command line (--set,
// or a flag such as --duration) that a variant sets too, or sets a part
// of: the variant's value would run in its trials, not the command
// line's, while the spec (and summary.json's record of it) would say the
// command line's. Issue 34: `--set readers[0].method=recvmmsg` on
// laight-450 ran recvfrom and recvmsg, exited 0, and summary.json
// recorded recvmmsg. The error names every variant that sets it.
func (s *Spec) checkCmdlineVsVariants() []*Error {
	var errs []*Error
	for _, path := range slices.Sorted(maps.Keys(s.cmdline)) {
		var names, keys []string
		for i, v := range s.Variants {
			for _, k := range slices.Sorted(maps.Keys(v.Set)) {
				vk := strings.TrimSpace(k)
				if _, norm, e := s.field(vk); e == nil {
					vk = norm
				}
				if under(path, vk) || under(vk, path) {
					names = append(names, strconv.Quote(v.Name))
					keys = append(keys, fmt.Sprintf("variants[%d].set: %s", i, vk))
					break
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		who, theirs := "variant "+names[0]+" sets it", "its value"
		if len(names) > 1 {
			who, theirs = "variants "+strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1]+" set it", "theirs"
		}
		errs = append(errs, &Error{File: s.File, Path: s.cmdline[path],
			Msg:     fmt.Sprintf("%s (%s): %s would run, not this one", who, strings.Join(keys, "; "), theirs),
			Allowed: "a field no variant sets; to run another value, change the variants in a copy of the scenario"})
	}
	return errs
}

// withoutHeldFields drops from l Validate's own problems with a field that
// did not decode (s.held names it): its value is a zero or a default, not
// the file's. The held problems themselves stay.
func (s *Spec) withoutHeldFields(l ErrorList) ErrorList {
	if len(s.held) == 0 {
		return l
	}
	return slices.DeleteFunc(l, func(e *Error) bool {
		if slices.Contains(s.held, e) {
			return false
		}
		path := e.Path
		if _, rest, ok := strings.Cut(path, ": "); ok && strings.HasPrefix(path, "variants[") {
			path = rest
		}
		return slices.ContainsFunc(s.held, func(h *Error) bool { return under(path, h.Path) })
	})
}

// under reports whether path is field or a field below it:
// "readers[0].cpu" is under "readers[0]" and "readers", not under "read".
func under(path, field string) bool {
	if field == "" || !strings.HasPrefix(path, field) {
		return false
	}
	rest := path[len(field):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// checkWork refuses a spec whose variants or trials would copy more than
// MaxWork entries (see size): each variant is validated on a full copy,
// and Expand makes one copy per trial.
func (s *Spec) checkWork() *Error { return s.checkWorkRounds(s.Rounds.planned()) }

// checkWorkRounds is checkWork for a run of rounds rounds.
func (s *Spec) checkWorkRounds(rounds int) *Error {
	size, vsize := s.size(), 0
	for _, v := range s.Variants {
		vsize += 1 + len(v.Set)
	}
	if n := len(s.Variants) + 1; n*size > MaxWork {
		p := s.posOf("variants")
		return &Error{File: s.File, Line: p.Line, Col: p.Col, Path: "variants",
			Msg:     fmt.Sprintf("%d variants of a spec of %d entries exceed the work budget", len(s.Variants), size),
			Allowed: fmt.Sprintf("(variants + 1) × entries ≤ %d: at most %d variants of this spec", MaxWork, max(0, MaxWork/size-1))}
	}
	trials := max(1, rounds) * max(1, len(s.Variants))
	if s.Profile.Enabled {
		trials *= 2 // a profiled trial after each timed one
	}
	if trials*(size+vsize) > MaxWork {
		p := s.posOf("rounds")
		return &Error{File: s.File, Line: p.Line, Col: p.Col, Path: "rounds",
			Msg:     fmt.Sprintf("%d trials (rounds × variants) of a spec of %d entries exceed the work budget", trials, size+vsize),
			Allowed: fmt.Sprintf("trials × entries ≤ %d: at most %d trials of this spec", MaxWork, MaxWork/(size+vsize))}
	}
	return nil
}

// size counts the entries of s that a copy duplicates: list items and the
// items of their lists (variants apart), plus one for the top level.
func (s *Spec) size() int {
	r := s.Requires
	n := 1 + len(s.Endpoints) + len(s.HousekeepingCPUs) + len(r.Config) + len(r.Cmdline) + len(r.Features)
	for _, t := range s.Traffic {
		n += 1 + len(t.CPUs)
	}
	for _, r := range s.Readers {
		n += 1 + len(r.Endpoints)
	}
	for _, z := range s.Noise {
		n += 1 + len(z.CPUs)
	}
	for _, p := range s.Probes {
		n += 1 + len(p.Size)
	}
	return n
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
	s   *Spec
	h   Host
	col collector
}

func (c *checker) add(path, allowed, format string, args ...any) {
	p := c.s.posOf(path)
	shown := path
	if l := c.s.cmdline[path]; l != "" {
		shown = l
	}
	c.col.add(&Error{File: c.s.File, Line: p.Line, Col: p.Col, Path: shown, Msg: fmt.Sprintf(format, args...), Allowed: allowed})
}

func (c *checker) intRange(path string, v, lo, hi int) {
	if v < lo || v > hi {
		c.add(path, fmt.Sprintf("%d–%d", lo, hi), "%d out of range", v)
	}
}

// enum reports an enumerated value that is not one of its type's
// constants: unset (a Spec not from Load) or out of range. Values spelled
// wrong in the source are in s.invalid, reported by check.
func (c *checker) enum(path string, v interface {
	Valid() bool
	String() string
	allowed() string
}) {
	if !v.Valid() {
		noun := path[strings.LastIndexByte(path, '.')+1:]
		c.add(path, v.allowed(), "unknown %s %q", noun, v.String())
	}
}

// cpuOK reports whether cpu passes cpu's checks.
func (c *checker) cpuOK(cpu int) bool {
	if len(c.h.Allowed) > 0 {
		return slices.Contains(c.h.Allowed, cpu)
	}
	return cpu >= 0 && (c.h.NumCPU <= 0 || cpu < c.h.NumCPU)
}

// cpu checks a fixed CPU: one this process may use when the host's
// allowed set is known, else one of its CPUs when their number is known.
func (c *checker) cpu(path string, cpu int) {
	if len(c.h.Allowed) > 0 {
		if !slices.Contains(c.h.Allowed, cpu) {
			c.add(path, cpuListText(c.h.Allowed)+", the CPUs this process may use (sched_getaffinity: taskset, a container's cpuset); or auto",
				"CPU %d is not one this process may use", cpu)
		}
		return
	}
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

// cpus checks a CPU list: each CPU (the path only for a problem: lists
// run long) and no CPU twice.
func (c *checker) cpus(path string, cpus []int) {
	seen := map[int]bool{}
	for j, cpu := range cpus {
		p := fmt.Sprintf("%s[%d]", path, j)
		if !c.cpuOK(cpu) {
			c.cpu(p, cpu)
		}
		if seen[cpu] {
			c.add(p, "each CPU once", "CPU %d listed twice", cpu)
		}
		seen[cpu] = true
	}
}

func (c *checker) nameRef(path, name string, names []string, what string) {
	if slices.Contains(names, name) {
		return
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

const nameAllowed = "at most 64 bytes of UTF-8 without '/', '\\', control characters, and not . or .."

// fileName reports a name that would be unsafe in a file or directory
// name (rtload-results/<name>-<time>, wakeups-…-<variant>-…-<reader>): a path
// separator, a control character, invalid UTF-8, "." or "..", or more
// than maxNameLen bytes. An empty name is unique's to report.
func (c *checker) fileName(path, name, what string) {
	var why string
	switch {
	case name == "":
		return
	case len(name) > maxNameLen:
		why = fmt.Sprintf("is %d bytes long", len(name))
	case !utf8.ValidString(name):
		why = "is not valid UTF-8"
	case name == "." || name == "..":
		why = "is not a file name"
	case strings.ContainsAny(name, `/\`):
		why = "holds a path separator"
	case strings.ContainsFunc(name, unicode.IsControl):
		why = "holds a control character"
	default:
		return
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen] + "…"
	}
	c.add(path, nameAllowed, "%s name %q %s", what, name, why)
}

// check applies every rule to s alone (variants are not applied).
func (s *Spec) check(h Host) ErrorList {
	c := &checker{s: s, h: h}
	for _, e := range s.held {
		c.col.add(e)
	}
	for _, path := range slices.Sorted(maps.Keys(s.invalid)) {
		e := *s.invalid[path]
		c.col.add(&e)
	}
	c.top()
	epNames := c.endpoints()
	for i, t := range s.Traffic {
		c.traffic(fmt.Sprintf("traffic[%d].", i), t, epNames)
	}
	seen := map[string]string{}
	for i, r := range s.Readers {
		c.reader(fmt.Sprintf("readers[%d].", i), r, epNames, seen)
	}
	if len(h.Allowed) > 0 {
		if _, e := ChooseCPUs(h.Allowed, s.HousekeepingCPUs, s.Readers); e != nil {
			c.add(e.Path, e.Allowed, "%s", e.Msg)
		}
	}
	c.requires()
	for i, n := range s.Noise {
		c.noise(fmt.Sprintf("noise[%d].", i), n)
	}
	for i, pr := range s.Probes {
		c.probe(fmt.Sprintf("probes[%d].", i), pr, seen)
	}
	c.threads()
	seen = map[string]string{}
	for i, v := range s.Variants {
		c.unique(fmt.Sprintf("variants[%d].name", i), v.Name, "variant", seen)
		c.fileName(fmt.Sprintf("variants[%d].name", i), v.Name, "variant")
	}
	if s.Report.BucketWidth == 0 {
		c.add("report.bucket_width", "> 0", "0 out of range")
	}
	if s.Report.Overflow <= s.Report.BucketOrigin {
		c.add("report.overflow", fmt.Sprintf("> bucket_origin (%d)", s.Report.BucketOrigin), "%d out of range", s.Report.Overflow)
	}
	return c.col.list
}

// top checks the top-level fields.
func (c *checker) top() {
	s := c.s
	c.fileName("name", s.Name, "scenario")
	if s.Duration < 0 || s.Duration > MaxDuration {
		c.add("duration", trialDurationAllowed, "%s out of range", s.Duration)
	}
	if s.Interval < 0 || (s.Interval > 0 && s.Interval < minInterval) {
		c.add("interval", "0 (none) or ≥ "+minInterval.String(), "%s out of range", s.Interval)
	}
	if s.LogChunk != 0 && (s.LogChunk < minLogChunk || s.LogChunk > MaxLogChunk) {
		c.add("log_chunk", "0 (no rotation) or "+minLogChunk.String()+"–"+MaxLogChunk.String(), "%s out of range", s.LogChunk)
	}
	if s.LogLimit != 0 && s.LogLimit < s.LogChunk*2 {
		c.add("log_limit", "0 (no cap) or ≥ 2 × log_chunk", "%s out of range", s.LogLimit)
	}
	if s.Warmup < 0 {
		c.add("warmup", "≥ 0", "%s out of range", s.Warmup)
	}
	c.enum("clock", s.Clock)
	switch {
	case s.has("repeat") && !s.has("rounds"): // rounds came from repeat
		c.bounded("repeat", s.Repeat)
	default:
		if s.Rounds != RoundsAuto && (s.Rounds < 1 || s.Rounds > MaxRounds) {
			c.add("rounds", roundsAllowed, "%d out of range", int(s.Rounds))
		}
		if s.Repeat != 0 && s.Repeat != int(s.Rounds) {
			c.add("repeat", "the same value as rounds, or only one of them", "repeat %d and rounds %d differ", s.Repeat, s.Rounds)
		}
	}
	c.bounded("processes", s.Processes)
	if s.Processes > 1 {
		switch {
		case s.Duration == 0:
			c.add("processes", "1 with duration 0 (a soak runs in one process)", "%d processes with duration 0", s.Processes)
		case s.Rounds == RoundsAuto:
			c.add("processes", "1 with rounds: auto (its rule stops one process's rounds)", "%d processes with rounds: auto", s.Processes)
		case s.Profile.Enabled:
			c.add("processes", "1 with profile.enabled (profiles merge within one process)", "%d processes with profile", s.Processes)
		}
	}
	c.bounded("cpu_dma_latency", s.CPUDMALatency)
	if len(s.Readers) == 0 && len(s.Probes) == 0 {
		c.add("readers", "at least one reader or probe", "no readers and no probes")
	}
	c.enum("network.namespace", s.Network.Namespace)
	c.cpus("housekeeping_cpus", s.HousekeepingCPUs)
	// slice counts only in a soak (several variants alternate there); a
	// trial's copy keeps it without the variants.
	if s.Slice < 0 || (s.Duration == 0 && s.Slice != 0 && (s.Slice < minSlice || s.Slice < s.Interval || s.Slice <= s.Warmup)) {
		c.add("slice", fmt.Sprintf("≥ "+minSlice.String()+", ≥ interval (%s) and > warmup (%s)", s.Interval, s.Warmup), "%s out of range", s.Slice)
	}
	c.profile()
}

// requires checks the spelling of the requires block; whether the machine
// meets it is the engine's Requirements to say.
func (c *checker) requires() {
	r := c.s.Requires
	seen := map[string]string{}
	for j, o := range r.Config {
		p := fmt.Sprintf("requires.config[%d]", j)
		if first, dup := seen[o.Name()]; dup {
			c.add(p, "each option once", "%s required twice (also %s)", o.Name(), first)
		}
		seen[o.Name()] = p
	}
	for j, o := range r.Cmdline {
		p := fmt.Sprintf("requires.cmdline[%d]", j)
		if first, dup := seen[o.Name()]; dup {
			c.add(p, "each parameter once", "%s required twice (also %s)", o.Name(), first)
		}
		seen[o.Name()] = p
	}
	if _, p := parseRange(string(r.Kernel)); r.Kernel != "" && p != nil {
		c.add("requires.kernel", p.allowed, "%s", p.msg) // a Spec built in code
	}
	for j, f := range r.Features {
		p := fmt.Sprintf("requires.features[%d]", j)
		if c.s.invalid[p] == nil { // spelled wrong: already listed
			c.enum(p, f)
		}
		if slices.Index(r.Features, f) < j {
			c.add(p, "each feature once", "feature %s listed twice", f)
		}
	}
	c.bounded("requires.cpus", r.CPUs)
}

// profile checks the profile section.
func (c *checker) profile() {
	s := c.s
	if !s.Profile.Enabled {
		return
	}
	c.enum("profile.event", s.Profile.Event)
	c.bounded("profile.frequency", s.Profile.Frequency)
	if s.Duration == 0 {
		c.add("profile.enabled", "a scenario with a finite duration", "profiled trials need a duration: a soak (duration 0) never reaches them")
	}
	if len(s.Readers) == 0 {
		c.add("profile.enabled", "a scenario with readers", "no readers to profile")
	}
}

// endpoints checks the endpoint groups and returns their names.
func (c *checker) endpoints() []string {
	s := c.s
	var names []string
	taps := 0
	seen := map[string]string{}
	for i, e := range s.Endpoints {
		p := fmt.Sprintf("endpoints[%d].", i)
		c.unique(p+"name", e.Name, "endpoint", seen)
		names = append(names, e.Name)
		c.enum(p+"kind", e.Kind)
		c.bounded(p+"count", e.Count)
		if e.Kind == EndpointTap {
			if e.Address != "" {
				c.add(p+"address", "leave out: tap addresses are assigned from 198.18.0.0/15", "%s set on a tap group", e.Address)
			}
			c.bounded(p+"devices", e.Devices)
			c.bounded(p+"mtu", e.MTU)
			c.bounded(p+"queues", e.Queues)
			if s.Network.Namespace == NamespaceHost {
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
		c.bounded(p+"port", e.Port)
		if e.Port > 0 && e.Port <= 65535 && e.Count >= 1 && e.Port+e.Count-1 > 65535 {
			c.add(p+"port", fmt.Sprintf("port + count - 1 ≤ 65535 (port ≤ %d for count %d)", 65536-min(e.Count, 65536), e.Count),
				"ports %d–%d exceed 65535", e.Port, e.Port+e.Count-1)
		}
	}
	if taps > 256 {
		c.add("endpoints", "≤ 256 tap devices in all (one /24 of 198.18.0.0/16 each)", "%d tap devices", taps)
	}
	return names
}

// traffic checks one sender; p is its path prefix ("traffic[0].").
func (c *checker) traffic(p string, t Traffic, epNames []string) {
	c.nameRef(p+"endpoint", t.Endpoint, epNames, "endpoint")
	periodOK := c.sendPeriod(p, t)
	if t.Size < minSize || t.Size > maxSize {
		c.add(p+"size", fmt.Sprintf("%d B–%d B", minSize, maxSize), "%d B out of range", uint64(t.Size))
	}
	c.enum(p+"spread", t.Spread)
	if t.CPU != nil {
		c.cpu(p+"cpu", *t.CPU)
		if c.s.has(p+"cpus") && !slices.Equal(t.CPUs, []int{*t.CPU}) {
			c.add(p+"cpu", "one of cpu and cpus (cpu: N is cpus: [N])", "cpu %d and cpus %v both given", *t.CPU, t.CPUs)
		}
	} else {
		c.cpus(p+"cpus", t.CPUs)
	}
	c.threadSched(p, nil, t.Policy, t.Priority)
	c.bounded(p+"nice", t.Nice)
	if t.Nice != 0 && realTime(t.Policy) {
		c.add(p+"nice", "0 for policy fifo/rr (nice applies to policy other)", "nice %d with policy %s", t.Nice, t.Policy)
	}
	if t.RateTolerance <= 0 || t.RateTolerance > 100 {
		c.add(p+"rate_tolerance", "> 0% and ≤ 100% of the target rate (default 0.5%)", "%s out of range", t.RateTolerance)
	}
	// Left out, max_send_lag is the interval: a bad interval or rate is
	// reported as such, not again as its default.
	if t.MaxSendLag <= 0 && (periodOK || c.s.has(p+"max_send_lag")) {
		c.add(p+"max_send_lag", "> 0 (default: the interval)", "%s out of range", t.MaxSendLag)
	}
}

// sendPeriod checks a sender's interval or rate, whichever is written:
// exactly one of them, an interval of minSendInterval–maxSendInterval or
// the rate of one, and at most maxSenderRate msg/s over the endpoint's
// sockets. It reports whether the period is valid.
func (c *checker) sendPeriod(p string, t Traffic) bool {
	iv, rt := p+"interval", p+"rate"
	ivAllowed := "1µs–24h between two messages to a socket; or leave out and set rate" // minSendInterval–maxSendInterval
	rateAllowed := fmt.Sprintf("%s (one a day)–%s msg/s per socket; or leave out and set interval",
		strconv.FormatFloat(minSendRate, 'g', 3, 64), strconv.FormatFloat(maxSendRate, 'f', -1, 64))
	var perSocket float64 // msg/s
	switch {
	case t.Interval != 0 && t.Rate != 0:
		c.add(iv, "exactly one of interval and rate", "both interval (%s) and rate (%g) set", t.Interval, t.Rate)
		return false
	case t.Interval != 0 || (t.Rate == 0 && c.s.has(iv)):
		if t.Interval < minSendInterval || t.Interval > maxSendInterval {
			c.add(iv, ivAllowed, "%s out of range", t.Interval)
			return false
		}
		perSocket = float64(time.Second) / float64(t.Interval)
	case t.Rate != 0 || c.s.has(rt): // NaN too
		if !(t.Rate >= minSendRate && t.Rate <= maxSendRate) {
			c.add(rt, rateAllowed, "%g out of range", t.Rate)
			return false
		}
		perSocket = t.Rate
	default:
		c.add(iv, "exactly one of interval and rate", "neither interval nor rate set")
		return false
	}
	count := 0
	for _, e := range c.s.Endpoints {
		if e.Name == t.Endpoint && e.Count >= 1 && e.Count <= maxCount {
			count = e.Count
		}
	}
	if total := float64(count) * perSocket; total > maxSenderRate {
		why := fmt.Sprintf("at most %d msg/s over the endpoint's sockets (one sender thread)", maxSenderRate)
		if t.Interval != 0 {
			c.add(iv, fmt.Sprintf("≥ %s for %d sockets: %s", time.Duration(count)*time.Second/maxSenderRate, count, why),
				"%s to each of %d sockets is %.0f msg/s, out of range", t.Interval, count, total)
		} else {
			c.add(rt, fmt.Sprintf("≤ %s msg/s per socket for %d sockets: %s", strconv.FormatFloat(maxSenderRate/float64(count), 'f', -1, 64), count, why),
				"%g msg/s to each of %d sockets is %.0f msg/s, out of range", t.Rate, count, total)
		}
		return false
	}
	return true
}

// reader checks one reader; seen holds reader and probe names.
func (c *checker) reader(p string, r Reader, epNames []string, seen map[string]string) {
	c.unique(p+"name", r.Name, "reader", seen)
	c.fileName(p+"name", r.Name, "reader")
	for j, ep := range r.Endpoints {
		c.nameRef(fmt.Sprintf("%sendpoints[%d]", p, j), ep, epNames, "endpoint")
	}
	if r.CPU == CPUAuto {
		c.threadSched(p, nil, r.Policy, r.Priority) // ChooseCPUs' to check
	} else {
		cpu := int(r.CPU)
		c.threadSched(p, &cpu, r.Policy, r.Priority)
	}
	if slices.Contains(c.s.HousekeepingCPUs, int(r.CPU)) {
		c.add("housekeeping_cpus", fmt.Sprintf("CPUs no reader uses (reader %s is on CPU %d)", r.Name, r.CPU),
			"CPU %d is reader %s's CPU: rtload's own threads would run there", r.CPU, r.Name)
	}
	switch {
	case r.Period <= 0:
		c.add(p+"period", "≥ "+minPeriod.String(), "%s out of range", r.Period)
	case r.Period < minPeriod:
		c.add(p+"period", "≥ "+minPeriod.String(), "%s too short", r.Period)
	}
	c.enum(p+"method", r.Method)
	c.bounded(p+"batch", r.Batch)
	c.enum(p+"overrun", r.Overrun)
	switch {
	case r.Overrun == OverrunCatchUp:
		c.bounded(p+"max_backlog", r.MaxBacklog)
	case r.MaxBacklog != 0:
		c.add(p+"max_backlog", "overrun: catchup (skip never catches up)", "max_backlog %d with overrun %s", r.MaxBacklog, r.Overrun)
	}
	if r.Threshold < 0 {
		c.add(p+"threshold", "≥ 0 (0 = none)", "%s out of range", r.Threshold)
	}
	if r.BreakTrace && r.Threshold == 0 {
		c.add(p+"breaktrace", "a threshold to break at", "breaktrace without threshold")
	}
	c.counters(p, r.Counters)
	c.bounded(p+"controls", r.Controls)
	if r.Controls > 0 && len(r.Endpoints) == 0 {
		c.add(p+"controls", "0 for a reader without endpoints (it makes no recv calls to set them beside)",
			"controls %d on a timer-only reader", r.Controls)
	}
	c.enum(p+"seccomp.profile", r.Seccomp.Profile)
	switch {
	case r.Seccomp.Profile == SeccompAllowAll:
		c.bounded(p+"seccomp.instructions", r.Seccomp.Instructions)
	case r.Seccomp.Instructions != 0:
		c.add(p+"seccomp.instructions", "profile: allow-all (the other profiles' length is their own)",
			"instructions %d with profile %s", r.Seccomp.Instructions, r.Seccomp.Profile)
	}
}

// noise checks one noise entry. 0 means the kind's default for every kind
// parameter (Load fills it in).
func (c *checker) noise(p string, n Noise) {
	c.enum(p+"kind", n.Kind)
	if n.Kind == NoiseMessaging {
		c.intRange(p+"threads", n.Threads, 0, boundOf(p+"threads").hi) // its groups × fds decide
	} else {
		c.bounded(p+"threads", n.Threads)
	}
	for j, cpu := range n.CPUs {
		if !c.cpuOK(cpu) { // the path only for a problem: lists run long
			c.cpu(fmt.Sprintf("%scpus[%d]", p, j), cpu)
		}
	}
	c.enum(p+"policy", n.Policy)
	switch {
	case realTime(n.Policy):
		c.bounded(p+"priority", n.Priority)
		if !c.s.AllowRTNoise {
			c.add(p+"policy", "other; or set allow_rt_noise: true",
				"SCHED_%s %d noise can starve the machine (every CPU it runs on is lost to everything below priority %d)", strings.ToUpper(n.Policy.String()), n.Priority, n.Priority)
		}
	case n.Priority != 0:
		c.add(p+"priority", "0 for policy other", "%d out of range", n.Priority)
	}
	c.bounded(p+"nice", n.Nice)
	if n.Duty.On < 0 || n.Duty.Off < 0 || (n.Duty.Off > 0 && n.Duty.On <= 0) {
		c.add(p+"duty", "on > 0 and off ≥ 0 (off 0 = always on)", "on %s off %s", n.Duty.On, n.Duty.Off)
	}
	switch n.Kind {
	case NoiseMemory:
		if n.Size != 0 && (n.Size < minNoiseMem || n.Size > maxNoiseMem) {
			c.add(p+"size", minNoiseMem.String()+"–"+maxNoiseMem.String()+" (0 = "+defaultNoiseMemory.String()+")", "%s out of range", n.Size)
		}
	case NoiseMessaging:
		if n.Size > maxBlock {
			c.add(p+"size", "1 B–"+maxBlock.String()+" (0 = "+defaultNoiseMessage.String()+")", "%s out of range", n.Size)
		}
		c.bounded(p+"groups", n.Groups)
		c.bounded(p+"fds", n.FDs)
		c.bounded(p+"loops", n.Loops)
	case NoiseFileWrite:
		if n.Size > maxBlock {
			c.add(p+"size", "1 B–"+maxBlock.String()+" block (0 = "+defaultNoiseBlock.String()+")", "%s out of range", n.Size)
		}
		c.bounded(p+"blocks", n.Blocks)
	case NoiseUDP:
		if n.Size != 0 && (n.Size < minSize || n.Size > maxSize) {
			c.add(p+"size", fmt.Sprintf("%d B–%d B (0 = %s)", minSize, maxSize, defaultNoisePayload), "%s out of range", n.Size)
		}
		if n.Rate < 0 || n.Rate > maxNoiseRate {
			c.add(p+"rate", fmt.Sprintf("0–%d messages/s per thread (0 = %g)", maxNoiseRate, defaultNoiseRate), "%g out of range", n.Rate)
		}
	case NoiseSyscall:
		if n.Syscall != 0 {
			c.enum(p+"syscall", n.Syscall)
		}
	}
}

// threads refuses a trial whose threads (Spec.Threads) pass MaxThreads,
// pointing at the noise or probe field whose threads take the total
// past it.
func (c *checker) threads() {
	t := c.s.threadCount()
	if t.total <= MaxThreads {
		return
	}
	what := fmt.Sprintf("readers %d, traffic senders %d, noise workers %d, probes %d", t.readers, t.senders, t.noise, t.probes)
	c.add(t.over, fmt.Sprintf("at most %d threads in a trial, all entries together: the Go runtime stops at 10000 OS threads, and rtload may need two per thread it runs", MaxThreads),
		"a trial would run %d threads (%s)", t.total, what)
}

// probe checks one probe; seen holds reader and probe names.
func (c *checker) probe(p string, pr Probe, seen map[string]string) {
	s := c.s
	c.unique(p+"name", pr.Name, "probe", seen)
	c.enum(p+"kind", pr.Kind)
	if pr.Kind != ProbeTapSend {
		c.probeOther(p, pr)
		return
	}
	var ep Endpoint
	var tapNames []string
	for _, e := range s.Endpoints {
		if e.Name == pr.Endpoint {
			ep = e
		}
		if e.Kind == EndpointTap {
			tapNames = append(tapNames, e.Name)
		}
	}
	ok := ep.Kind == EndpointTap
	if !ok {
		allowed := strings.Join(tapNames, ", ")
		if allowed == "" {
			allowed = "none: no tap endpoints defined"
		}
		c.add(p+"endpoint", allowed, "%q is not a tap endpoint", pr.Endpoint)
	}
	c.bounded(p+"packets", pr.Packets)
	if len(pr.Size) == 0 {
		c.add(p+"size", "one or more sizes", "no sizes")
	}
	for j, sz := range pr.Size {
		hi := 65535
		if ok && ep.MTU >= 68 {
			hi = min(hi, ep.MTU+14)
		}
		if sz < minFrame || int(sz) > hi {
			c.add(fmt.Sprintf("%ssize[%d]", p, j), fmt.Sprintf("%d B–%d B (frame size; ≤ mtu + 14)", minFrame, hi), "%d B out of range", uint64(sz))
		}
	}
	c.threadSched(p, pr.CPU, pr.Policy, pr.Priority)
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
	case ProbeFileWrite:
		if pr.Block < 1 || pr.Block > maxBlock {
			c.add(p+"block", "1 B–"+maxBlock.String(), "%s out of range", pr.Block)
		}
		b := boundOf("probes[].file_blocks")
		c.intRange(p+"blocks", pr.Blocks, b.lo, b.hi)
		if pr.Duration <= 0 {
			c.add(p+"duration", "> 0", "%s out of range", pr.Duration)
		}
	case ProbeMessaging:
		c.bounded(p+"groups", pr.Groups)
		c.bounded(p+"fds", pr.FDs)
		c.bounded(p+"loops", pr.Loops)
		if len(pr.Size) != 1 || pr.Size[0] < 1 || int(pr.Size[0]) > boundOf("probes[].messages_size").hi {
			c.add(p+"size", "one size, 1 B–"+maxBlock.String()+" (bytes per message)", "%v", pr.Size)
		}
		c.enum(p+"transport", pr.Transport)
	}
}

// threadSched checks a thread's cpu (when set), policy and priority: 1–99
// for fifo/rr, 0 for other. p is the path prefix ("readers[0].").
func (c *checker) threadSched(p string, cpu *int, policy Policy, priority int) {
	if cpu != nil {
		c.cpu(p+"cpu", *cpu)
	}
	c.enum(p+"policy", policy)
	switch {
	case realTime(policy):
		c.bounded(p+"priority", priority)
	case policy == PolicyOther && priority != 0:
		c.add(p+"priority", "0 for policy other", "%d out of range", priority)
	}
}
