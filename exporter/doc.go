// Package exporter serves rtload's live counters and latency histograms in
// the Prometheus text format at http://ADDR/metrics, for dashboards that
// scrape long soak runs while they run.
//
// The engine's interval writer (a normal goroutine, never a real-time
// thread) calls [Server.Update] once per interval and reader with that
// interval's deltas and distributions; HTTP scrapes read the accumulated
// totals. Nothing here is on the measured path: Update takes a mutex.
//
// The server has its own registry (never the global one) holding rtload's
// collector plus the Go and process collectors, and listens on a loopback
// address unless the caller explicitly allows any address.
//
// Any local user can connect to a loopback port, and during a soak the
// process's GC is off until its heap has grown by the soak's headroom: so
// the endpoint bounds what a connection can make the process hold (guard.go):
// headers of at most MaxHeaderBytes (431 past it), bodies of MaxBodyBytes,
// read, write and idle timeouts, at most MaxConns connections served at
// once and AcceptRate new ones a second, and none accepted while fewer
// than FDReserve descriptors are free below RLIMIT_NOFILE, which the run's
// checkpoints and logs need. Connections are accepted as soon as the
// kernel queues them (a listen backlog of ListenBacklog), and every one
// beyond those limits, or already closed by its peer, or holding more
// bytes than a request may, is dropped at once with a reset, allocating
// nothing: a flood never leaves a backlog of dead connections for a
// scrape to wait behind. [Server.Pressure] counts the connections and the
// refused ones, for the engine to mark the intervals they fell in. Series
// are kept for the last RoundsKept rounds of each variant, so that a
// soak's slices do not grow /metrics. The rate and the request limits are
// the library's (golang.org/x/time/rate, net/http); the raw accept loop,
// the slots, the descriptor reserve and the refusal count are rtload's
// own.
//
// Metric families (labels scenario, variant, round, reader unless noted):
//
//	rtload_wakeups_total                        ticks run
//	rtload_overruns_total                       overrun events (ticks whose wait began a period or more late)
//	rtload_missed_ticks_total                   ticks skipped and never run
//	rtload_backlog_skips_total                  catch-up overruns past the backlog limit (skipped)
//	rtload_recv_calls_total{result}             recv calls; result = data | eagain | error
//	rtload_messages_received_total              messages received
//	rtload_messages_sent_total                  messages sent to the reader's sockets
//	rtload_messages_lost_total                  gaps in per-socket sequence numbers
//	rtload_kernel_drops_total                   kernel drops (SO_RXQ_OVFL)
//	rtload_wakeup_latency_seconds               histogram, 1 µs … 10 s, 24 exponential buckets
//	rtload_recv_call_cost_ticks                 histogram in clock ticks, the scenario's bucket layout
//	rtload_interval_wakeup_latency_max_seconds  gauge: max wakeup latency of the last interval
//	rtload_noise_work_total{kind,unit}          noise work done (scenario, variant, round, kind, unit)
//	rtload_run_info{scenario,clock,kernel}      always 1
//	rtload_trial                                current trial index
//
// rtload_recv_call_cost_ticks has the buckets of the scenario's report
// layout, up to its overflow edge (le = edge − 1; +Inf is the overflow
// bucket), merged by a whole factor past MaxCallCostBuckets: its counts
// are the report's table rows.
//
// A tick of rtload_recv_call_cost_ticks is one unit of the clock named by
// rtload_run_info's clock label ("tsc": TSC ticks, not core cycles;
// "monotonic": ns).
package exporter
