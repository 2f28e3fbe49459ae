package interop

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// cyclictestNoMin is what cyclictest prints as the minimum of a thread
// with no samples (stat->min starts at 1000000).
const cyclictestNoMin = 1000000

// maxCyclictestUs bounds the rows and latencies read (1000 s in µs): past
// it a histogram is not a latency histogram, and its ns values would not
// fit the histograms built from it.
const maxCyclictestUs = 1_000_000_000

// maxCyclictestColumns bounds the thread columns read.
const maxCyclictestColumns = 1 << 12

// cyclictestColumnPrefix starts the comment line naming a column in
// rtload's output ("# rtload column 0: fifo/r0/reader0"); cyclictest
// itself prints none, and scripts skip '#' lines.
const cyclictestColumnPrefix = "# rtload column "

// CyclictestColumn is one thread column of a cyclictest -h histogram.
type CyclictestColumn struct {
	// Name labels the column. WriteCyclictestHist writes it on a comment
	// line when non-empty; ReadCyclictestHist reads it back, or sets
	// "T<n>" (cyclictest's own "T: n" label) when the input has none.
	Name string
	// Hist is the latency distribution in nanoseconds.
	Hist *hdrhistogram.Histogram
	// MaxNs is the exact largest latency when known (> 0): "Max
	// Latencies" is then MaxNs truncated to µs, as cyclictest truncates,
	// rather than the binned top bucket. ReadCyclictestHist sets it from
	// "Max Latencies" (the middle of that µs).
	MaxNs int64
}

// CyclictestMeta is what the comment lines of a cyclictest -h histogram
// say, one entry per thread column (a --histofall sum column dropped).
type CyclictestMeta struct {
	// Buckets is the number of 1 µs rows: the highest row index + 1.
	// cyclictest ≥ 1.x prints every row 0 … N-1 of -h N, so this is N;
	// values ≥ Buckets µs are overflows.
	Buckets int
	// Total is "# Total:", the samples in rows (overflows excluded).
	Total []uint64
	// Min, Avg, Max are "# Min/Avg/Max Latencies:" in whole µs; Avg is
	// truncated and counts overflows. An empty thread shows Min 1000000.
	Min, Avg, Max []uint64
	// Overflows is "# Histogram Overflows:", samples ≥ Buckets µs.
	Overflows []uint64
	// OverflowCycles lists the loop numbers of "# Thread n:"; OverflowOthers
	// the overflows it did not list (its trailing "# 00012 others").
	OverflowCycles [][]uint64
	OverflowOthers []uint64
	// Summed is true when rows carried a --histofall (-H) sum column,
	// which is dropped.
	Summed bool
	// Comments holds every other '#' line without its "# ", such as
	// "/dev/cpu_dma_latency set to 0us".
	Comments []string
}

// ctColumn is one column binned in whole µs the way cyclictest bins.
type ctColumn struct {
	rows                 []uint64
	total, overflow      uint64
	min, avg, max, count uint64
}

// binCyclictest bins h (ns) into buckets rows of 1 µs. Each HdrHistogram
// bucket's count goes to the row of its median equivalent value, floored
// to µs as cyclictest truncates; min, avg (truncated mean of the floored
// values, overflows included) and max use the same floored values.
// Exact while HdrHistogram buckets are at most 512 ns wide (below
// 1,048,576 ns at 3 significant digits); above, a count may land one row
// off, within HdrHistogram's stated precision.
func binCyclictest(h *hdrhistogram.Histogram, buckets int) ctColumn {
	c := ctColumn{rows: make([]uint64, buckets), min: cyclictestNoMin}
	if h == nil || h.TotalCount() == 0 {
		return c
	}
	var sum uint64
	first := true
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		us := barUs(b)
		n := uint64(b.Count)
		if first {
			c.min, first = us, false
		}
		c.max = us
		c.count += n
		sum += n * us
		if us < uint64(buckets) {
			c.rows[us] += n
			c.total += n
		} else {
			c.overflow += n
		}
	}
	c.avg = sum / c.count
	return c
}

