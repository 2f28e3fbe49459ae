package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/workload"
)

func newCleanupCmd() *cobra.Command {
	var dryRun bool
	var dirs []string
	var format string
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove network namespaces (and the tap devices in them) and fstime files left by dead rtload runs",
		Long: `A run killed with SIGKILL cannot clean up after itself. cleanup removes what
such runs left, and prints each thing it removed or kept with the reason:

  - network namespaces named rtl<pid>-<run id> in /run/netns (tap devices live
    only inside them and vanish with them); the start of every run that needs
    a namespace does the same;
  - file_write directories and files named rtload-fstime-<pid>-<random> in the
    temporary directory ($TMPDIR or /tmp) and in each --dir.

Only what rtload makes is touched, and only when its owner pid is gone: an
empty namespace file or an fstime directory or regular file, owned by this
user, never through a symbolic link. Anything else of such a name is kept and
said so. Exit status 1 when a removal failed.`,
		Example: `  rtload cleanup
  rtload cleanup --dry-run
  rtload cleanup --dir /scratch/fstime
  rtload cleanup --dry-run --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			doc, err := cleanup(append([]string{os.TempDir()}, dirs...), dryRun)
			if format == "json" {
				return errors.Join(compare.WriteJSON(cmd.OutOrStdout(), doc), err)
			}
			return errors.Join(doc.text(cmd.OutOrStdout()), err)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed and what is kept, and why")
	cmd.Flags().StringArrayVar(&dirs, "dir", nil, "also sweep this file_write dir: (repeatable)")
	formatFlag(cmd, &format, textJSON, "schema "+SchemaCleanup+": each entry with its action and reason")
	return cmd
}

// cleanupDoc is what rtload cleanup did (--format json: schema
// rtload-cleanup).
type cleanupDoc struct {
	Schema  string         `json:"schema"`
	Version int            `json:"version"`
	DryRun  bool           `json:"dry_run"`
	Entries []cleanupEntry `json:"entries"`
	Notes   []string       `json:"notes,omitempty"`
	// Errors are the removals that failed (exit 1).
	Errors []string `json:"errors,omitempty"`
}

// cleanupEntry is one namespace or fstime leftover: Action is "removed",
// "would remove" or "kept", Why the reason.
type cleanupEntry struct {
	Kind   string `json:"kind"` // "namespace" or "fstime leftover"
	Name   string `json:"name"`
	Action string `json:"action"`
	Why    string `json:"why"`
}

// cleanup sweeps rtload's namespaces and the fstime leftovers in dirs (or,
// with dryRun, only lists them).
func cleanup(dirs []string, dryRun bool) (*cleanupDoc, error) {
	doc := &cleanupDoc{Schema: SchemaCleanup, Version: SchemaVersion, DryRun: dryRun, Entries: []cleanupEntry{}}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	var errs []error
	add := func(kind, name, action, why string) {
		doc.Entries = append(doc.Entries, cleanupEntry{kind, name, action, why})
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

// text prints one line per entry, and the notes.
func (d *cleanupDoc) text(out io.Writer) error {
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
