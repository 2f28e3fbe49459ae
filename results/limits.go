package results

import "fmt"

// SummaryFile is the name of the summary inside a results directory.
const SummaryFile = "summary.json"

// SummaryVersion is the Summary format version rtload writes (package
// results/store). store.DecodeSummary reads it and versions 1 and 2.
// Version 3 added Trial.Process (rtload run --processes: a version 2
// summary reads with every trial in process 0), typed Env and Spec (the
// same JSON as before), one list of marks per trial (Trial.Marks, read
// from version 2's five fields: results/store's legacy.go), Applied with
// the thread's name, and ClockInfo.CoreTSCRatio.
const SummaryVersion = 3

// Schema limits, checked by store.ReadSummary and store.DecodeSummary
// before anything uses the data: a summary past them is refused with an
// error naming the limit, so that no reader runs for minutes or exhausts
// memory on a hostile or corrupt file.
const (
	// MaxSummaryBytes is the largest summary.json read.
	MaxSummaryBytes = 256 << 20
	// MaxBuckets is the most buckets one linear histogram may hold (the
	// scenario's report layout: (overflow − origin) / bucket_width + 1).
	MaxBuckets = 1 << 16
	// MaxTrials and MaxReaders bound a summary's trials and a trial's
	// readers (and probes, traffic and noise entries).
	MaxTrials  = 1 << 16
	MaxReaders = 1 << 12
	// MaxWakeupLogFiles bounds the files one reader's wakeup log lists.
	MaxWakeupLogFiles = 1 << 16
	// MaxSummaryMemory bounds the memory a decoded summary may take, as
	// the pre-pass (safeio.Bounds) estimates it: generous for what rtload
	// writes (a summary's decoded size is about its size on disk), and far
	// below what a crafted file of empty objects would cost.
	MaxSummaryMemory = 256 << 20
	// MaxDirEntries bounds the entries of a results directory read: the
	// most wakeup-log chunks a summary may list, and room for the rest.
	MaxDirEntries = 4 * MaxWakeupLogFiles
)

// CheckLayout reports whether a linear histogram layout is one rtload can
// read back: at most MaxBuckets buckets, and (buckets > 0) a width > 0 and
// overflow = origin + (buckets − 1) × width, as record.NewLinear makes it.
// buckets < 0 asks only whether the layout NewLinear(width, origin,
// overflow) would make fits (the engine checks a scenario with it).
func CheckLayout(width, origin, overflow uint64, buckets int) error {
	if buckets < 0 {
		if width == 0 || overflow <= origin {
			return fmt.Errorf("histogram layout: bucket width %d, origin %d, overflow %d: need width > 0 and overflow > origin", width, origin, overflow)
		}
		n := (overflow - origin) / width // no overflow of uint64, unlike rounding up first
		if (overflow-origin)%width != 0 {
			n++
		}
		if n >= MaxBuckets { // n buckets above origin, one below it
			n += min(1, ^n)
			return fmt.Errorf("histogram layout: (overflow %d − origin %d) / bucket width %d gives %d buckets, more than the limit of %d", overflow, origin, width, n, MaxBuckets)
		}
		return nil
	}
	if buckets > MaxBuckets {
		return fmt.Errorf("histogram of %d buckets, more than the limit of %d", buckets, MaxBuckets)
	}
	if buckets == 0 {
		return nil
	}
	if width == 0 || overflow < origin || (overflow-origin)/width != uint64(buckets-1) || (overflow-origin)%width != 0 {
		return fmt.Errorf("histogram layout (width %d, origin %d, overflow %d) does not match its %d buckets", width, origin, overflow, buckets)
	}
	return nil
}
