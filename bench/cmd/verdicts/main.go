// Command verdicts measures rtload's verdicts: the variance components of
// a pilot, and (verdicts.sh) the A/A and power counts of rtload check.
//
//	go run ./bench/cmd/verdicts pilot DIR...
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: verdicts pilot DIR...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pilot":
		err = pilot(os.Stdout, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdicts:", err)
		os.Exit(1)
	}
}
