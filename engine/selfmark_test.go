package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rtload/rtload/exporter"
	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestProcessMarks drives a soak writer (soakFixture) through intervals
// in which the process itself ran a garbage collection, its metrics
// endpoint refused a request, and its RSS passed the run's bound: each
// record says so (gc_runs, exporter, rss_bound_bytes, mark), quiet ones
// carry no mark, and the trial's marks sum them up, its own GC making
// the trial invalid (MarkInvalid) and the rest MarkRtload. With /proc unreadable (no descriptor free)
// rss and fds are left out and process_unknown says why, never 0.
func TestProcessMarks(t *testing.T) {
	srv, err := exporter.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := newSoakFixture(t, 50)
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // as in a trial: only the collection below runs
	w := f.w
	w.exporter, w.self.exporter = srv, srv
	w.self.readers[0].lastPressure = srv.Pressure()
	w.self.gcBefore = gcCycles() // as the trial's start (quiet) reads it

	f.interval() // quiet
	runtime.GC()
	f.interval() // its own GC
	refuse(t, srv)
	f.interval() // the endpoint refused a request
	w.self.run.rssBase, w.self.headroom, w.self.slack = 1<<20, 1, 0
	f.interval() // RSS past the bound (1 MiB + 1 B)
	if err := w.intervals.Sync(); err != nil {
		t.Fatal(err)
	}
	recs, _, err := store.ReadJSONL[results.Interval](filepath.Join(w.self.run.opt.Results.Path(), results.IntervalsFile))
	if err != nil || len(recs) != 4 {
		t.Fatalf("intervals.jsonl: %d records, %v", len(recs), err)
	}
	for i, want := range []struct{ mark string }{
		{""},
		{"rtload's own garbage collection ran once (its readers waited at their safe point)"},
		{"its metrics endpoint refused 1 of 1 connections, 0 requests served (a flood, or requests over its limits)"},
		{"rtload's RSS "},
	} {
		r := recs[i]
		if want.mark == "" && r.Mark != "" || !strings.Contains(r.Mark, want.mark) {
			t.Errorf("record %d: mark %q, want %q", i, r.Mark, want.mark)
		}
		if r.Exporter == nil || r.RSSBoundBytes == 0 || r.RSSBytes == 0 || r.FDs == 0 {
			t.Errorf("record %d: exporter %+v, rss %d (bound %d), fds %d", i, r.Exporter, r.RSSBytes, r.RSSBoundBytes, r.FDs)
		}
	}
	if recs[1].GCRuns != 1 || recs[0].GCRuns != 0 || recs[2].Exporter.Refused != 1 || recs[2].Exporter.Connections != 1 {
		t.Errorf("gc_runs %d, %d; exporter %+v", recs[0].GCRuns, recs[1].GCRuns, *recs[2].Exporter)
	}
	marks := w.self.trialMarks()
	want := []results.Mark{
		{Kind: results.MarkInvalid, Text: "rtload's own garbage collection ran once in 1 interval record (#1): its readers waited at their safe point meanwhile"},
		{Kind: results.MarkRtload, Text: "rtload's RSS passed its bound in 1 interval record"},
		{Kind: results.MarkRtload, Text: "rtload's metrics endpoint was flooded in 1 interval record: it refused 1 of 1 connections in the trial (a flood, or requests over its limits)"},
	}
	if len(marks) != len(want) {
		t.Fatalf("trial marks %+v, want %d", marks, len(want))
	}
	for i := range want {
		if marks[i].Kind != want[i].Kind || !strings.HasPrefix(marks[i].Text, want[i].Text) {
			t.Errorf("trial mark %d: %+v, want %+v", i, marks[i], want[i])
		}
	}

	// No descriptor free: /proc/self/statm and /proc/self/fd cannot be opened.
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	tight := old
	tight.Cur = 0 // open(2) fails with EMFILE whatever fd is free
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &tight); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	var iv results.Interval
	w.processState(&iv)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(&iv)
	if iv.RSSBytes != 0 || iv.FDs != 0 || !strings.Contains(iv.ProcessUnknown, "too many open files") ||
		strings.Contains(string(b), `"rss_bytes"`) || strings.Contains(string(b), `"fds"`) {
		t.Errorf("with no descriptor free: %s", b)
	}
}

// refuse sends srv one request over its header limit and waits (bounded)
// until srv counts it refused.
func refuse(t *testing.T, srv *exporter.Server) {
	t.Helper()
	before := srv.Pressure().Refused
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", 64<<10))
	// Refused either way: a 431 when the endpoint accepted the connection
	// before the header arrived, a reset when the header was already
	// queued past any request's size (dropped unread at accept).
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("over the header limit: %v, want 431 or the connection reset", resp.Status)
	}
	c.Close()
	testutil.Eventually(10*time.Second, func() bool { return srv.Pressure().Refused != before })
}

// TestCheckpointFailureEnds: a checkpoint that cannot be written ends the
// run, as any results file does (the README): during a soak trial its
// writer fails the trial, and between trials Run stops with the error,
// the finished trial kept in the summary.
func TestCheckpointFailureEnds(t *testing.T) {
	full := errors.New("write summary.json: no space left on device")
	t.Run("soak writer", func(t *testing.T) {
		f := newSoakFixture(t, 10)
		f.w.onCheckpoint = func(results.Trial) error { return full }
		f.w.maybeCheckpoint(f.now.Add(checkpointEvery))
		select {
		case <-f.w.failed:
		default:
			t.Fatal("a failed checkpoint did not end the trial")
		}
		if !errors.Is(f.w.err, full) {
			t.Errorf("writer error %v, want the checkpoint's", f.w.err)
		}
	})
	t.Run("between trials", func(t *testing.T) {
		testutil.Requires(t, testutil.Root, testutil.CPUs(2))
		spec, trials := load(t, `
name: ckpt
duration: 200ms
readers: [{name: timer, endpoints: [], cpu: 1, period: 10ms}]
rounds: 2
`)
		calls := 0
		sum, err := Run(context.Background(), spec, trials, Options{OutDir: t.TempDir(), OnCheckpoint: func(*results.Summary) error {
			calls++
			return full
		}})
		if !errors.Is(err, full) || !strings.Contains(err.Error(), "after trial 1") || calls != 1 {
			t.Fatalf("Run: %v after %d checkpoints, want the checkpoint's error after trial 1", err, calls)
		}
		if sum == nil || len(sum.Trials) != 1 {
			t.Errorf("summary %v, want the finished first trial", sum)
		}
	})
}
