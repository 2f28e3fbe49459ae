package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/sysinfo"
)

// outDir is the run's results directory while the run holds it.
type outDir struct {
	dir     *store.Dir
	path    string
	created bool
	// parentErr: the parent did not exist before (removed with an empty
	// directory).
	parentErr error
	own       owner
	errw      io.Writer
	removed   bool
}

// openOut creates the results directory (or takes over a killed run's),
// sweeping the namespaces a killed run left, and says where it is, on
// the host too when in a container; in a container as root, results into
// a volume another user owns are given to that user at the end
// (resultsOwner).
func (s *session) openOut() error {
	errw, name, out := s.opt.Log, s.plan.Spec.Name, s.opt.Out
	_, parentErr := os.Stat(resultsParent())
	if out != "" {
		_, parentErr = os.Stat(filepath.Dir(out))
	}
	now := time.Now()
	target := out
	if target == "" {
		target = defaultOut(name, now)
	}
	own := resultsOwner(s.env.Container, os.Geteuid(), target)
	mounts := sysinfo.ReadMounts(os.DirFS("/"))
	trustVolume(own, mounts)
	dir, created, err := createOut(out, name, now)
	switch {
	case errors.Is(err, safeio.ErrUnsafeDir) && out == "":
		return UsageError{fmt.Errorf("%w (the default results directory: give --out)", err)}
	case errors.Is(err, safeio.ErrUnsafeDir):
		return UsageError{fmt.Errorf("%w (--out)", err)}
	case err != nil:
		return err
	}
	path := dir.Path()
	s.o.Path = path
	s.out = &outDir{dir: dir, path: path, created: created, parentErr: parentErr, own: own, errw: errw}
	fmt.Fprintf(errw, "rtload: results go to %s\n", termsafe.Escape(path))
	if took := dir.TakenOver(); took != "" {
		fmt.Fprintf(errw, "rtload: results directory %s: %s\n", termsafe.Escape(path), termsafe.Escape(took))
		sweepNamespaces(errw)
	}
	if note := volumeNote(s.env.Container, mounts, path, own); note != "" {
		fmt.Fprintln(errw, note)
	}
	return nil
}

// sweepNamespaces removes every namespace whose run is gone: a killed
// run leaves its namespaces (and a --processes child's, killed with its
// parent).
func sweepNamespaces(errw io.Writer) {
	removed, err := netns.Sweep()
	for _, e := range removed {
		fmt.Fprintf(errw, "rtload: removed namespace %s left by a dead run: %s\n", e.Name, e.Why)
	}
	if err != nil {
		fmt.Fprintf(errw, "rtload: warning: sweeping leftover namespaces: %v (rtload cleanup removes them)\n", err)
	}
}

// removeIfEmpty removes a directory the run created and measured nothing
// into (only if empty: never removes results), and its parent when the
// run made that too.
func (d *outDir) removeIfEmpty() {
	d.removed = true
	d.dir.Close() // releases the directory's lock file first
	if d.created {
		os.Remove(d.path)
		if d.parentErr != nil {
			os.Remove(filepath.Dir(d.path))
		}
	}
}

// close hands the results to their owner (unless removed), then closes
// the directory.
func (d *outDir) close() {
	if d.own.ok && !d.removed {
		handOver(d.errw, d.dir, d.own)
	}
	d.dir.Close()
}

// writtenFiles lists the files of the results directory path, as they
// are now: summary.json and the interop files by name, wakeup logs and
// profiles by count ("4 wakeup logs (wakeups-*.csv)"); "" when it cannot be
// read.
func writtenFiles(path string) string {
	ents, err := os.ReadDir(path)
	if err != nil {
		return ""
	}
	var names []string
	groups := map[string]int{}
	var order []string
	for _, e := range ents {
		n := e.Name()
		g := ""
		switch {
		case strings.HasPrefix(n, "wakeups-"):
			g = "wakeup logs (wakeups-*)"
		case strings.HasPrefix(n, "profile-"):
			g = "profile files (profile-*)"
		case strings.HasPrefix(n, "."):
			continue // a temporary file being written
		}
		if g == "" {
			names = append(names, n)
			continue
		}
		if groups[g] == 0 {
			order = append(order, g)
		}
		groups[g]++
	}
	for _, g := range order {
		names = append(names, fmt.Sprintf("%d %s", groups[g], g))
	}
	return termsafe.Escape(strings.Join(names, ", "))
}

// maxDefaultSuffix bounds the names createOut tries for one second.
const maxDefaultSuffix = 100

// createOut creates the run's results directory: out (--out) when given,
// else rtload-results/<scenario>-<YYYYMMDD-HHMMSS> (defaultOut), or with -2, -3, … up to
// -maxDefaultSuffix when runs started in the same second took the name
// first. Each default name is made with mkdir(2) (store.CreateNewDir),
// so no two runs share a directory and an existing one is never reused.
func createOut(out, scenarioName string, now time.Time) (*store.Dir, bool, error) {
	if out != "" {
		return store.CreateDir(out)
	}
	base := defaultOut(scenarioName, now)
	for i := 1; i <= maxDefaultSuffix; i++ {
		path := base
		if i > 1 {
			path = fmt.Sprintf("%s-%d", base, i)
		}
		d, err := store.CreateNewDir(path)
		if err == nil {
			return d, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
	}
	return nil, false, fmt.Errorf("results directory %s: it and %s-2 … -%d exist already: give --out", base, base, maxDefaultSuffix)
}

// defaultResults is the directory, relative to the working directory,
// that a run's default results directory is made in (createOut), unless
// $RTLOAD_RESULTS (resultsEnv) names another: the image sets it to its
// volume, /results. It holds run output only, so `make clean` removes it
// whole and .gitignore lists it once. Until issue 26 runs went to
// results/<scenario>-<time>/, inside the source tree's results package;
// --out results/NAME (or RTLOAD_RESULTS=results) still puts one there.
const defaultResults = "rtload-results"

// resultsEnv names the environment variable that replaces defaultResults.
const resultsEnv = "RTLOAD_RESULTS"

// resultsParent is where default results directories go: $RTLOAD_RESULTS,
// else defaultResults.
func resultsParent() string {
	if d := os.Getenv(resultsEnv); d != "" {
		return d
	}
	return defaultResults
}

// defaultOut is the default results directory of a run of scenarioName
// started at now: <resultsParent>/<scenario>-<YYYYMMDD-HHMMSS> (createOut
// adds -2, -3, … when taken).
func defaultOut(scenarioName string, now time.Time) string {
	return filepath.Join(resultsParent(), fmt.Sprintf("%s-%s", scenarioName, now.Format("20060102-150405")))
}
