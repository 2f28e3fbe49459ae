// Package results is the contract between a run and everything that reads
// it, as vegeta's results file is between attack and report: the schema,
// the files of a results directory and their limits, and the one
// definition of every percentile. Writing the files safely and reading
// them back is package results/store's (issue 33: the contract is plain
// types and their pure methods).
//
// A results directory holds:
//
//	summary.json           one Summary, version SummaryVersion (versions 1 and 2 still read):
//	                       store.Dir.WriteSummary, store.ReadSummary, store.DecodeSummary
//	wakeups-<…>.csv[.gz]   each reader's per-wakeup log, rotated in chunks and capped:
//	                       named by WakeupLogBase, listed by Reader.WakeupLog, written
//	                       and read by package results/wakelog
//	intervals.jsonl        one Interval per reader and interval (soak runs): Dir.CreateJSONL, store.ReadJSONL
//	spikes.jsonl           one Spike per wakeup above a threshold, capped at SpikesLimit
//	profile-<variant>.pb.gz, profile-<variant>.folded
//	                       a variant's profiled trials' samples (pprof, folded stacks):
//	                       Summary.Profiles names them, store.ReadProfileFile reads them
//
// One Summary holds the whole run, typed to the leaf (no field is an
// interface), and its readers ask it rather than recompute:
//   - what ran: Spec, the scenario's JSON as run (for check's rerun and
//     compare's leaf-by-leaf diff, Spec.Leaves), and Plan, what readers
//     ask of it (duration, warm-up, slices, rounds, processes, variants);
//     Env, the machine and process (`rtload env`); Clock, what one tick
//     is (ClockInfo.TickUnit names it: "TSC ticks", "cycles", "ns");
//   - what the kernel reported, one definition each, filled by its
//     producer (rt, sysinfo) and never copied: Applied and Thread
//     (scheduling read back), Housekeeping (rtload's own threads
//     confined), KernelWatch (clocksource, RT throttling, kernel log
//     events), Env, ClockInfo;
//   - the trials, in run order (Trial.Name: "trial 3 (recvmsg, round 2)",
//     counted from 1), each with its readers, traffic, noise and probes;
//   - the marks of a run that was not the run asked for: each trial's
//     list (Trial.Marks: MarkInvalid, MarkEmpty, MarkStarved, MarkRtload,
//     MarkTraffic, each with its text) and the run's own (degraded,
//     stopped, incomplete), gathered once by Summary.Marks; Trial.Valid
//     says whether a verdict may rest on a trial.
//
// Older summaries read into today's types (store.DecodeSummary): version
// 1's per-call summaries and trial-level log lists, version 2's trials
// (all in process 0) and its marks, kept in five fields (results/store's
// legacy.go). Version holds the version read.
//
// What is here is what more than one package reads or writes; what one
// reader alone judges lives with it (issue 33, "results as a plain
// contract"). So the cause of a judged mark (the machine's or the
// workload's) and the processes it disturbed are verdict's (replace.go:
// only the gates read them), while MarkKind.Judged, the list of marks a
// verdict may not rest on, stays with the marks (compare quotes it).
// Controls (controls.go) stay: the engine fills them, and report, compare
// and verdict read them. sessions.json's schema (SessionIndex,
// sessions.go) is here as summary.json's is: only the session library
// appends to it, but compare and check read it back. Its writer (the
// claim, the index rewritten by renaming) and reader (its limits) stay
// together in results/store; split, they could drift apart.
//
// Profiled trials (the scenario's profile section) are kept apart from
// the timed ones, in Summary.ProfiledTrials, so that no table mixes
// histograms measured under the sampler with the timed ones;
// ProfilerCosts compares the two.
//
// Each Reader in summary.json lists its own wakeup log files
// (Reader.WakeupLog); wakelog.EachReaderWakeup reads exactly those, which
// is how the report, compare, explain and plot find a reader's wakeups.
// The wakeup logs' format, writer and reader are package results/wakelog:
// this package keeps only their names (WakeupLogBase, which version 1
// summaries need to give each reader its logs) and the limit on how many
// files a summary lists (MaxWakeupLogFiles). Columns groups
// a summary's readers into the (variant, reader) columns every table shows.
//
// The file layer is two packages. results/store is the one place where
// untrusted bytes on disk become this package's types: summary.json read,
// decoded (with its shape pre-pass and the checks of what was decoded)
// and written, the JSONL logs and profiles read, a sessions directory's
// index read and appended to. Under it, results/safeio reads and writes
// every file and bounds what untrusted bytes may cost before they are
// decoded. This package keeps only the names and limits they enforce
// (SummaryFile, SummaryVersion, MaxBuckets, …, CheckLayout).
//
// Writing: a store.Dir (store.CreateDir for a new run, store.OpenDir for
// an existing one) is a directory checked to be the effective user's and
// not writable by others, held open by descriptor (os.Root). Every file is
// created through it with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the
// umask, so a planted symlink is never followed and no other user's file
// is ever written; whole files are replaced only by renaming a fresh
// temporary file over them (Dir.WriteFile), which a crash or a full disk
// cannot tear; JSONL records (and wakelog's rows) are written whole, a
// failed write cut back to the last whole record.
//
// Numbers: Latency (ns) and TickStats (clock ticks: a TSC tick is not a
// core cycle; Summary.Clock.TickUnit says what one is) carry count, exact min, mean
// and max, and p50, p90, p99 and p99.9 by one definition (see latency.go
// and the README's "Percentiles: one definition"): HdrHistogram's rank,
// the highest value of the bucket holding that sample, clamped to the
// exact max. LatencyOf and TickStatsOf compute them from the engine's
// recorders, MergeLatency and MergeTickStats merge rounds, BucketPercentile
// gives the linear histogram's bucket edge for the same sample.
//
// Reading (results/store, through safeio's read.go) trusts nothing:
// results directories come from other people, and rtload runs as root.
// Every file is opened by name through the directory's descriptor
// (Source), only if it is a regular file: a symlink, FIFO, socket or
// device is refused (ErrRefusedFile) before anything is read or can block,
// naming the file and quoting none of it. Reading is bounded by what it
// produces, not only by what it reads: summaries past MaxSummaryBytes,
// MaxBuckets, MaxTrials, MaxReaders, MaxHDRBytes or MaxSummaryMemory (a
// pre-pass, safeio's shape.go, checks the lists and the memory decoding
// would take before json.Unmarshal builds anything), an HdrHistogram whose
// header declares more than MaxHDRCounts counts (safeio's hdrgeometry.go),
// or naming a wakeup log by a path, are refused with the limit named; gzip
// streams inflate through Inflate (MaxProfileInflatedBytes,
// MaxInflateRatio; wakelog.MaxChunkBytes); a wakeup-log file may be listed
// once in a summary (wakelog bounds the rows read, per reader and per
// command); JSONL lines and records are bounded too.
//
// Writing outside a results directory (plot's image) goes through
// safeio.WriteOutputFile, and every output path through CheckOutPath
// (safeio's outpath.go): no component of it another user owns or may
// write in.
//
// The package imports only the standard library, record, hdrhistogram-go
// and results/safeio (DecodeHDR's bound on a histogram's header): no
// kernel package, no scenario, no engine, and not results/store, which
// imports it; so results are read and rebuilt anywhere. The
// kernel-facing packages import it instead: their reports are its types.
package results
