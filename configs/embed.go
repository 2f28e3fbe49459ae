// Package configs holds rtload's built-in scenarios, embedded in the
// binary. laight-450 (seed 000) is the default.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Default is the scenario `rtload run` uses without an argument.
const Default = "laight-450"

// Entry is one embedded scenario.
type Entry struct {
	// Name is the file name without ".yaml".
	Name string
	// Description is the scenario's description field (one line).
	Description string
}

// Read returns the YAML of the embedded scenario name (with or without ".yaml").
func Read(name string) ([]byte, error) {
	name = strings.TrimSuffix(name, ".yaml")
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in scenario %q (see rtload list)", name)
	}
	return b, nil
}

// List returns every embedded scenario, sorted by name. The description is
// read from the file's `description:` line without a YAML parser, so this
// package stays stdlib-only.
func List() []Entry {
	ents, _ := fs.Glob(files, "*.yaml")
	sort.Strings(ents)
	var out []Entry
	for _, f := range ents {
		b, _ := files.ReadFile(f)
		e := Entry{Name: strings.TrimSuffix(f, ".yaml")}
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "description:"); ok {
				e.Description = strings.Trim(strings.TrimSpace(d), `"'`)
				break
			}
		}
		out = append(out, e)
	}
	return out
}
