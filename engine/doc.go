// Package engine turns scenario trials into kernel objects and threads,
// runs them and owns their cleanup: UDP socket groups, paced senders,
// real-time readers (probe.Loop on an rt.Thread), noise sources, and a
// non-real-time writer that streams the per-wakeup log to disk. It is the
// only package that imports both scenario and the kernel-facing packages.
//
// Run (run.go) holds what a run shares across trials in a run struct
// (clock, namespace, summary so far, run-wide logs, profiles); Options is
// only what the caller sets. Each trial (trial.go) goes through named
// phases: build (endpoints, senders, probes, readers), start (CPU idle
// hold and GC off, noise, readers, senders, probes, the writer), wait,
// stop (one method, whose comment gives the order and why), collect and
// close. reader.go and sender.go hold those threads; the spec → config
// translations (readerSched, drainConfig, senderPacer, noiseConfig,
// wakeupLogConfig, trialWindow, gomaxprocsBudget, …) are pure functions.
//
// Everything it writes goes through package results (never report): the
// wakeup logs, intervals.jsonl and spikes.jsonl through the results
// directory's link-safe writer, and every summary it hands back in
// results' types with results' numbers. A write that fails ends the trial
// with the error; the summary so far goes to Options.OnCheckpoint after
// every finished trial.
//
// A profiled trial (scenario.Trial.Profiled) runs like any other, with a
// perf sampler on each reader thread (profile.go): its results go to
// Summary.ProfiledTrials, apart from the timed trials, and each variant's
// samples to profile-<variant>.pb.gz and .folded (Summary.Profiles).
package engine
