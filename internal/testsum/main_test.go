package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStageAndSummary feeds a stage's go test -json events: a pass, a
// skip with its reason, a failure with its output, a package that failed
// to build, a test that never ended (a timeout: its goroutine dump is
// printed, with its name); the stage is failed and the summary lists each.
func TestStageAndSummary(t *testing.T) {
	events := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: the machine marked the baseline: steal 100ms\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestT","Output":"    x.go:1: tier: realtime test; -short runs the fast tier only\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestT"}`,
		`{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":12.5}`,
		`{"Action":"pass","Package":"p","Test":"TestSlow/sub","Elapsed":12}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: 3985 of 4000\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestC"}`,
		`{"Action":"fail","Package":"p","Elapsed":1.5}`,
		`not json: printed as it is`,
		`{"Action":"build-output","Package":"q","Output":"q/x.go:1: syntax error\n"}`,
		`{"Action":"fail","Package":"q"}`,
		`{"Action":"skip","Package":"r"}`,
		`{"Action":"run","Package":"h","Test":"TestHang"}`,
		`{"Action":"output","Package":"h","Test":"TestHang","Output":"=== RUN   TestHang\n"}`,
		`{"Action":"output","Package":"h","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"output","Package":"h","Test":"TestHang","Output":"goroutine 7 [chan receive]:\nh.TestHang(…)\n"}`,
		`{"Action":"output","Package":"h","Output":"FAIL\th\t600.0s\n"}`,
		`{"Action":"fail","Package":"h","Elapsed":600}`,
	}, "\n")
	var echo bytes.Buffer
	st := readStage("race", strings.NewReader(events), &echo)
	want := Stage{Name: "race", Failed: true, Passed: 3, TierSkips: 1,
		Slowest: []Test{{Package: "p", Test: "TestSlow", Elapsed: 12.5}, {Package: "p", Test: "TestA", Elapsed: 0.1}, {Package: "p", Test: "TestC"}},
		Fails: []Test{{Package: "p", Test: "TestC"}, {Package: "q", Test: "(package: build, panic or timeout; output above)"},
			{Package: "h", Test: "TestHang (never ended: a timeout or a crash; output above)"}},
		Skips: []Test{{Package: "p", Test: "TestB", Reason: "b_test.go:9: the machine marked the baseline: steal 100ms"}}}
	st.Elapsed = 0
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("stage (-want +got):\n%s", d)
	}
	for _, s := range []string{"c_test.go:3: 3985 of 4000", "FAIL p 1.5s", "not json: printed as it is", "q/x.go:1: syntax error", "SKIP p TestB: b_test.go:9", "panic: test timed out after 10m0s\ngoroutine 7 [chan receive]:\nh.TestHang"} {
		if !strings.Contains(echo.String(), s) {
			t.Errorf("echo lacks %q:\n%s", s, echo.String())
		}
	}
	dir := t.TempDir()
	if err := writeStage(dir, st); err != nil {
		t.Fatal(err)
	}
	if err := writeStage(dir, Stage{Name: "allocations", Passed: 7}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, setupNote), []byte("could not install podman: not root (uid 1000). The container tests skip.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	failed, err := printSummary(&sum, dir)
	if err != nil || !failed {
		t.Fatalf("printSummary: failed %v, %v", failed, err)
	}
	for _, s := range []string{"FAIL  race", "ok    allocations", "failed  [race] p TestC", "[race] p TestB: b_test.go:9: the machine marked the baseline: steal 100ms", "FAIL: 1 of 2 stages failed",
		"1 skipped (+1 of other tiers)", "set-up: could not install podman: not root (uid 1000). The container tests skip.\n", "the 3 slowest tests:\n       12.5s  [race] p TestSlow\n"} {
		if !strings.Contains(sum.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, sum.String())
		}
	}
	if _, err := printSummary(&sum, t.TempDir()); err == nil {
		t.Error("a summary of no stage is not an error")
	}
	if st := readStage("empty", strings.NewReader(""), &echo); !st.Failed || st.Why == "" {
		t.Errorf("a stage with no events: %+v", st)
	}
}
