package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/workload"
)

func newCleanupCmd() *cobra.Command {
	var dryRun bool
	var dirs []string
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
  rtload cleanup --dir /scratch/fstime`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cleanup(cmd.OutOrStdout(), append([]string{os.TempDir()}, dirs...), dryRun)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed and what is kept, and why")
	cmd.Flags().StringArrayVar(&dirs, "dir", nil, "also sweep this file_write dir: (repeatable)")
	return cmd
}

// cleanup sweeps rtload's namespaces and the fstime leftovers in dirs (or,
// with dryRun, only lists them) and prints one line per entry.
func cleanup(out io.Writer, dirs []string, dryRun bool) error {
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	var errs []error
	n := 0
	ents, err := netns.List()
	errs = append(errs, err)
	for _, e := range ents {
		if e.Stale() && !dryRun {
			continue // printed below, once removed
		}
		fmt.Fprintf(out, "%s namespace %s: %s\n", keepOr(e.Stale(), verb), e.Name, e.Why)
		n++
	}
	if !dryRun {
		removed, err := netns.Sweep()
		errs = append(errs, err)
		for _, e := range removed {
			fmt.Fprintf(out, "removed namespace %s: %s\n", e.Name, e.Why)
			n++
		}
	}
	for _, dir := range dirs {
		list, err := workload.ListLeftovers(dir)
		errs = append(errs, err)
		for _, l := range list {
			if l.Stale && !dryRun {
				continue
			}
			fmt.Fprintf(out, "%s fstime leftover %s: %s\n", keepOr(l.Stale, verb), l.Path, l.Why)
			n++
		}
		if !dryRun {
			removed, err := workload.SweepLeftovers(dir)
			errs = append(errs, err)
			for _, l := range removed {
				fmt.Fprintf(out, "removed fstime leftover %s: %s\n", l.Path, l.Why)
				n++
			}
		}
	}
	if n == 0 {
		fmt.Fprintln(out, "nothing to clean up: no rtload namespaces or fstime leftovers")
	}
	if note := engine.TracingOff(); note != "" {
		fmt.Fprintln(out, "note: "+note)
	}
	return errors.Join(errs...)
}

// keepOr returns verb for an entry to be removed, "kept" for the others.
func keepOr(stale bool, verb string) string {
	if stale {
		return verb
	}
	return "kept"
}
