package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/verdict"
)

// Results from elsewhere, as a user meets them (issue 23): each command
// run on a results directory someone else made.

// runFor runs rtload with args for at most d (a reader blocked on a FIFO
// never ends by itself), stdin from stdin ("" = /dev/null).
func runFor(t *testing.T, d time.Duration, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Stdin = strings.NewReader(stdin)
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rtload %v: still running after %v (blocked?)\n%s%s", args, d, o.String(), e.String())
	}
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, o.String(), e.String()}
}

// receivedDir is a results directory of two rounds whose first reader
// lists the wakeup log w.csv (a file is listed once), with a profile
// p.pb.gz.
func receivedDir(t *testing.T) string {
	t.Helper()
	s := gateSummary(1000, 2)
	s.Trials[0].Readers[0].WakeupLog = []string{"w.csv"}
	s.Profiles = []results.VariantProfile{{Variant: "base", Pprof: "p.pb.gz"}}
	dir := writeGateDir(t, s)
	log := wakelog.Header + "\n0,1764612345678901234,4500,9000,1,2,1,0,1,0\n1,1764612345688901234,4700,9000,1,2,1,0,1,0\n"
	if err := os.WriteFile(filepath.Join(dir, "w.csv"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readingCommands are the commands that read a results directory, with
// the arguments they need (dir is the directory, out a scratch directory).
func readingCommands(dir, out string) map[string][]string {
	return map[string][]string{
		"report":  {"report", dir},
		"compare": {"compare", dir, dir, "--label", "a,b"},
		"explain": {"explain", dir},
		"plot":    {"plot", dir, "--out", filepath.Join(out, "p.png")},
		"check":   {"check", dir, "--trust-baseline", "--out", filepath.Join(out, "new")},
	}
}

// TestReadersRefuseLinks: a wakeup log, summary.json or profile that is a
// symlink to a root-only file (issue 23: compare, explain and plot printed
// its first line in a note) is refused, naming the link, by every command,
// and nothing of the target reaches the output.
func TestReadersRefuseLinks(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "shadow")
	const secret = "SECRET-root-only-first-line"
	if err := os.WriteFile(secretFile, []byte(secret+"\nsecond\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"w.csv", "p.pb.gz", results.SummaryFile} {
		for name, args := range readingCommands("DIR", t.TempDir()) {
			if file != results.SummaryFile && (name == "report" || name == "check") || file == "p.pb.gz" && name == "plot" {
				continue // they read no wakeup log or profile of the baseline's before judging; plot no profile
			}
			t.Run(file+"/"+name, func(t *testing.T) {
				dir := receivedDir(t)
				link := filepath.Join(dir, file)
				os.Remove(link)
				if err := os.Symlink(secretFile, link); err != nil {
					t.Fatal(err)
				}
				for i := range args {
					args[i] = strings.ReplaceAll(args[i], "DIR", dir)
				}
				r := runFor(t, time.Minute, "", args...)
				out := r.stdout + r.stderr
				if strings.Contains(out, secret) || strings.Contains(out, "second") {
					t.Fatalf("exit %d: the link's target reached the output:\n%s", r.code, out)
				}
				if !strings.Contains(out, link+": is a symbolic link: refused") {
					t.Errorf("exit %d: the refusal does not name %s:\n%s", r.code, link, out)
				}
				if file == results.SummaryFile && r.code != ExitUsage {
					t.Errorf("exit %d, want %d for a linked summary", r.code, ExitUsage)
				}
			})
		}
	}
}

// TestReadersRefuseFIFOs: a FIFO named summary.json, as a wakeup log or
// as a profile (issue 23: report, compare, explain, plot and check hung
// forever) is refused at once, naming it.
func TestReadersRefuseFIFOs(t *testing.T) {
	for _, file := range []string{results.SummaryFile, "w.csv", "p.pb.gz"} {
		for name, args := range readingCommands("DIR", t.TempDir()) {
			if file != results.SummaryFile && (name == "report" || name == "check") || file == "p.pb.gz" && name == "plot" {
				continue
			}
			t.Run(file+"/"+name, func(t *testing.T) {
				dir := receivedDir(t)
				fifo := filepath.Join(dir, file)
				os.Remove(fifo)
				if err := syscall.Mkfifo(fifo, 0o666); err != nil {
					t.Fatal(err)
				}
				for i := range args {
					args[i] = strings.ReplaceAll(args[i], "DIR", dir)
				}
				r := runFor(t, 30*time.Second, "", args...)
				if !strings.Contains(r.stdout+r.stderr, fifo+": is a named pipe (FIFO): refused") {
					t.Errorf("exit %d: no refusal naming %s:\n%s%s", r.code, fifo, r.stdout, r.stderr)
				}
				if file == results.SummaryFile && r.code != ExitUsage {
					t.Errorf("exit %d, want %d", r.code, ExitUsage)
				}
			})
		}
	}
}

// TestPlotOutPlantedLink: plot --out at a name another user planted as a
// symlink in a sticky directory (issue 23: os.Create followed it and
// overwrote a root-owned 0600 file with the image) is refused, and the
// file is untouched; so is one in a directory another user owns.
func TestPlotOutPlantedLink(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	target, check := victim(t)
	dir := receivedDir(t)
	sticky := t.TempDir()
	os.Chmod(sticky, 0o777|os.ModeSticky)
	planted := filepath.Join(sticky, "cmp.png")
	os.Symlink(target, planted)
	os.Lchown(planted, 65534, 65534)
	theirs := t.TempDir()
	os.Chown(theirs, 65534, 65534)
	os.Symlink(target, filepath.Join(theirs, "cmp.png"))
	for _, tc := range []struct{ out, want string }{
		{planted, "output file " + planted + ": component " + planted + " is a symlink owned by uid 65534"},
		{filepath.Join(theirs, "cmp.png"), "component " + theirs + " is owned by uid 65534"},
		{filepath.Join(theirs, "new.png"), "component " + theirs + " is owned by uid 65534"},
	} {
		r := rtload(t, nil, "plot", dir, "--out", tc.out)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("plot --out %s: exit %d, want a refusal with %q:\n%s", tc.out, r.code, tc.want, r.stderr)
		}
		check()
	}
	if _, err := os.Lstat(filepath.Join(theirs, "new.png")); err == nil {
		t.Error("plot wrote into another user's directory")
	}
	// A directory of ours, sticky or not: written.
	if r := rtload(t, nil, "plot", dir, "--out", filepath.Join(sticky, "ok.png")); r.code != 0 {
		t.Errorf("plot into our sticky directory: exit %d\n%s", r.code, r.stderr)
	}
}

// TestOutUnderAnotherUsersDir: run --out inside a directory another user
// owns (issue 23: only the last component was checked) is refused before
// anything runs.
func TestOutUnderAnotherUsersDir(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	theirs := t.TempDir()
	os.Chown(theirs, 65534, 65534)
	out := filepath.Join(theirs, "res")
	r := rtload(t, nil, "run", "timer-only", "--duration", "200ms", "--out", out, "-q")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "component "+theirs+" is owned by uid 65534, not by root or the invoking user") {
		t.Fatalf("exit %d, want 2 naming %s:\n%s", r.code, theirs, r.stderr)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("%s was created", out)
	}
}

// hostileText is a string of everything a terminal acts on, and a newline
// that would forge a line of rtload's own.
const hostileText = "x\x1b]0;pwned\x07\x1b[2J\x1b[H\rok\bk\x7f\u009b1m\u202egnp.\u200b\nFORGED line\tz\xff"

// unsafeByte returns the first byte or rune of out a terminal could act
// on (newline and tab are rtload's own), or "".
func unsafeByte(out string) string {
	for i, r := range out {
		switch {
		case r == '\n' || r == '\t':
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(out[i:]); n == 1 {
				return out[max(0, i-20):min(len(out), i+20)]
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e' || r == '\u200b':
			return out[max(0, i-20):min(len(out), i+20)]
		}
	}
	return ""
}

// TestTerminalSafe: a summary full of control characters (issue 23:
// report and compare set the title, cleared the screen and forged lines)
// reaches the terminal from no command: report, compare in every text
// format, explain, plot and check print every such character escaped, and
// no line of theirs begins with what followed a newline.
func TestTerminalSafe(t *testing.T) {
	s := gateSummary(1000, 2)
	s.Scenario, s.File = hostileText, hostileText
	s.Clock.Note = hostileText
	s.Env = results.Env{Kernel: hostileText, Cmdline: hostileText}
	for i := range s.Trials {
		tr := &s.Trials[i]
		tr.Variant = "v" + hostileText
		tr.Readers[0].Name = "r" + hostileText
		tr.Readers[0].Method = hostileText
		tr.Readers[0].WakeupLog = []string{fmt.Sprintf("w%s-%d.csv", strings.ReplaceAll(hostileText, "\xff", ""), i)} // missing: named in a note
		tr.HousekeepingNote = hostileText
		tr.ThreadWarnings = []string{hostileText}
	}
	dir := writeGateDir(t, s)
	degraded := *s
	degraded.Degraded, degraded.DegradedReasons = true, []string{hostileText}
	deg := writeGateDir(t, &degraded)
	out := t.TempDir()
	cmds := [][]string{
		{"report", dir},
		{"compare", dir, dir, "--label", "a,b"},
		{"compare", dir, dir, "--label", "a,b", "--format", "markdown"},
		{"compare", dir, dir, "--label", "a,b", "--format", "csv"},
		{"compare", dir, dir, "--label", "a,b", "--format", "lkp"},
		{"compare", dir, deg, "--label", "a,b", "--fail-on", "slower"},
		{"explain", dir},
		{"plot", dir, "--out", filepath.Join(out, "p.svg")},
		{"check", deg},
	}
	for _, args := range cmds {
		t.Run(strings.Join(args[:1], " ")+" "+strings.Join(args[len(args)-1:], ""), func(t *testing.T) {
			r := runFor(t, time.Minute, "", args...)
			for _, o := range []struct{ name, text string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
				if bad := unsafeByte(o.text); bad != "" {
					t.Errorf("%v: exit %d: %s carries %q raw", args, r.code, o.name, bad)
				}
				for _, line := range strings.Split(o.text, "\n") {
					if strings.HasPrefix(strings.TrimLeft(line, " |"), "FORGED") {
						t.Errorf("%v: %s has a forged line: %q", args, o.name, line)
					}
				}
			}
			if !strings.Contains(r.stdout+r.stderr, `\x1b]0;pwned\x07`) && args[0] != "plot" {
				t.Errorf("%v: exit %d: the hostile text is not shown escaped:\n%s%s", args, r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCraftedHDRBurnsNoCPU: a summary of a few hundred KB whose HDR
// encodings declare huge histograms (issue 23: report ran for 103 s) is
// refused when read; one within every per-histogram limit but holding far
// more work than any run writes is stopped by --cpu-budget with a message.
func TestCraftedHDRBurnsNoCPU(t *testing.T) {
	enc := func(hi int64, sig int) string {
		h := hdrhistogram.New(1, hi, sig)
		for v := int64(1); v < hi; v = v*3 + 1 {
			h.RecordValue(v)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wide := gateSummary(1000, 2)
	wide.Trials[0].Readers[0].WakeupLatency = results.Latency{Count: 1, HDR: enc(1<<62, 5)}
	dir := writeGateDir(t, wide)
	start := time.Now()
	r := runFor(t, time.Minute, "", "report", dir)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "wakeup_latency: hdr histogram of values 1 to 4611686018427387904 at 5 significant digits needs 6160384 counts, more than the limit of 65536") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	t.Logf("refused in %v", time.Since(start))

	// 2000 rounds of the widest histogram rtload writes (three a reader):
	// merged per column, far more work than a budget of 200 ms.
	heavy := &results.Summary{Version: results.SummaryVersion, Scenario: "heavy", Clock: results.ClockInfo{Kind: "monotonic", Unit: "ns", Hz: 1e9}}
	e := enc(1<<62, 3)
	for i := range 2000 {
		l := results.Latency{Count: 40, MinNs: 1, MaxNs: 1 << 62, HDR: e}
		heavy.Trials = append(heavy.Trials, results.Trial{Index: i, Round: i, Variant: "base",
			Readers: []results.Reader{{Name: "rt", Wakeups: 40, WakeupLatency: l, Drain: l, OneWayDelay: l}}})
	}
	hd := writeGateDir(t, heavy)
	r = runFor(t, 2*time.Minute, "", "compare", hd, hd, "--label", "a,b", "--cpu-budget", "200ms")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "rtload compare: stopped after") || !strings.Contains(r.stderr, "(--cpu-budget 200ms)") {
		t.Fatalf("exit %d, want 2 and the budget's message:\n%s", r.code, r.stderr)
	}
}

// trustBaseline makes a baseline with `rtload run` of testdata/trust.yaml,
// its file-write noise in noiseDir.
func trustBaseline(t *testing.T) (base, noiseDir string) {
	t.Helper()
	top := t.TempDir()
	os.Chmod(top, 0o755)
	base, noiseDir = filepath.Join(top, "base"), filepath.Join(top, "noise")
	os.Mkdir(noiseDir, 0o755)
	if r := rtload(t, nil, "run", "testdata/trust.yaml", "--set", "noise[0].dir="+noiseDir, "--out", base, "-q"); r.code != 0 {
		t.Fatalf("baseline: exit %d\n%s", r.code, r.stderr)
	}
	// A baseline the machine marked (another run's real-time threads on
	// CPU 1, the hypervisor) is refused before any question: the trust
	// cases below cannot be reached. Skipped naming the mark.
	s, err := store.ReadSummary(base)
	if err != nil {
		t.Fatal(err)
	}
	if reasons := verdict.Unjudgeable("baseline", s); len(reasons) > 0 {
		t.Skipf("the machine marked the baseline, so check refuses it before asking for trust: %s", strings.Join(reasons, "; "))
	}
	return base, noiseDir
}

// TestCheckReceivedBaseline: check shows what a baseline's own scenario
// would run and runs it only when trusted (issue 23: check ran a received
// baseline's scenario as root without asking, file-write noise into a
// directory its author chose). Refusing runs nothing.
func TestCheckReceivedBaseline(t *testing.T) {
	testutil.Requires(t, testutil.System, testutil.Root, testutil.CPUs(2))
	base, noiseDir := trustBaseline(t)
	plan := []string{"scenario trust: 1 trial (1 variant) of 300ms", "reader timer: SCHED_FIFO priority 80 on CPU 1, every 10ms",
		"noise[0] file_write: 1 thread on CPUs 0, SCHED_OTHER nice 0, writes files in " + noiseDir}
	refused := func(t *testing.T, r result, out, why string) {
		t.Helper()
		if r.code != ExitUsage || !strings.Contains(r.stderr, "the baseline's scenario was not run: "+why) {
			t.Errorf("exit %d, want 2 and %q:\n%s", r.code, why, r.stderr)
		}
		for _, p := range plan {
			if !strings.Contains(r.stderr, p) {
				t.Errorf("the plan lacks %q:\n%s", p, r.stderr)
			}
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("%s exists: something ran", out)
		}
	}
	t.Run("own baseline, no terminal", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new")
		refused(t, runFor(t, time.Minute, "", "check", base, "--out", out, "-q"), out, "stdin is not a terminal to ask on; give --trust-baseline")
	})
	script, err := exec.LookPath("script")
	if err == nil {
		t.Run("own baseline on a terminal, answered no", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new")
			cmd := exec.Command(script, "-qec", binary+" check "+base+" --out "+out+" -q", "/dev/null")
			cmd.Stdin = strings.NewReader("n\n")
			b, _ := cmd.CombinedOutput()
			if !strings.Contains(string(b), "Run it? [y/N]") || !strings.Contains(string(b), "not confirmed") {
				t.Errorf("no question, or no refusal:\n%s", b)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("%s exists: something ran", out)
			}
		})
		t.Run("own baseline on a terminal, answered yes", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new")
			// --budget: a check adds processes for up to 5 minutes by
			// default; what this case asks is only that yes runs it.
			cmd := exec.Command(script, "-qec", binary+" check "+base+" --budget 15s --out "+out+" -q", "/dev/null")
			cmd.Stdin = strings.NewReader("y\n")
			b, _ := cmd.CombinedOutput()
			if _, err := os.Stat(filepath.Join(out, results.SummaryFile)); err != nil || !strings.Contains(string(b), "check: ") || !strings.Contains(string(b), "exit ") {
				t.Errorf("answered yes, nothing judged (%v):\n%s", err, b)
			}
		})
	} else {
		t.Log("no script(1): the terminal cases are not run")
	}
	// Received: owned by another user. The terminal does not help.
	if err := filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, 65534, 65534)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Run("received baseline", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new")
		r := runFor(t, time.Minute, "", "check", base, "--out", out, "-q")
		refused(t, r, out, "its owner is not you")
		if !strings.Contains(r.stderr, "was not written by you ("+filepath.Join(base, results.SummaryFile)+" is owned by uid 65534)") {
			t.Errorf("the owner is not named:\n%s", r.stderr)
		}
	})
	t.Run("received baseline, another scenario named", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new")
		// --budget: a check adds processes for up to 5 minutes by default.
		r := runFor(t, time.Minute, "", "check", base, "timer-only", "--duration", "300ms", "--budget", "15s", "--out", out, "-q")
		if strings.Contains(r.stderr, "was not run") || r.code == ExitUsage {
			t.Errorf("exit %d: naming a scenario needs no trust:\n%s", r.code, r.stderr)
		}
	})
	t.Run("received baseline, --trust-baseline", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "new")
		r := runFor(t, time.Minute, "", "check", base, "--trust-baseline", "--budget", "15s", "--out", out, "-q")
		if _, err := os.Stat(filepath.Join(out, results.SummaryFile)); err != nil || !strings.Contains(r.stderr, "running it (--trust-baseline)") {
			t.Errorf("exit %d: trusted, not run (%v):\n%s", r.code, err, r.stderr)
		}
	})
}

