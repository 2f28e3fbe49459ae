package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/net/netns"
)

func newCleanupCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove network namespaces (and the tap devices in them) left by dead rtload runs",
		Long: `Every network namespace rtload creates is named rtl<pid>-<run id> and bind-mounted
in /run/netns. A run killed with SIGKILL cannot delete its own: cleanup (and
the start of every run that needs a namespace) removes those whose owner pid
is gone. It never touches a namespace of a live run, nor anything not named
by rtload; tap devices live only inside rtload's namespaces and vanish with them.`,
		Example: `  rtload cleanup
  rtload cleanup --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if dryRun {
				ents, err := netns.List()
				if err != nil {
					return err
				}
				for _, e := range ents {
					state := "dead: would remove"
					if e.Alive {
						state = "alive: kept"
					}
					fmt.Fprintf(out, "%s\tpid %d\t%s\n", e.Name, e.PID, state)
				}
				if len(ents) == 0 {
					fmt.Fprintln(out, "no rtload namespaces")
				}
				return nil
			}
			removed, err := netns.Sweep()
			for _, n := range removed {
				fmt.Fprintf(out, "removed %s\n", n)
			}
			if err == nil && len(removed) == 0 {
				fmt.Fprintln(out, "nothing to clean up")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list rtload namespaces and what would be removed")
	return cmd
}
