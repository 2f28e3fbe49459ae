// Package compare puts the results directories of several rtload runs side
// by side: `rtload compare DIR_A DIR_B`. It holds the model of that
// comparison (Result): the seed's histogram columns (seed
// 000_b19799733a2511c2: recvfrom and recvmsg, each on an unhardened and a
// hardened kernel), one per (variant, run), their percentiles, and for
// every headline metric the change against the first run in % with a 95%
// confidence interval and issue 24's one verdict (stats.Decide): slower,
// not slower, same, or undecided. Package compare/view renders it (text,
// JSON, CSV, markdown, LKP, the closing blocks); compare prints nothing.
//
// The interval is Student's t on log values of independent samples
// (package stats): the processes of a run (rtload run --processes),
// paired by process between the variants of one run; the rounds of one
// process, with a note, when a side has only one. Calls and wakeups are
// never samples (they share the machine's state of the moment), so there
// is no per-call bootstrap. Each primary metric's verdict line gives n as
// processes × rounds, the smallest change the noise measured could
// detect and how many more processes would decide it; the variance split
// (between processes, between rounds, lag-1, Kalibera & Jones' rounds per
// process) says where the noise is. The gates of check and compare
// --fail-on are package verdict's: they read the model through Headlines
// and Metric's ChangeAt and At.
// Runs that differ in something that matters (scenario, CPU model,
// clocksource, clock unit, degraded mode, kernel command line, the
// scenario as run) are listed field by field as warnings; a differing
// kernel is expected and listed as information. Package compare/facts
// finds those differences, the metadata table and the profiles'
// differences, and fills them into the model (facts.Compare); a check's
// look (Headlines) never reads them.
//
// The package is pure: package compare/load reads summary.json and each
// reader's own per-wakeup log into Runs, through package results (the
// percentiles are results' one definition, so they match the report's);
// compare computes in memory and never touches a file or the kernel.
package compare
