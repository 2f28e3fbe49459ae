// Package store reads and writes a results directory's files as package
// results' types: the one place where untrusted bytes on disk become a
// results.Summary (or a results.SessionIndex, a JSONL record, a profile's
// bytes), and where a run's summary and a sessions directory's index are
// written. It owns:
//
//   - summary.json (summary.go): Dir.WriteSummary writes it atomically;
//     ReadSummary and DecodeSummary read it back, versions 1 to
//     results.SummaryVersion, running the shape pre-pass (safeio.Bounds,
//     with the list limits by JSON field) before json.Unmarshal builds
//     anything and checking what was decoded against the schema limits
//     (results.MaxTrials, MaxReaders, MaxBuckets, …: the histograms'
//     layouts, HDR encodings, wakeup-log and profile names, a chunk
//     listed twice); older versions' fields are read into today's
//     types (assignV1Logs, legacy.go);
//   - Dir (dir.go): a results directory open for writing, safeio.Dir with
//     the summary's writer (CreateDir, CreateNewDir, OpenDir);
//   - a sessions directory (sessions.go): its index read (IsSessions,
//     ReadSessions, DecodeSessions) and appended to under the directory's
//     claim (OpenSessions, Sessions), reader and writer together;
//   - the JSONL logs (jsonl.go: ReadJSONL, EachJSONL) and the profiles
//     (profile.go: ReadProfileFile), bounded by results' limits.
//
// Why apart from results (issue 33, "results as a plain contract"): the
// contract, the types every reader shares and their pure methods, stays
// free of file handling, while everything that must trust nothing it
// reads is in one package, reviewed as one. The files themselves are
// opened, bounded and written by results/safeio (no link followed, no
// FIFO read, every read bounded); the wakeup logs are results/wakelog's.
// store imports results; results never imports store.
package store
