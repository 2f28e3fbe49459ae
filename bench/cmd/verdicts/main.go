// Command verdicts measures rtload's verdicts: the variance components of
// a pilot, and (verdicts.sh) the A/A and power counts of rtload check.
//
//	go run ./bench/cmd/verdicts pilot DIR...            variance components
//	go run ./bench/cmd/verdicts tally CHECK.json...      A/A or power counts
//	go run ./bench/cmd/verdicts pool DIR... -- DIR...    a change's size, pooled
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: verdicts pilot DIR... | tally CHECK.json... | pool DIR... -- DIR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pilot":
		err = pilot(os.Stdout, os.Args[2:])
	case "tally":
		err = tally(os.Stdout, os.Args[2:])
	case "pool":
		err = pool(os.Stdout, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}