// barUs returns the whole µs of b's median equivalent value (HdrHistogram's
// medianEquivalentValue: lowest + half the bucket width).
func barUs(b hdrhistogram.Bar) uint64 {
	return uint64(max(b.From+(b.To-b.From+1)/2, 0)) / 1000
}

// WriteCyclictestHist writes cols as cyclictest -h <buckets> -q prints its
// histogram (rt-tests 2.x print_hist, checked against cyclictest V 2.40):
//
//	# Histogram
//	000000 000000	000000          one row per µs 0 … buckets-1, zeros included:
//	000001 000003	000001          "%06d " then "%06lu" per column, tab-separated
//	…
//	# Total: 000000197 000000198   " %09llu" per column: samples in rows
//	# Min Latencies: 00005 00003   " %05lu", whole µs
//	# Avg Latencies: 00013 00011
//	# Max Latencies: 00549 00544
//	# Histogram Overflows: 00003 00002
//	# Histogram Overflow at cycle number:
//	# Thread 0: # 00003 others     rtload keeps no loop numbers
//	# Thread 1: # 00002 others
//	(blank line)
//
// Values come from the ns histograms as binCyclictest describes. Named
// columns get a "# rtload column <i>: <name>" line each before
// "# Histogram". buckets must be positive and cols non-empty.
func WriteCyclictestHist(w io.Writer, cols []CyclictestColumn, buckets int) error {
	if buckets <= 0 {
		return fmt.Errorf("cyclictest histogram: %d buckets, want > 0", buckets)
	}
	if len(cols) == 0 {
		return errors.New("cyclictest histogram: no columns")
	}
	bw := bufio.NewWriter(w)
	bc := make([]ctColumn, len(cols))
	for i, c := range cols {
		bc[i] = binCyclictest(c.Hist, buckets)
		if c.MaxNs > 0 && bc[i].count > 0 {
			bc[i].max = uint64(c.MaxNs) / 1000
		}
		if c.Name != "" {
			if strings.ContainsAny(c.Name, "\r\n") {
				return fmt.Errorf("cyclictest histogram: column %d name %q: line break", i, c.Name)
			}
			fmt.Fprintf(bw, "%s%d: %s\n", cyclictestColumnPrefix, i, c.Name)
		}
	}
	bw.WriteString("# Histogram\n")
	for r := range buckets {
		fmt.Fprintf(bw, "%06d ", r)
		for i, c := range bc {
			if i > 0 {
				bw.WriteByte('\t')
			}
			fmt.Fprintf(bw, "%06d", c.rows[r])
		}
		bw.WriteByte('\n')
	}
	footer := func(title, format string, v func(ctColumn) uint64) {
		bw.WriteString(title)
		for _, c := range bc {
			fmt.Fprintf(bw, format, v(c))
		}
		bw.WriteByte('\n')
	}
	footer("# Total:", " %09d", func(c ctColumn) uint64 { return c.total })
	footer("# Min Latencies:", " %05d", func(c ctColumn) uint64 { return c.min })
	footer("# Avg Latencies:", " %05d", func(c ctColumn) uint64 { return c.avg })
	footer("# Max Latencies:", " %05d", func(c ctColumn) uint64 { return c.max })
	footer("# Histogram Overflows:", " %05d", func(c ctColumn) uint64 { return c.overflow })
	bw.WriteString("# Histogram Overflow at cycle number:\n")
	for i, c := range bc {
		fmt.Fprintf(bw, "# Thread %d:", i)
		if c.overflow > 0 {
			fmt.Fprintf(bw, " # %05d others", c.overflow)
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cyclictest histogram: %w", err)
	}
	return nil
}

// ReadCyclictestHist parses a cyclictest -h/-H histogram, as printed by
// cyclictest (rows may be sparse, as older versions print them; a
// --histofall sum column is recognised by one column more than the
// "# Min Latencies:" line has and dropped) or by WriteCyclictestHist.
//
// Each column becomes an ns histogram (3 significant digits) holding every
// sample of row i at i·1000+500 ns, the middle of its µs: cyclictest
// truncates to µs, so the true value lies in [i, i+1) µs. Overflows, whose
// values cyclictest does not print, go to the middle of the first
// overflow µs (Buckets), except one at the middle of "Max Latencies" when
// that is beyond, so the histogram's max is cyclictest's; percentiles in
// the overflow are therefore lower bounds. Lines outside the histogram
// (the -q status line, "# /dev/cpu_dma_latency …") are kept in
// Meta.Comments or skipped. Errors name the line.
func ReadCyclictestHist(r io.Reader) ([]CyclictestColumn, CyclictestMeta, error) {
	var (
		meta  CyclictestMeta
		rows  = map[int][]uint64{}
		width = -1
		names = map[int]string{}
		found bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		fail := func(err error) ([]CyclictestColumn, CyclictestMeta, error) {
			return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram line %d: %w", n, err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			f := strings.Fields(line)
			idx, err := strconv.Atoi(f[0])
			if err == nil && idx > maxCyclictestUs {
				return fail(fmt.Errorf("row %d: beyond %d µs, the longest latency read", idx, maxCyclictestUs))
			}
			if err != nil || idx < 0 {
				if !found {
					continue // status output before "# Histogram"
				}
				return fail(fmt.Errorf("row %q: bad bucket index", f[0]))
			}
			if len(f)-1 > maxCyclictestColumns {
				return fail(fmt.Errorf("row %d has %d columns, more than the limit of %d", idx, len(f)-1, maxCyclictestColumns))
			}
			if width >= 0 && len(f)-1 != width {
				return fail(fmt.Errorf("row %d has %d columns, earlier rows %d", idx, len(f)-1, width))
			}
			width = len(f) - 1
			counts, err := parseUints(f[1:])
			if err != nil {
				return fail(fmt.Errorf("row %d: %w", idx, err))
			}
			if _, dup := rows[idx]; dup {
				return fail(fmt.Errorf("row %d repeated", idx))
			}
			rows[idx] = counts
			found = true
			continue
		}
		text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		var err error
		switch {
		case text == "Histogram":
			found = true
		case strings.HasPrefix(line, cyclictestColumnPrefix):
			num, name, ok := strings.Cut(strings.TrimPrefix(line, cyclictestColumnPrefix), ": ")
			i, aerr := strconv.Atoi(num)
			if !ok || aerr != nil {
				return fail(fmt.Errorf("bad column name line %q", line))
			}
			names[i] = name
		case strings.HasPrefix(text, "Total:"):
			meta.Total, err = parseUints(strings.Fields(strings.TrimPrefix(text, "Total:")))
		case strings.HasPrefix(text, "Min Latencies:"):
			meta.Min, err = parseUints(strings.Fields(strings.TrimPrefix(text, "Min Latencies:")))
		case strings.HasPrefix(text, "Avg Latencies:"):
			meta.Avg, err = parseUints(strings.Fields(strings.TrimPrefix(text, "Avg Latencies:")))
		case strings.HasPrefix(text, "Max Latencies:"):
			meta.Max, err = parseUints(strings.Fields(strings.TrimPrefix(text, "Max Latencies:")))
		case strings.HasPrefix(text, "Histogram Overflows:"):
			meta.Overflows, err = parseUints(strings.Fields(strings.TrimPrefix(text, "Histogram Overflows:")))
		case text == "Histogram Overflow at cycle number:":
		case strings.HasPrefix(text, "Thread "):
			err = meta.thread(text)
		default:
			meta.Comments = append(meta.Comments, text)
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: %w", err)
	}
	if !found || width < 0 {
		return nil, CyclictestMeta{}, errors.New("cyclictest histogram: no histogram rows (was cyclictest run with -h?)")
	}
	return buildCyclictest(meta, rows, width, names)
}

// thread parses "Thread <n>: <cycle> … [# <others> others]".
func (m *CyclictestMeta) thread(text string) error {
	head, rest, ok := strings.Cut(text, ":")
	if !ok {
		return fmt.Errorf("bad line %q", text)
	}
	if _, err := strconv.Atoi(strings.TrimPrefix(head, "Thread ")); err != nil {
		return fmt.Errorf("bad thread number in %q", text)
	}
	listed, others, _ := strings.Cut(rest, "#")
	cycles, err := parseUints(strings.Fields(listed))
	if err != nil {
		return fmt.Errorf("%s: %w", head, err)
	}
	var more uint64
	if f := strings.Fields(others); len(f) > 0 {
		if more, err = strconv.ParseUint(f[0], 10, 64); err != nil {
			return fmt.Errorf("%s: others: %w", head, err)
		}
	}
	m.OverflowCycles = append(m.OverflowCycles, cycles)
	m.OverflowOthers = append(m.OverflowOthers, more)
	return nil
}

// buildCyclictest turns parsed rows and footers into ns histograms.
func buildCyclictest(meta CyclictestMeta, rows map[int][]uint64, width int, names map[int]string) ([]CyclictestColumn, CyclictestMeta, error) {
	if width > maxCyclictestColumns {
		return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: %d columns, more than the limit of %d", width, maxCyclictestColumns)
	}
	for _, v := range meta.Max {
		if v > maxCyclictestUs {
			return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: max latency %d µs beyond the limit of %d", v, maxCyclictestUs)
		}
	}
	ncols := width
	if meta.Min != nil {
		switch len(meta.Min) {
		case width:
		case width - 1:
			ncols, meta.Summed = width-1, true
		default:
			return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: rows have %d columns, \"# Min Latencies:\" %d", width, len(meta.Min))
		}
	}
	if ncols <= 0 {
		return nil, CyclictestMeta{}, errors.New("cyclictest histogram: rows hold no thread columns")
	}
	for _, f := range []*[]uint64{&meta.Total, &meta.Max, &meta.Overflows} {
		if len(*f) > ncols {
			*f = (*f)[:ncols] // --histofall sum
		}
	}
	for name, f := range map[string][]uint64{"Total": meta.Total, "Min": meta.Min, "Avg": meta.Avg, "Max": meta.Max, "Overflows": meta.Overflows} {
		if f != nil && len(f) != ncols {
			return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: %s line has %d values for %d columns", name, len(f), ncols)
		}
	}
	for idx := range rows {
		meta.Buckets = max(meta.Buckets, idx+1)
	}
	cols := make([]CyclictestColumn, ncols)
	for c := range cols {
		top := uint64(meta.Buckets)
		if meta.Max != nil {
			top = max(top, meta.Max[c]+1)
		}
		h := hdrhistogram.New(1, int64(top+1)*1000, 3)
		var inRows uint64
		for idx, counts := range rows {
			if counts[c] > 0 {
				if err := h.RecordValues(int64(idx)*1000+500, int64(counts[c])); err != nil {
					return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: column %d row %d: %w", c, idx, err)
				}
				inRows += counts[c]
			}
		}
		if meta.Total != nil && meta.Total[c] != inRows {
			return nil, CyclictestMeta{}, fmt.Errorf("cyclictest histogram: column %d: rows sum to %d, \"# Total:\" says %d (truncated output?)", c, inRows, meta.Total[c])
		}
		if meta.Overflows != nil && meta.Overflows[c] > 0 {
			ov := int64(meta.Overflows[c])
			if meta.Max != nil && meta.Max[c] >= uint64(meta.Buckets) {
				_ = h.RecordValue(int64(meta.Max[c])*1000 + 500)
				ov--
			}
			_ = h.RecordValues(int64(meta.Buckets)*1000+500, ov)
		}
		cols[c] = CyclictestColumn{Name: names[c], Hist: h}
		if meta.Max != nil && h.TotalCount() > 0 {
			cols[c].MaxNs = int64(meta.Max[c])*1000 + 500
		}
		if cols[c].Name == "" {
			cols[c].Name = "T" + strconv.Itoa(c)
		}
	}
	return cols, meta, nil
}

// parseUints parses decimal fields ("000123").
func parseUints(f []string) ([]uint64, error) {
	out := make([]uint64, len(f))
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
