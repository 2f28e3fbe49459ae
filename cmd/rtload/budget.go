package main

import (
	"time"

	"github.com/spf13/cobra"
)

// A reading command's CPU budget (--cpu-budget): session.CPUBudget.

// defaultCPUBudget is generous for what rtload writes: comparing two
// soaks' results takes seconds.
const defaultCPUBudget = 2 * time.Minute

// cpuBudgetFlag adds --cpu-budget to cmd.
func cpuBudgetFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "cpu-budget", defaultCPUBudget, "stop with exit 2 after this much CPU time reading and rendering results (0: no limit); results from elsewhere can be crafted to cost hours")
}
