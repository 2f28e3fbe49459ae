package results

// Interleave says that a trial's variant shared its measured window with
// the other variants of its group (scenario `interleave:`): one process,
// one set of sockets, senders and noise, and for each reader one real-time
// thread that alternated the variants' receivers and recorders in ABBA
// blocks of BlockNs. Each variant keeps its own results.Trial (Index,
// Variant, its own histograms and counts, summed over its blocks); the
// trials of one group share Group and the window. Blocks are this
// variant's blocks, with their headline sums: the samples the paired
// verdict (stats.Paired, compare) is computed from.
type Interleave struct {
	// Group is the Index of the group's first trial: the trials of one
	// group (one round) share it.
	Group int `json:"group"`
	// BlockNs is the block length (ns); WindowNs the group's whole
	// measured window (ns): every variant's blocks together.
	BlockNs  int64 `json:"block_ns"`
	WindowNs int64 `json:"window_ns"`
	// Order is the variants in block order over the first ABBA cycle
	// (["recvfrom", "recvmsg", "recvmsg", "recvfrom"]): block Seq ran
	// Order[Seq mod len(Order)].
	Order []string `json:"order"`
	// Blocks are this variant's measured blocks, every reader's, in Seq
	// order per reader.
	Blocks []Block `json:"blocks"`
	// BlocksDropped counts blocks the loop had no room to keep (none
	// when the window ran as planned).
	BlocksDropped uint64 `json:"blocks_dropped,omitempty"`
}

// Block is one block of an interleaved trial: the ticks whose deadline
// fell in [StartNs, EndNs) (ns from the start of the measured window),
// all run by one variant on one reader. Calls, Data and EAGAIN count its
// measured recv calls (as results.Reader's fields do) and SumTicks is the
// sum of their per-call clock ticks, so SumTicks / Calls is the block's
// mean per-call cost; Ticks counts its measured wakeups, MissedTicks the
// ticks skipped before them, Messages the messages it read, and
// WakeupMaxNs is its largest wakeup latency (ns).
type Block struct {
	// Seq is the block's number in the trial, over every variant, from 0.
	Seq int `json:"seq"`
	// Reader is the index of the reader (Trial.Readers) that ran it.
	Reader      int    `json:"reader,omitempty"`
	StartNs     int64  `json:"start_ns"`
	EndNs       int64  `json:"end_ns"`
	Ticks       uint64 `json:"ticks"`
	MissedTicks uint64 `json:"missed_ticks,omitempty"`
	Calls       uint64 `json:"calls"`
	Data        uint64 `json:"data_calls"`
	EAGAIN      uint64 `json:"eagain_calls"`
	SumTicks    uint64 `json:"sum_ticks"`
	Messages    uint64 `json:"messages"`
	WakeupMaxNs int64  `json:"wakeup_max_ns"`
	// Controls are the block's drift-control sums (results.Controls);
	// nil when its reader timed none.
	Controls *BlockControls `json:"controls,omitempty"`
}

// MeanTicks is the block's mean per-call cost in clock ticks (0 for a
// block without calls).
func (b Block) MeanTicks() float64 {
	if b.Calls == 0 {
		return 0
	}
	return float64(b.SumTicks) / float64(b.Calls)
}
