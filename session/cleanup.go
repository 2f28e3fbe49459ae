package session

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/workload"
)

// Schemas of the session's JSON documents (rtload validate, cleanup, list
// and plot --format json), and their version: fields are only ever added.
const (
	SchemaValidate = "rtload-validate"
	SchemaCleanup  = "rtload-cleanup"
	SchemaList     = "rtload-list"
	SchemaPlot     = "rtload-plot"
	SchemaVersion  = 1
)

// CleanupDoc is what rtload cleanup did (--format json: schema
// rtload-cleanup).
type CleanupDoc struct {
	Schema  string         `json:"schema"`
	Version int            `json:"version"`
	DryRun  bool           `json:"dry_run"`
	Entries []CleanupEntry `json:"entries"`
	Notes   []string       `json:"notes,omitempty"`
	// Errors are the removals that failed (exit 1).
	Errors []string `json:"errors,omitempty"`
}

// CleanupEntry is one namespace or fstime leftover: Action is "removed",
// "would remove" or "kept", Why the reason.
type CleanupEntry struct {
	Kind   string `json:"kind"` // "namespace" or "fstime leftover"
	Name   string `json:"name"`
	Action string `json:"action"`
	Why    string `json:"why"`
}

// Cleanup sweeps rtload's namespaces and the fstime leftovers in dirs (or,
// with dryRun, only lists them).
func Cleanup(dirs []string, dryRun bool) (*CleanupDoc, error) {
	doc := &CleanupDoc{Schema: SchemaCleanup, Version: SchemaVersion, DryRun: dryRun, Entries: []CleanupEntry{}}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	var errs []error
	add := func(kind, name, action, why string) {
		doc.Entries = append(doc.Entries, CleanupEntry{kind, name, action, why})
	}
	ents, err := netns.List()
	errs = append(errs, err)
	for _, e := range ents {
		if e.Stale() && !dryRun {
			continue // listed below, once removed
		}
		add("namespace", e.Name, keepOr(e.Stale(), verb), e.Why)
	}
	if !dryRun {
		removed, err := netns.Sweep()
		errs = append(errs, err)
		for _, e := range removed {
			add("namespace", e.Name, "removed", e.Why)
		}
	}
	for _, dir := range dirs {
		list, err := workload.ListLeftovers(dir)
		errs = append(errs, err)
		for _, l := range list {
			if l.Stale && !dryRun {
				continue
			}
			add("fstime leftover", l.Path, keepOr(l.Stale, verb), l.Why)
		}
		if !dryRun {
			removed, err := workload.SweepLeftovers(dir)
			errs = append(errs, err)
			for _, l := range removed {
				add("fstime leftover", l.Path, "removed", l.Why)
			}
		}
	}
	if note := engine.TracingOff(); note != "" {
		doc.Notes = append(doc.Notes, note)
	}
	err = errors.Join(errs...)
	if err != nil {
		doc.Errors = append(doc.Errors, err.Error())
	}
	return doc, err
}

// Text prints one line per entry, and the notes.
func (d *CleanupDoc) Text(out io.Writer) error {
	var b strings.Builder
	for _, e := range d.Entries {
		fmt.Fprintf(&b, "%s %s %s: %s\n", e.Action, e.Kind, e.Name, e.Why)
	}
	if len(d.Entries) == 0 {
		b.WriteString("nothing to clean up: no rtload namespaces or fstime leftovers\n")
	}
	for _, n := range d.Notes {
		b.WriteString("note: " + n + "\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// keepOr returns verb for an entry to be removed, "kept" for the others.
func keepOr(stale bool, verb string) string {
	if stale {
		return verb
	}
	return "kept"
}
