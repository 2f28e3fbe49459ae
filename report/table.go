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
	sh := newTableShape(cols, lay, opt)
	var b strings.Builder
	if opt.Title != "" {
		sh.writeTitle(&b, opt)
	}
	sh.writeHeader(&b, opt.Unit)
	if sh.all() == 0 {
		b.WriteString("(no samples)\n")
	} else {
		sh.writeRows(&b)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// tableShape is what Table works out before it prints: the rows shown and
// folded, the row labels and the width of every column.
type tableShape struct {
	cols      []Column
	lay       *record.Snapshot // the shared bucket layout; nil when every column is empty
	nb        int              // buckets below the overflow edge
	first     int              // first bucket populated in any column; -1 when none is
	fold      int              // first folded row; nb when none fold
	totals    []uint64         // per column, the overflow bucket included
	widths    []int            // per column, the count width
	labelW    int              // the row-label width, without the colon
	overLabel string           // "8256+"
	foldLabel string           // "4288–8128", when rows fold
	groups    []group
}

// newTableShape sizes the table for cols sharing layout lay (nil when all
// are empty) and decides, from opt, which rows fold.
func newTableShape(cols []Column, lay *record.Snapshot, opt TableOptions) *tableShape {
	sh := &tableShape{cols: cols, lay: lay}
	// Row labels are right-aligned to the seed's 7 characters, or wider.
	if lay != nil {
		sh.overLabel = strconv.FormatUint(lay.Overflow, 10) + "+"
		sh.nb = len(lay.Counts)
	}
	sh.labelW = max(7, len(sh.overLabel), len("Total"))
	if lay != nil {
		sh.labelW = max(sh.labelW, len(strconv.FormatUint(lay.Lower(sh.nb-1), 10)))
	}
	sh.labelW = max(sh.labelW, len(opt.Unit)+1) // the unit header fits in labelW+1 with a space
	sh.sizeColumns()
	sh.fold = sh.foldRow(opt)
	if sh.fold < sh.nb {
		sh.foldLabel = strconv.FormatUint(lay.Lower(sh.fold), 10) + "–" + strconv.FormatUint(lay.Lower(sh.nb-1), 10)
		sh.labelW = max(sh.labelW, Width(sh.foldLabel))
	}
	sh.groups = columnGroups(cols)
	widenGroups(sh.groups, sh.widths)
	return sh
}

// sizeColumns sets each column's total and count width, and the first
// bucket populated in any column.
func (sh *tableShape) sizeColumns() {
	sh.first = -1
	sh.totals = make([]uint64, len(sh.cols))
	sh.widths = make([]int, len(sh.cols))
	for c, col := range sh.cols {
		for i, n := range col.Hist.Counts {
			sh.totals[c] += n
			if n > 0 && (sh.first < 0 || i < sh.first) {
				sh.first = i
			}
		}
		sh.totals[c] += col.Hist.OverflowCount
		_, sub := splitLabel(col.Label)
		sh.widths[c] = max(minCountWidth, len(strconv.FormatUint(sh.totals[c], 10)), Width(sub)+1)
	}
}

// foldRow is the first row folded by opt.FoldBelow and opt.MaxRows, nb
// when none is.
func (sh *tableShape) foldRow(opt TableOptions) int {
	fold := sh.nb
	if sh.first >= 0 && opt.FoldBelow > 0 {
		fold = foldFrom(sh.cols, sh.totals, sh.first, sh.nb, opt.FoldBelow)
	}
	if sh.first >= 0 && opt.MaxRows > 0 && fold-sh.first > opt.MaxRows && sh.nb-(sh.first+opt.MaxRows) >= 2 {
		fold = sh.first + opt.MaxRows
	}
	return fold
}

// all is the number of calls in every column.
func (sh *tableShape) all() uint64 {
	var all uint64
	for _, t := range sh.totals {
		all += t
	}
	return all
}

// count is column c's count in bucket i, 0 for a column without buckets.
func (sh *tableShape) count(c, i int) uint64 {
	if cs := sh.cols[c].Hist.Counts; i < len(cs) {
		return cs[i]
	}
	return 0
}

// writeTitle writes the title and, when there are buckets, the rows line
// and the line saying which rows fold.
func (sh *tableShape) writeTitle(b *strings.Builder, opt TableOptions) {
	b.WriteString(opt.Title)
	b.WriteByte('\n')
	if sh.lay == nil {
		return
	}
	// The rows are buckets, not values: say so.
	fmt.Fprintf(b, "rows: bucket lower edges, %d wide; %d+ is the overflow bucket\n", sh.lay.Width, sh.lay.Overflow)
	if sh.fold == sh.nb {
		return
	}
	var in, all uint64
	for c := range sh.cols {
		all += sh.totals[c]
		for i := sh.fold; i < sh.nb; i++ {
			in += sh.count(c, i)
		}
	}
	fmt.Fprintf(b, "  %s folds %d rows into one: %s of the calls", sh.foldLabel, sh.nb-sh.fold, sharePct(float64(in)/float64(all)))
	if opt.FoldHint != "" {
		b.WriteString(" (" + opt.FoldHint + ")")
	}
	b.WriteByte('\n')
}

// writeHeader writes the group line (only when some label is
// "group/sub"), the line of unit and column labels, and the dashes under
// them.
func (sh *tableShape) writeHeader(b *strings.Builder, unit string) {
	if len(sh.groups) < len(sh.cols) || sh.groups[0].name != "" {
		line := strings.Repeat(" ", sh.labelW+1)
		for _, g := range sh.groups {
			line += "|" + Center(g.name, g.span(sh.widths)-1)
		}
		WriteLine(b, line)
	}
	line := Center(unit, sh.labelW+1)
	for c, col := range sh.cols {
		_, sub := splitLabel(col.Label)
		line += "|" + Pad(sub, sh.widths[c]-1) + " "
	}
	WriteLine(b, line)
	sh.writeDashes(b)
}

// writeDashes writes a dashed line as wide as the table.
func (sh *tableShape) writeDashes(b *strings.Builder) {
	lineW := sh.labelW + 1
	for _, wd := range sh.widths {
		lineW += 1 + wd
	}
	b.WriteString(strings.Repeat("-", lineW))
	b.WriteByte('\n')
}

// writeRows writes the bucket rows from the first populated one, the
// folded row, the overflow row, the dashes and the "Total:" row.
func (sh *tableShape) writeRows(b *strings.Builder) {
	if sh.first >= 0 {
		for i := sh.first; i < sh.fold; i++ {
			sh.writeRow(b, strconv.FormatUint(sh.lay.Lower(i), 10), func(c int) uint64 { return sh.count(c, i) })
		}
		if sh.fold < sh.nb {
			sh.writeRow(b, sh.foldLabel, func(c int) uint64 {
				var n uint64
				for i := sh.fold; i < sh.nb; i++ {
					n += sh.count(c, i)
				}
				return n
			})
		}
	}
	sh.writeRow(b, sh.overLabel, func(c int) uint64 { return sh.cols[c].Hist.OverflowCount })
	sh.writeDashes(b)
	sh.writeRow(b, "Total", func(c int) uint64 { return sh.totals[c] })
}

// writeRow writes one row: its label right-aligned and a colon, then
// count(c) right-aligned in each column.
func (sh *tableShape) writeRow(b *strings.Builder, label string, count func(c int) uint64) {
	b.WriteString(Pad(label, sh.labelW))
	b.WriteByte(':')
	for c := range sh.cols {
		b.WriteByte(' ')
		b.WriteString(Pad(strconv.FormatUint(count(c), 10), sh.widths[c]))
	}
	b.WriteByte('\n')
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
