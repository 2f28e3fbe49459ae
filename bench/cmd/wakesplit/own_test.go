package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/bench/wakesplit"
)

func TestOwnFiles(t *testing.T) {
	dir := t.TempDir()
	csv := "tick,deadline_ns,latency_ns,drain_ns,messages,calls,eagain,missed,vol_cs,invol_cs\n0,1000,25000,0,0,0,0,0,1,0\n1,11000,31000,0,0,0,0,0,1,0\n"
	if err := os.WriteFile(filepath.Join(dir, "wakeups-00-base-r0-timer.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	own, err := rtloadOwn(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []wakesplit.Own{{DeadlineNs: 1000, LatencyNs: 25000}, {DeadlineNs: 11000, LatencyNs: 31000}}
	if d := cmp.Diff(want, own); d != "" {
		t.Errorf("rtloadOwn (-want +got)\n%s", d)
	}
	path := filepath.Join(dir, "x.trace.own")
	if err := writeOwn(path, own); err != nil {
		t.Fatal(err)
	}
	back, err := readOwn(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, back); d != "" {
		t.Errorf("readOwn after writeOwn (-want +got)\n%s", d)
	}
	if o, err := readOwn(filepath.Join(dir, "missing.own")); o != nil || err != nil {
		t.Errorf("missing file: %v, %v; want nothing and no error", o, err)
	}
	if _, err := rtloadOwn(t.TempDir()); err == nil {
		t.Error("no CSV: no error")
	}
	ct := cyclictestOwn([]byte("Thread 0 Interval: 10500\n       0:       0:   27524\n       0:       1:   61277\nT: 0 ( 5) P:80\n"))
	if d := cmp.Diff([]wakesplit.Own{{LatencyNs: 27524}, {LatencyNs: 61277}}, ct); d != "" {
		t.Errorf("cyclictestOwn (-want +got)\n%s", d)
	}
}

func TestGroupsAndHeader(t *testing.T) {
	gs, err := parseGroups([]string{"ct=a.trace,b.trace", "c.trace"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]group{{"ct", []string{"a.trace", "b.trace"}}, {"c.trace", []string{"c.trace"}}}, gs, cmp.AllowUnexported(group{})); d != "" {
		t.Errorf("parseGroups (-want +got)\n%s", d)
	}
	if _, err := parseGroups([]string{"a", "b", "c"}); err == nil {
		t.Error("three groups: no error")
	}
	path := filepath.Join(t.TempDir(), "t.trace")
	if err := os.WriteFile(path, []byte("# wakesplit: pid=4242 cpu=1 clock=x86-tsc overrun=0 dropped events=0\n# tracer: nop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, lost := headerPID(path); p != 4242 || lost != 0 {
		t.Errorf("headerPID = %d, %d; want 4242, 0", p, lost)
	}
}
