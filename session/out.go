package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
)

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
// first. Each default name is made with mkdir(2) (results.CreateNewDir),
// so no two runs share a directory and an existing one is never reused.
func createOut(out, scenarioName string, now time.Time) (*results.Dir, bool, error) {
	if out != "" {
		return results.CreateDir(out)
	}
	base := defaultOut(scenarioName, now)
	for i := 1; i <= maxDefaultSuffix; i++ {
		path := base
		if i > 1 {
			path = fmt.Sprintf("%s-%d", base, i)
		}
		d, err := results.CreateNewDir(path)
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
