// Package report renders rtload results for a terminal: the per-call
// tables in the shape of seed 000_b19799733a2511c2 (David Laight's
// recvfrom/recvmsg cycle table: 128-wide buckets, an overflow row "8256+",
// a Total row), one column per variant or per variant/reader, and the
// whole end-of-run report (clock, banners, per-call tables, stats, wakeup
// latency, message accounting, noise work, GC checks).
//
// Every view is rebuilt from a results.Summary alone; the schema and the
// files on disk belong to package results.
package report
