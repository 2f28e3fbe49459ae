// Package load reads the runs a comparison compares: Runs reads each
// results directory's summary.json (or another tool's histogram file:
// cyclictest -h text, an HdrHistogram log), checks its readers'
// per-wakeup logs (streamed, bounded by wakelog.RowBudget) and reads its
// variant profiles back; a sessions directory is read as one run pooling
// its sessions (AppendSession adds one to a run). Everything goes
// through package results; what it returns is compare.Run, the model's
// input, which package compare computes on without touching a file.
package load
