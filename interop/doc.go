// Package interop writes and reads rtload's histograms in other tools'
// formats: HdrHistogram interval logs (.hlog, read by HistogramLogAnalyzer
// and hdr-plot) and cyclictest's -h histogram text. WriteInterop puts
// wakeup.hlog, per-call.hlog and wakeup-cyclictest.txt next to a run's
// summary.json, through the results directory's link-safe writer; the
// readers turn real cyclictest output and any .hlog back into histograms,
// so compare can line rtload up with cyclictest. Maxima are the exact ones
// where rtload knows them (Interval_Max, "Max Latencies").
//
// Imports results and record; nothing here touches the kernel.
package interop
