package session

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/rtload/rtload/configs"
)

// ListDoc is rtload list's result (--format json: schema rtload-list).
type ListDoc struct {
	Schema    string      `json:"schema"`
	Version   int         `json:"version"`
	Scenarios []ListEntry `json:"scenarios"`
}

// ListEntry is one built-in scenario; Default marks the one run runs
// without an argument.
type ListEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default,omitempty"`
}

// List is every built-in scenario with its one-line description.
func List() *ListDoc {
	doc := &ListDoc{Schema: SchemaList, Version: SchemaVersion, Scenarios: []ListEntry{}}
	for _, e := range configs.List() {
		doc.Scenarios = append(doc.Scenarios, ListEntry{e.Name, e.Description, e.Name == configs.Default})
	}
	return doc
}

// Text prints one scenario a line, its description in a column.
func (d *ListDoc) Text(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, e := range d.Scenarios {
		def := ""
		if e.Default {
			def = " (default)"
		}
		fmt.Fprintf(w, "%s%s\t%s\n", e.Name, def, e.Description)
	}
	return w.Flush()
}
