// Command testsum runs under `make test`: it reads one stage's `go test
// -json` events (cmd/test2json's TestEvent) on stdin, prints what a
// reader needs as the stage runs (each package's result line, every
// failed test's output, every skip with its reason), and records the
// stage in a directory; `testsum -summary` then prints every stage, pass
// or fail, and every skipped test with its reason, and exits 1 when any
// stage failed. The stages run one after the other and each is reported,
// whatever the one before did.
//
// Hand-written: go test -json and cmd/test2json give the events but no
// summary across runs, and gotestsum (the library that does) is not in
// this module's offline set for the sake of thirty lines of bookkeeping.
//
// Usage:
//
//	go test -json ./... | testsum -stage "race (all packages)" -dir .testsum
//	testsum -summary -dir .testsum
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// event is a cmd/test2json TestEvent (go doc cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// Stage is one `go test` run's outcome, as the summary prints it.
type Stage struct {
	Name    string        `json:"name"`
	Failed  bool          `json:"failed"`
	Why     string        `json:"why,omitempty"` // a failure no test names (build, timeout, no events)
	Elapsed time.Duration `json:"elapsed_ns"`
	Passed  int           `json:"passed"`
	Fails   []Test        `json:"fails,omitempty"`
	Skips   []Test        `json:"skips,omitempty"`
	// TierSkips counts the tests skipped because their tier was not run
	// (a skip reason starting "tier:", internal/testutil's tiers): not
	// listed one by one, since a stage of one tier skips every other
	// tier's tests by design.
	TierSkips int `json:"tier_skips,omitempty"`
	// Slowest are the stage's slowest top-level tests, slowest first
	// (at most slowestKept), with Elapsed set.
	Slowest []Test `json:"slowest,omitempty"`
}

// setupNote is the file in -dir where .ci/setup-tests says what it could
// not install.
const setupNote = "setup.txt"

// slowestKept is how many of its slowest tests a stage keeps, and the
// summary prints over every stage.
const slowestKept = 10

// Test is a failed or skipped test; Reason is a skip's message (its log
// lines before "--- SKIP").
type Test struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason,omitempty"`
	// Elapsed is a passed or failed test's run time, in seconds.
	Elapsed float64 `json:"elapsed_s,omitempty"`
}

func main() {
	stage := flag.String("stage", "", "record the go test -json events on stdin as this stage")
	dir := flag.String("dir", ".testsum", "directory of the stage records")
	summary := flag.Bool("summary", false, "print the summary of every stage recorded in -dir; exit 1 if any failed")
	flag.Parse()
	switch {
	case *summary:
		failed, err := printSummary(os.Stdout, *dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		if failed {
			os.Exit(1)
		}
	case *stage != "":
		st := readStage(*stage, os.Stdin, os.Stdout)
		if err := writeStage(*dir, st); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	default:
		fmt.Fprintln(os.Stderr, "testsum: give -stage NAME (events on stdin) or -summary")
		os.Exit(2)
	}
}

// readStage reads the events of stage name from r, echoing to w each
// package's result, failed tests' output and skips, and returns the
// stage. Lines that are not events are echoed as they are.
func readStage(name string, r io.Reader, w io.Writer) Stage {
	st := Stage{Name: name}
	start := time.Now()
	out := map[string][]string{} // package + test → output so far
	pkgOut := map[string][]string{}
	events := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, line)
			continue
		}
		events++
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output", "build-output":
			if e.Test != "" {
				out[key] = append(out[key], e.Output)
			} else {
				pkgOut[e.Package] = append(pkgOut[e.Package], e.Output)
			}
		case "pass":
			if e.Test != "" {
				st.Passed++
				st.keepSlow(Test{Package: e.Package, Test: e.Test, Elapsed: e.Elapsed})
			} else {
				fmt.Fprintf(w, "ok   %s %.1fs\n", e.Package, e.Elapsed)
			}
			delete(out, key)
		case "skip":
			if e.Test != "" {
				t := Test{Package: e.Package, Test: e.Test, Reason: skipReason(out[key])}
				if isTierSkip(t.Reason) {
					st.TierSkips++
				} else {
					st.Skips = append(st.Skips, t)
					fmt.Fprintf(w, "SKIP %s %s: %s\n", e.Package, e.Test, t.Reason)
				}
			}
			delete(out, key)
		case "fail", "build-fail":
			st.Failed = true
			if e.Test != "" {
				st.Fails = append(st.Fails, Test{Package: e.Package, Test: e.Test})
				st.keepSlow(Test{Package: e.Package, Test: e.Test, Elapsed: e.Elapsed})
				fmt.Fprint(w, strings.Join(out[key], ""))
			} else {
				// A test still running when the package failed (a
				// timeout's panic, a crash) never ends: its output, the
				// goroutine dump included, is printed with its name.
				for _, k := range unended(out, e.Package) {
					fmt.Fprint(w, strings.Join(out[k], ""))
					st.Fails = append(st.Fails, Test{Package: e.Package, Test: strings.TrimPrefix(k, e.Package+" ") + " (never ended: a timeout or a crash; output above)"})
					delete(out, k)
				}
				fmt.Fprint(w, strings.Join(pkgOut[e.Package], ""))
				fmt.Fprintf(w, "FAIL %s %.1fs\n", e.Package, e.Elapsed)
				if !hasFailIn(st.Fails, e.Package) {
					// No test failed: a build error, a panic or a timeout.
					st.Fails = append(st.Fails, Test{Package: e.Package, Test: "(package: build, panic or timeout; output above)"})
				}
			}
			delete(out, key)
		}
	}
	if err := sc.Err(); err != nil {
		st.Failed, st.Why = true, "reading go test's output: "+err.Error()
	}
	if events == 0 {
		st.Failed, st.Why = true, "go test produced no test events (see its output above)"
	}
	st.Elapsed = time.Since(start).Round(time.Second)
	return st
}

