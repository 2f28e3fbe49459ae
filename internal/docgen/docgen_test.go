package docgen

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// updateDocs is set by `make docs` (-update-docs=all): the tests then
// write what they generate instead of comparing it.
var updateDocs = flag.String("update-docs", "", "all: write docs/scenario.md (make docs) instead of checking it")

const docsDir = "../../docs"

// TestDocsScenario fails when docs/scenario.md is not what scenario.Reference
// and scenario.md.tmpl generate: a default, a range or an allowed value
// changed in scenario/ without `make docs`.
func TestDocsScenario(t *testing.T) {
	b, err := Scenario()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{ScenarioPath: b}
	if *updateDocs == "all" {
		if err := Write(docsDir, files); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, s := range Stale(docsDir, files) {
		t.Errorf("%s: run `make docs` and commit the result", s)
	}
}

// TestScenarioTable: one row per field, and the table is well-formed
// markdown (four cells a row: no unescaped | in a cell).
func TestScenarioTable(t *testing.T) {
	b, err := Scenario()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		rows++
		if n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(l, -1)); n != 5 {
			t.Errorf("row with %d cell separators, want 5: %s", n, l)
		}
	}
	if rows < 90 {
		t.Errorf("%d field rows; want one per field (90+)", rows)
	}
}

// TestDocsPackageMap: the package map in docs/design.md names every
// package of the module (a "dir/..." entry covers every package below
// dir, or names dir's own module when dir holds a go.mod: bench/), names
// no package that does not exist, and every file it names (`name.go`) is
// in one of its row's packages.
func TestDocsPackageMap(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsDir, "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := modulePackages(t, "../..")
	tick := regexp.MustCompile("`([^`]+)`")
	var named []string
	rowsSeen := 0
	inMap := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			inMap = strings.Contains(l, "package map")
			continue
		}
		if !inMap || !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| floor") {
			continue
		}
		cells := strings.Split(l, " | ")
		if len(cells) < 3 {
			continue
		}
		rowsSeen++
		var rowPkgs []string
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			p := m[1]
			named = append(named, p)
			rowPkgs = append(rowPkgs, p)
			if base, ok := strings.CutSuffix(p, "/..."); ok {
				if _, err := os.Stat(filepath.Join("../..", base, "go.mod")); err == nil {
					continue // a module of its own in the repository (bench/): none of the product's packages
				}
				if !slices.ContainsFunc(pkgs, func(q string) bool { return q == base || strings.HasPrefix(q, base+"/") }) {
					t.Errorf("design.md's package map names %s: no package below %s", p, base)
				}
			} else if !slices.Contains(pkgs, p) {
				t.Errorf("design.md's package map names package %s, which does not exist", p)
			}
		}
		for _, m := range tick.FindAllStringSubmatch(strings.Join(cells[2:], " | "), -1) {
			f := m[1]
			if !regexp.MustCompile(`^[a-z0-9_]+\.go$`).MatchString(f) {
				continue
			}
			found := slices.ContainsFunc(rowPkgs, func(p string) bool {
				_, err := os.Stat(filepath.Join("../..", p, f))
				return err == nil
			})
			if !found {
				t.Errorf("design.md's package map names %s in %v: no such file", f, rowPkgs)
			}
		}
	}
	if rowsSeen == 0 {
		t.Fatal("no package map table in docs/design.md")
	}
	for _, p := range pkgs {
		covered := slices.ContainsFunc(named, func(n string) bool {
			base, wild := strings.CutSuffix(n, "/...")
			return n == p || (wild && (p == base || strings.HasPrefix(p, base+"/")))
		})
		if !covered {
			t.Errorf("package %s is missing from design.md's package map", p)
		}
	}
}

// modulePackages lists the module's packages below root (directories with
// a non-test .go file, testdata and hidden directories left out), as
// paths relative to root. A directory with a go.mod of its own is another
// module and is left out.
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			if rel != "." {
				set[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
