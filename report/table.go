package report

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/record"
)

// Column is one column of a per-call table: a label and its histogram. A
// label "group/sub" (variant/reader) puts group on a header line of its
// own, centred over consecutive columns sharing it, as the seed puts
// "recvfrom" over "unhard" and "hard".
type Column struct {
	Label string
	Hist  record.Snapshot
}

// TableOptions titles a Table. The zero value prints no title and an empty
// unit header.
type TableOptions struct {
	// Title is printed on its own line above the table, e.g.
	// "per-call cost, all calls (data + EAGAIN)".
	Title string
	// Unit heads the row-label column, e.g. "ticks" or "cycles".
	Unit string
	// FoldBelow, a share of calls (0.001 = 0.1%), folds the sparse tail:
	// the rows before the overflow row in which every column holds less
	// than FoldBelow of its own total become one row, "4288–8128:",
	// holding their sums (the totals stay). It folds two rows or more, and
	// a line under the rows line says which, and what share of the calls
	// the folded row holds. 0 prints every row, as the seed.
	FoldBelow float64
	// MaxRows, when > 0, folds the tail further so that at most MaxRows
	// bucket rows come before the folded one (and the overflow row).
	MaxRows int
	// FoldHint is said after the fold in the rows line ("-v prints every
	// row").
	FoldHint string
}

// minCountWidth is the narrowest count column, wide enough for the seed's
// 7-digit totals with room to spare.
const minCountWidth = 10

// Table prints cols side by side in the shape of seed 000_b19799733a2511c2:
// the title (when given) and under it "rows: bucket lower edges, W wide;
// O+ is the overflow bucket", then one row per bucket, labelled with its lower edge ("   1472:"), from the
// first bucket populated in any column up to the last bucket below the
// overflow edge (empty rows in between kept), then the overflow row
// ("  8256+:"), a dashed line and a "Total:" row. Counts are right-aligned
// in columns at least 10 wide. A column whose Snapshot is the zero value
// (no buckets) prints as all zeros; columns whose bucket layouts differ
// are an error. When every column is empty Table prints the header and
// "(no samples)".
func Table(w io.Writer, cols []Column, opt TableOptions) error {
	cols, opt = termsafe.Copy(cols), termsafe.Copy(opt)
	if len(cols) == 0 {
		return errors.New("table: no columns")
	}
	lay, err := tableLayout(cols)
	if err != nil {
		return err
	}

	// Row labels are right-aligned to the seed's 7 characters, or wider.
	overLabel := ""
	nb := 0
	if lay != nil {
		overLabel = strconv.FormatUint(lay.Overflow, 10) + "+"
		nb = len(lay.Counts)
	}
	labelW := max(7, len(overLabel), len("Total"))
	if lay != nil {
		labelW = max(labelW, len(strconv.FormatUint(lay.Lower(nb-1), 10)))
	}
	labelW = max(labelW, len(opt.Unit)+1) // the unit header fits in labelW+1 with a space

	// Per-column totals and widths.
	first := -1
	totals := make([]uint64, len(cols))
	widths := make([]int, len(cols))
	for c, col := range cols {
		var widest uint64
		for i, n := range col.Hist.Counts {
			totals[c] += n
			widest = max(widest, n)
			if n > 0 && (first < 0 || i < first) {
				first = i
			}
		}
		totals[c] += col.Hist.OverflowCount
		_, sub := splitLabel(col.Label)
		widths[c] = max(minCountWidth, len(strconv.FormatUint(totals[c], 10)), Width(sub)+1)
	}
	fold := nb // the first folded row: none when nb
	if first >= 0 && opt.FoldBelow > 0 {
		fold = foldFrom(cols, totals, first, nb, opt.FoldBelow)
	}
	if first >= 0 && opt.MaxRows > 0 && fold-first > opt.MaxRows && nb-(first+opt.MaxRows) >= 2 {
		fold = first + opt.MaxRows
	}
	foldLabel := ""
	if fold < nb {
		foldLabel = strconv.FormatUint(lay.Lower(fold), 10) + "–" + strconv.FormatUint(lay.Lower(nb-1), 10)
		labelW = max(labelW, Width(foldLabel))
	}
	groups := columnGroups(cols)
	widenGroups(groups, widths)
	lineW := labelW + 1
	for _, wd := range widths {
		lineW += 1 + wd
	}

	var b strings.Builder
	if opt.Title != "" {
		b.WriteString(opt.Title)
		b.WriteByte('\n')
		if lay != nil {
			// The rows are buckets, not values: say so.
			fmt.Fprintf(&b, "rows: bucket lower edges, %d wide; %d+ is the overflow bucket\n", lay.Width, lay.Overflow)
			if fold < nb {
				var in, all uint64
				for c := range cols {
					all += totals[c]
					for i := fold; i < nb; i++ {
						if cs := cols[c].Hist.Counts; i < len(cs) {
							in += cs[i]
						}
					}
				}
				fmt.Fprintf(&b, "  %s folds %d rows into one: %s of the calls", foldLabel, nb-fold, sharePct(float64(in)/float64(all)))
				if opt.FoldHint != "" {
					b.WriteString(" (" + opt.FoldHint + ")")
				}
				b.WriteByte('\n')
			}
		}
	}
	// Group line, only when some label is "group/sub".
	if len(groups) < len(cols) || groups[0].name != "" {
		line := strings.Repeat(" ", labelW+1)
		for _, g := range groups {
			line += "|" + Center(g.name, g.span(widths)-1)
		}
		WriteLine(&b, line)
	}
	line := Center(opt.Unit, labelW+1)
	for c, col := range cols {
		_, sub := splitLabel(col.Label)
		line += "|" + Pad(sub, widths[c]-1) + " "
	}
	WriteLine(&b, line)
	dashes := strings.Repeat("-", lineW)
	b.WriteString(dashes)
	b.WriteByte('\n')

	var all uint64
	for _, t := range totals {
		all += t
	}
	if all == 0 {
		b.WriteString("(no samples)\n")
		_, err = io.WriteString(w, b.String())
		return err
	}
	row := func(label string, count func(c int) uint64) {
		b.WriteString(Pad(label, labelW))
		b.WriteByte(':')
		for c := range cols {
			b.WriteByte(' ')
			b.WriteString(Pad(strconv.FormatUint(count(c), 10), widths[c]))
		}
		b.WriteByte('\n')
	}
	count := func(c, i int) uint64 {
		if cs := cols[c].Hist.Counts; i < len(cs) {
			return cs[i]
		}
		return 0
	}
	if first >= 0 {
		for i := first; i < fold; i++ {
			row(strconv.FormatUint(lay.Lower(i), 10), func(c int) uint64 { return count(c, i) })
		}
		if fold < nb {
			row(foldLabel, func(c int) uint64 {
				var n uint64
				for i := fold; i < nb; i++ {
					n += count(c, i)
				}
				return n
			})
		}
	}
	row(overLabel, func(c int) uint64 { return cols[c].Hist.OverflowCount })
	b.WriteString(dashes)
	b.WriteByte('\n')
	row("Total", func(c int) uint64 { return totals[c] })
	_, err = io.WriteString(w, b.String())
	return err
}