// TestReadersBounded: the bombs of issue 23 through the commands: a gzip
// wakeup log of 1 GiB of rows and a .pb.gz of 10 GiB are refused with the
// limit named, and so is a summary of empty trials; and issue 34's: a
// chunk listed by two readers is refused before anything is read.
func TestReadersBounded(t *testing.T) {
	dir := receivedDir(t)
	os.Remove(filepath.Join(dir, "w.csv"))
	s := gateSummary(1000, 2)
	s.Trials[0].Readers[0].WakeupLog = []string{"w.csv.gz"}
	s.Profiles = []results.VariantProfile{{Variant: "base", Pprof: "p.pb.gz"}}
	testutil.WriteSummary(t, dir, s)
	row := bytes.Repeat([]byte("1,1764612345678901234,4500,9000,450,900,450,0,1,0\n"), (1<<20)/51)
	os.WriteFile(filepath.Join(dir, "w.csv.gz"), append(gzipOnce(t, []byte(wakelog.Header+"\n")), bytes.Repeat(gzipOnce(t, row), 1024)...), 0o644)
	os.WriteFile(filepath.Join(dir, "p.pb.gz"), bytes.Repeat(gzipOnce(t, make([]byte, 1<<20)), 10<<10), 0o644)
	for _, args := range [][]string{{"compare", dir}, {"explain", dir}, {"plot", dir, "--out", filepath.Join(t.TempDir(), "p.png")}} {
		r := runFor(t, time.Minute, "", args...)
		if !strings.Contains(r.stdout+r.stderr, "w.csv.gz:") || !strings.Contains(r.stdout+r.stderr, "gzip stream inflates past its limit") {
			t.Errorf("%v: exit %d, no refusal of the wakeup log:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if args[0] == "explain" && !strings.Contains(r.stdout, "p.pb.gz: gzip stream inflates past its limit") {
			t.Errorf("explain: no refusal of the profile:\n%s", r.stdout)
		}
	}
	for i := range s.Trials {
		s.Trials[i].Readers[0].WakeupLog = []string{"w.csv.gz"}
	}
	testutil.WriteSummary(t, dir, s)
	for name, args := range readingCommands(dir, t.TempDir()) {
		r := runFor(t, time.Minute, "", args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, `trial 1 reader 0: wakeup_log: "w.csv.gz" is listed already (by trial 0 reader 0): refused`) {
			t.Errorf("%s: a chunk listed twice: exit %d\n%s", name, r.code, r.stderr)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, results.SummaryFile), []byte(`{"version":2,"trials":[`+strings.Repeat("{},", 25<<20/3)+`{}]}`), 0o644)
	if r := runFor(t, time.Minute, "", "report", empty); r.code != ExitUsage || !strings.Contains(r.stderr, "trials: more than 65536 entries") {
		t.Errorf("25 MB of empty trials: exit %d\n%s", r.code, r.stderr)
	}
}

// gzipOnce compresses b as one gzip member.
func gzipOnce(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
