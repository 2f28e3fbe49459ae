package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// floor is one floor of docs/design.md's package map: its name and the
// packages its rows name ("dir/..." for every package below dir).
type floor struct {
	name string
	pkgs []string
}

// designFloors parses the package map of docs/design.md ("## Architecture:
// the package map"): a table whose rows are | floor | package | owns |,
// top to bottom. Consecutive rows with the same floor name ("ground") are
// one floor; a name that comes back after another floor is an error, as
// is a package named on two floors.
func designFloors(t *testing.T) []floor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([^`]+)`")
	var floors []floor
	seen := map[string]string{} // package → floor
	inMap := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			inMap = strings.Contains(l, "package map")
			continue
		}
		if !inMap || !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| floor ") {
			continue
		}
		cells := strings.Split(l, " | ")
		if len(cells) < 3 {
			continue
		}
		name := strings.TrimSpace(strings.TrimPrefix(cells[0], "| "))
		if n := len(floors); n == 0 || floors[n-1].name != name {
			if slices.ContainsFunc(floors, func(f floor) bool { return f.name == name }) {
				t.Errorf("design.md's package map: floor %q comes back below another floor: its rows must be together", name)
			}
			floors = append(floors, floor{name: name})
		}
		f := &floors[len(floors)-1]
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			if other, dup := seen[m[1]]; dup {
				t.Errorf("design.md's package map names %s on floor %q and on floor %q", m[1], other, name)
			}
			seen[m[1]] = name
			f.pkgs = append(f.pkgs, m[1])
		}
	}
	if len(floors) < 2 {
		t.Fatalf("design.md's package map: %d floors found, want the table | floor | package | owns |", len(floors))
	}
	return floors
}

// floorOf returns the index (0 at the top) of the floor that holds the
// package rel, by its exact name, else by the longest "dir/..." entry
// that covers it; -1 when no floor names it.
func floorOf(floors []floor, rel string) int {
	at, best := -1, -1
	for i, f := range floors {
		for _, p := range f.pkgs {
			if p == rel {
				return i
			}
			if base, ok := strings.CutSuffix(p, "/..."); ok && (rel == base || strings.HasPrefix(rel, base+"/")) && len(base) > best {
				at, best = i, len(base)
			}
		}
	}
	return at
}

// TestFloors: docs/design.md's package map is the truth about the floors.
// Every package of the module is on a floor of the table, and none
// imports (non-test imports: tests may use any floor, and their helpers
// in internal/testutil) a package of the module on a floor above its
// own. Packages of one floor may import each other (noise imports
// workload, interop results, net/tap net/udp): the table's rows group
// them, and Go forbids the cycle.
func TestFloors(t *testing.T) {
	floors := designFloors(t)
	mod, modPath, _ := load(t)
	var rels []string
	for rel := range mod {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	for _, rel := range rels {
		from := floorOf(floors, rel)
		if from < 0 {
			t.Errorf("package %s is on no floor of design.md's package map", rel)
			continue
		}
		for _, imp := range mod[rel].Imports {
			dep, ok := strings.CutPrefix(imp, modPath+"/")
			if !ok {
				continue // the standard library and other modules
			}
			if to := floorOf(floors, dep); to >= 0 && to < from {
				t.Errorf("%s (floor %q) imports %s (floor %q, above it)", rel, floors[from].name, dep, floors[to].name)
			}
		}
	}
}

// TestFloorsParse: a package is on the floor that names it, else on the
// floor of the longest "dir/..." entry that covers it.
func TestFloorsParse(t *testing.T) {
	floors := []floor{
		{"tooling", []string{"internal/..."}},
		{"command", []string{"cmd/rtload"}},
		{"ground", []string{"rt", "net/udp"}},
		{"leaves", []string{"internal/cpulist", "internal/x/..."}},
	}
	for _, c := range []struct {
		rel  string
		want int
	}{
		{"cmd/rtload", 1},
		{"net/udp", 2},           // the second package of a floor
		{"internal/cpulist", 3},  // named: its name wins over internal/...
		{"internal/x/y", 3},      // the longer dir/... entry wins
		{"internal/x", 3},        // dir/... covers dir itself
		{"internal/testutil", 0}, // by internal/...
		{"net/tap", -1},          // on no floor
		{"cmd", -1},              // a prefix of a package is not one
	} {
		if got := floorOf(floors, c.rel); got != c.want {
			t.Errorf("floorOf(%s) = %d, want %d", c.rel, got, c.want)
		}
	}
}
