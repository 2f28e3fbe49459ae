package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/session"
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
			doc, err := session.Cleanup(append([]string{os.TempDir()}, dirs...), dryRun)
			if format == "json" {
				return errors.Join(compare.WriteJSON(cmd.OutOrStdout(), doc), err)
			}
			return errors.Join(doc.Text(cmd.OutOrStdout()), err)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed and what is kept, and why")
	cmd.Flags().StringArrayVar(&dirs, "dir", nil, "also sweep this file_write dir: (repeatable)")
	formatFlag(cmd, &format, textJSON, "schema "+SchemaCleanup+": each entry with its action and reason")
	return cmd
}
