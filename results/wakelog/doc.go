// Package wakelog writes and reads the per-wakeup logs of a results
// directory: one CSV row per real-time wakeup of one reader
// (record.Wakeup), the files package results names (results.WakeupLogBase,
// Reader.WakeupLog) but does not open. It sits on package results, which
// stays the plain contract (the summary's types, its marks, the on-disk
// names), and on its file layer results/safeio.
//
// The format (format.go): every chunk starts with Header (ten columns:
// tick; deadline, latency and drain in ns; messages, calls, EAGAIN
// returns, missed ticks, voluntary and involuntary context switches);
// logs written before the context-switch columns start with HeaderV1 and
// read with those two as 0. A row is at most 150 bytes.
//
// Writing (writer.go): Create(Config) gives a Writer, owned by the one
// non-real-time goroutine draining a reader's ring. Config.ChunkBytes 0
// writes one plain <base>.csv; otherwise the log rotates into chunks
// <base>.<nnnn>.csv, gzipped as they close when Config.Compress
// (<base>.<nnnn>.csv.gz), and the oldest are deleted to keep the log
// within Config.LimitBytes (bytes on disk), counted in Stats. Rows are
// written whole; a failed or short write is cut back to the last whole
// row and breaks the Writer (every later Write returns that error). A .gz
// appears under its final name only complete. Config.Validate lists every
// problem of a config; Create refuses an invalid one and names the log.
//
// Reading (read.go): what commands read is a reader's log as summary.json
// lists it, streamed (EachReaderWakeup; RowBudget bounds a command's rows
// over every reader it reads) or held (ReaderWakeups, for tools and
// tests); ReadFiles reads named files, ReadLog the log of a base as it is
// on disk. Nothing read is trusted: each file is opened through
// safeio.Source (a link, FIFO or device is refused before anything is
// read), a .gz inflates to at most MaxChunkBytes (safeio.Inflate), a
// reader's log holds at most MaxRows rows and a command reads at most
// MaxRowsTotal; a line is at most 64 KiB. A killed writer's torn last line
// of the last file is skipped and counted (ReadStats.TornRows); any other
// damage is an error naming the file and line, and quoting nothing of a
// file that is not a wakeup log.
//
// What stays in results (issue 33's "results as a plain contract"):
// results.WakeupLogBase, because DecodeSummary gives a version 1 summary's
// logs to their readers by name; the limit on the files one reader lists
// (results.MaxWakeupLogFiles), a schema limit checked when a summary is
// read; and Reader.WakeupLog, the list itself.
package wakelog