// isTierSkip reports whether a skip's reason is internal/testutil's tier
// skip: "tier: …", after the "file_test.go:N: " prefix t.Skip writes.
func isTierSkip(reason string) bool {
	if _, rest, ok := strings.Cut(reason, ".go:"); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			reason = after
		}
	}
	return strings.HasPrefix(reason, "tier:")
}

// keepSlow adds a top-level test to st.Slowest if it is among the
// slowest slowestKept so far (subtests are inside their parent's time).
func (st *Stage) keepSlow(t Test) {
	if strings.Contains(t.Test, "/") {
		return
	}
	st.Slowest = append(st.Slowest, t)
	slices.SortStableFunc(st.Slowest, func(a, b Test) int { return cmpDesc(a.Elapsed, b.Elapsed) })
	if len(st.Slowest) > slowestKept {
		st.Slowest = st.Slowest[:slowestKept]
	}
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// unended are the keys of out (package + " " + test) of package pkg's
// tests that started and never ended, sorted.
func unended(out map[string][]string, pkg string) []string {
	var keys []string
	for k := range out {
		if strings.HasPrefix(k, pkg+" ") && len(k) > len(pkg)+1 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func hasFailIn(fails []Test, pkg string) bool {
	for _, f := range fails {
		if f.Package == pkg {
			return true
		}
	}
	return false
}

// skipReason is a skipped test's message: its output lines other than
// test2json's framing (=== RUN, --- SKIP, …), trimmed and joined.
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}

// writeStage adds st to dir as the next numbered record.
func writeStage(dir string, st Stage) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prev, err := filepath.Glob(filepath.Join(dir, "stage-*.json"))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("stage-%02d.json", len(prev)+1)), b, 0o644)
}

// printSummary prints every stage recorded in dir, in order, then every
// failed and skipped test, and reports whether any stage failed.
func printSummary(w io.Writer, dir string) (failed bool, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "stage-*.json"))
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return true, errors.New("no stage recorded in " + dir)
	}
	sort.Strings(files)
	var stages []Stage
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		var st Stage
		if err := json.Unmarshal(b, &st); err != nil {
			return false, fmt.Errorf("%s: %w", f, err)
		}
		stages = append(stages, st)
	}
	fmt.Fprintln(w, "\n== make test: summary")
	// setupNote is what .ci/setup-tests could not install, and which
	// tests skip for it.
	if b, err := os.ReadFile(filepath.Join(dir, setupNote)); err == nil && len(b) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			fmt.Fprintf(w, "  set-up: %s\n", l)
		}
	}
	nfail := 0
	for _, st := range stages {
		verdict := "ok  "
		if st.Failed {
			verdict = "FAIL"
			nfail++
		}
		tier := ""
		if st.TierSkips > 0 {
			tier = fmt.Sprintf(" (+%d of other tiers)", st.TierSkips)
		}
		fmt.Fprintf(w, "  %s  %-44s %4d passed, %d failed, %d skipped%s, %s\n", verdict, st.Name, st.Passed, len(st.Fails), len(st.Skips), tier, st.Elapsed)
		if st.Why != "" {
			fmt.Fprintf(w, "        %s\n", st.Why)
		}
	}
	for _, st := range stages {
		for _, f := range st.Fails {
			fmt.Fprintf(w, "  failed  [%s] %s %s\n", st.Name, f.Package, f.Test)
		}
	}
	printSlowest(w, stages)
	var skips int
	for _, st := range stages {
		skips += len(st.Skips)
	}
	if skips > 0 {
		fmt.Fprintf(w, "  skipped tests, with their reasons (%d):\n", skips)
		for _, st := range stages {
			for _, s := range st.Skips {
				fmt.Fprintf(w, "    [%s] %s %s: %s\n", st.Name, strings.TrimPrefix(s.Package, "github.com/rtload/rtload/"), s.Test, s.Reason)
			}
		}
	}
	if nfail > 0 {
		fmt.Fprintf(w, "FAIL: %d of %d stages failed\n", nfail, len(stages))
		return true, nil
	}
	fmt.Fprintf(w, "PASS: %d stages\n", len(stages))
	return false, nil
}

// printSlowest prints the slowest top-level tests over every stage, so
// that the time budget stays visible.
func printSlowest(w io.Writer, stages []Stage) {
	type slow struct {
		stage string
		t     Test
	}
	var all []slow
	for _, st := range stages {
		for _, t := range st.Slowest {
			all = append(all, slow{st.Name, t})
		}
	}
	if len(all) == 0 {
		return
	}
	slices.SortStableFunc(all, func(a, b slow) int { return cmpDesc(a.t.Elapsed, b.t.Elapsed) })
	if len(all) > slowestKept {
		all = all[:slowestKept]
	}
	fmt.Fprintf(w, "  the %d slowest tests:\n", len(all))
	for _, s := range all {
		fmt.Fprintf(w, "    %7.1fs  [%s] %s %s\n", s.t.Elapsed, s.stage, strings.TrimPrefix(s.t.Package, "github.com/rtload/rtload/"), s.t.Test)
	}
}
