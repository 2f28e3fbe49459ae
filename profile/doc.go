// Package profile turns perf samples of rtload's reader threads into
// symbolised, phase-split profiles, writes them in pprof's format and as
// folded stacks, and attributes a per-call cost difference between two
// variants to the kernel functions that carry it (issue 16; seed 000's
// "Any idea what is actually going on??").
//
// It is pure: the standard library and github.com/google/pprof/profile.
// The kernel-facing half, perf_event_open and the mmap ring, is
// profile/sampler; readers of results (explain, compare) import this
// package alone and work from written profiles.
//
// # Pieces
//
//   - Decode parses a perf mmap ring's data area between data_tail and
//     data_head (records may wrap around the end) into a Batch: samples
//     with IP, TID, TIME, CPU, PERIOD and the raw call chain, and counts
//     of PERF_RECORD_LOST (samples lost) and THROTTLE/UNTHROTTLE records.
//   - Builder aggregates batches by call chain; Build symbolises each
//     distinct chain (kernel addresses with Kallsyms from /proc/kallsyms,
//     user addresses with SelfSymbols, i.e. runtime.FuncForPC, or
//     ELFSymbols for another binary) and gives each stack a Phase with a
//     PhaseRule: drain (a receive syscall or the drain's user code),
//     sleep (clock_nanosleep and the wakeup), other.
//   - (*Profile).WritePprof writes profile-<variant>.pb.gz (PprofName),
//     every sample labelled phase=…, so `go tool pprof -top -tagfocus
//     phase=drain FILE` is the drain profile; WriteFolded writes
//     profile-<variant>.folded (FoldedName) with the phase as root frame.
//     FromPprof reads a written profile back; ReadPprof parses one from
//     a file, refusing it past MaxPprofFrames or MaxPprofMemory before
//     pprof's parser builds anything (pprofcheck.go).
//   - Attribute converts each function's share of a variant's drain
//     samples into ns per call with that variant's measured calls and
//     drain time, takes the differences A − B with 95% intervals, and
//     splits the difference in four parts that add up to it: the entry
//     paths' own code (each method's syscall functions, paired through
//     the callees both reach, so that __sys_recvfrom and
//     ____sys_recvmsg are never taken for the source of a difference
//     that is mostly shared work below them); the work only one side
//     does (recvmsg's ___sys_recvmsg → copy_msghdr_from_user); the
//     shared path at a different cost (sock_recvmsg below both); and
//     interrupts, softirqs and preemption during the drain (the
//     machine's load). It finds the seats of own and shared work in
//     the call tree, names known hardening and debug hooks (Hooks,
//     HookAt: CONFIG_HARDENED_USERCOPY, init_on_alloc/free, KASAN,
//     KCSAN, lockdep) with whether their option is on in the profiled
//     kernel (Hook.State), notes a measured drain time well above the
//     sampled CPU time, and says plainly when the profile cannot
//     explain the difference (too few samples, spread thin, within
//     sampling error).
//
// # Use from the engine (the profiled trial of a variant)
//
//	s, err := sampler.Open(sampler.Config{TID: tid}) // after rt.Start; cpu-clock, 10 kHz
//	// errors.Is(err, rt.ErrNoPrivilege) / rt.ErrNotSupported: refuse or record the fallback
//	defer s.Close()
//	// writer goroutine, every ≤ 100 ms and at the end:   s.Drain()
//	// after the trial's measured window:                 s.Stop()
//	ks, err := profile.LoadKallsyms() // once per run
//	p := s.Profile(profile.Symbols{Kernel: ks, User: profile.SelfSymbols{}}, profile.DefaultPhaseRule())
//	p = profile.Merge(p, p2 /* other readers or rounds of the variant */)
//	p.WritePprof(w, os.Args[0])   // into PprofName(variant), with results' link-safe writer
//	p.WriteFolded(w2)             // into FoldedName(variant)
//
// The profiled trial's measured receive calls and drain time go into the
// results next to it (the profiled trial's own, not the unprofiled
// ones'), with the per-call p50 of profiled and unprofiled trials so
// the report can print the profiler's cost.
//
// # Use from explain and compare (readers of results)
//
//	data, err := store.ReadProfileFile(dir, vp.Pprof) // inflated, at most 16 MiB
//	p, err := profile.ReadPprof(data, vp.Pprof)         // bounded: MaxPprofFrames, MaxPprofMemory
//	a := profile.Variant{Name: "recvmsg", Profile: p, Calls: calls, Drain: drain,
//		KernelConfig: facts.KernelConfig, Cmdline: facts.Hardening} // the run's sysinfo facts
//	at, err := profile.Attribute(a, b, profile.Options{})
//	fmt.Print(at.Text())  // or at.Entry, at.Own, at.Shared, at.Seats, at.Funcs, at.Hooks, at.Notes, at.Unexplained
//
// compare does the same with a and b from two runs (two kernels), each
// with its own run's facts.
package profile
