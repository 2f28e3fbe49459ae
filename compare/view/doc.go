// Package view renders the one model of a comparison, compare.Result,
// and nothing else: every output of `rtload compare` and of the gates
// that quote it is a view of that model, computed once by package
// compare. Write picks a format: Text (the runs, their metadata and
// differences, the seed's histogram table, the percentile tables, the
// probes' runs, the headline metrics with their verdicts and variance
// split, interleaved and profile differences), JSON, CSV, Markdown and
// LKP (the 0-day robot's `lkp compare` layout); Brief is what a person
// reads by default, and Closing, RunClosing and ClosingBlock are the
// closing blocks (report.Closing) that end every text output.
//
// A view reads no files and decides no verdict: what it prints is in the
// model (a sizing line asks package stats what the noise measured
// needs), escaped for the terminal first (termsafe.Copy). It lays
// text out with package report's helpers. Package compare never imports
// it.
package view
