//go:build !(linux && amd64 && cgo)

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main refuses: the C side is drain450.c's loop compiled in through cgo,
// timed with x86 rdtscp, and the reader is a Linux SCHED_FIFO thread.
func main() {
	fmt.Fprintf(os.Stderr, "fidelity: needs linux/amd64 with cgo (this build: %s/%s, cgo off or unsupported)\n", runtime.GOOS, runtime.GOARCH)
	os.Exit(3)
}
