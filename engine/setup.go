package engine

import (
	"fmt"
	"math/rand/v2"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/results"
)

// Setup is what a process of a multi-process run (rtload run --processes,
// issue 24) randomises where the scenario leaves it free, so that each
// process is an independent sample of the layout the kernel and the Go
// runtime give it, as hyperfine and Stabilizer (Curtsinger & Berger,
// ASPLOS 2013) randomise what a benchmark does not control:
//
//   - the order the sockets of each UDP endpoint are created and bound in
//     (udp.Config.Order): their fds, socket objects and slab placement;
//   - the offset of each reader's receive buffers into their allocation
//     (udp.NewReceiverAt), a multiple of 64 bytes below 4 KiB: cache-line
//     and page alignment of what recv copies into.
//
// The environment size (the third, as hyperfine pads it) is the parent's
// to vary: it sets the child's environment before exec. The zero Setup
// (Seed 0) randomises nothing: a single-process run as before.
type Setup struct {
	Seed uint64
}

// rng is the source for one draw kind and item: the same Seed gives the
// same order and offsets to every trial of the process.
func (s Setup) rng(kind, item int) *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed, uint64(kind)<<32|uint64(item)))
}

// SocketOrder is the creation order of endpoint e's n sockets, nil for
// Seed 0 (index order).
func (s Setup) SocketOrder(e, n int) []int {
	if s.Seed == 0 {
		return nil
	}
	return s.rng(1, e).Perm(n)
}

// BufOffset is reader i's receive buffer offset in bytes, 0 for Seed 0.
func (s Setup) BufOffset(i int) int {
	if s.Seed == 0 {
		return 0
	}
	return 64 * s.rng(2, i).IntN(udp.MaxBufOffset/64)
}

// processFile is a run-wide file's name for this process: name itself in
// a single-process run, "spikes-p03.jsonl" for process 3 of several.
func (o Options) processFile(name string) string {
	if o.Processes <= 1 {
		return name
	}
	return results.ProcessFile(name, o.Process)
}

// logPrefix prefixes the per-wakeup log names of a process of several:
// "p03-".
func (o Options) logPrefix() string {
	if o.Processes <= 1 {
		return ""
	}
	return fmt.Sprintf("p%02d-", o.Process)
}