// tableLayout is the bucket layout every non-empty column of cols shares
// (nil when all are empty); a column with samples but no buckets, or
// with another layout, is an error.
func tableLayout(cols []Column) (*record.Snapshot, error) {
	var lay *record.Snapshot
	for i := range cols {
		h := &cols[i].Hist
		if len(h.Counts) == 0 {
			if h.Total != 0 || h.OverflowCount != 0 {
				return nil, fmt.Errorf("table: column %s: %d samples but no buckets", cols[i].Label, h.Total)
			}
			continue
		}
		if lay == nil {
			lay = h
			continue
		}
		if !sameLayout(*lay, *h) {
			return nil, fmt.Errorf("table: column %s: layout %s differs from %s", cols[i].Label, layoutString(*h), layoutString(*lay))
		}
	}
	return lay, nil
}

// foldFrom is the first row of the tail [first, nb) in which every row
// holds less than share of each column's total, nb when fewer than two
// rows would fold.
func foldFrom(cols []Column, totals []uint64, first, nb int, share float64) int {
	fold := nb
	for i := nb - 1; i > first; i-- {
		sparse := true
		for c := range cols {
			cs := cols[c].Hist.Counts
			if i < len(cs) && float64(cs[i]) >= share*float64(totals[c]) {
				sparse = false
			}
		}
		if !sparse {
			break
		}
		fold = i
	}
	if nb-fold < 2 {
		return nb
	}
	return fold
}

// sharePct prints a share as a percentage: 0.001 → "0.1%", 0.01234 → "1.2%".
func sharePct(v float64) string { return strconv.FormatFloat(v*100, 'g', 2, 64) + "%" }

func sameLayout(a, b record.Snapshot) bool {
	return a.Width == b.Width && a.Origin == b.Origin && a.Overflow == b.Overflow && len(a.Counts) == len(b.Counts)
}

func layoutString(s record.Snapshot) string {
	return fmt.Sprintf("(width %d, origin %d, overflow %d, %d buckets)", s.Width, s.Origin, s.Overflow, len(s.Counts))
}

// group is a run of consecutive columns [from, to) sharing a label prefix.
type group struct {
	name     string
	from, to int
}

func columnGroups(cols []Column) []group {
	var gs []group
	for c, col := range cols {
		name, _ := splitLabel(col.Label)
		if n := len(gs); n > 0 && gs[n-1].name == name && name != "" {
			gs[n-1].to = c + 1
			continue
		}
		gs = append(gs, group{name: name, from: c, to: c + 1})
	}
	return gs
}

// splitLabel splits "variant/reader" at the first slash; a label without
// one has no group.
func splitLabel(l string) (group, sub string) {
	if g, s, ok := strings.Cut(l, "/"); ok {
		return g, s
	}
	return "", l
}
