package report

import (
	"strings"
)

// Text layout shared by every terminal view (the report, compare): widths
// in runes, right-aligned numbers, "group/sub" column labels with the
// group centred over its columns, no trailing spaces.

// Pad right-aligns s in n runes.
func Pad(s string, n int) string {
	if k := n - Width(s); k > 0 {
		return strings.Repeat(" ", k) + s
	}
	return s
}

// PadRight left-aligns s in n runes.
func PadRight(s string, n int) string {
	if k := n - Width(s); k > 0 {
		return s + strings.Repeat(" ", k)
	}
	return s
}

// Center centres s in n runes, the extra space going right.
func Center(s string, n int) string {
	k := n - Width(s)
	if k <= 0 {
		return s
	}
	return strings.Repeat(" ", k/2) + s + strings.Repeat(" ", k-k/2)
}

// Width is the number of runes of s.
func Width(s string) int { return len([]rune(s)) }

// WriteLine writes line without trailing spaces, and a newline.
func WriteLine(b *strings.Builder, line string) {
	b.WriteString(strings.TrimRight(line, " "))
	b.WriteByte('\n')
}

// Aligned writes rows as columns two spaces apart, right-aligned where
// right[i], without trailing spaces.
func Aligned(b *strings.Builder, rows [][]string, right []bool) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(c))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			if i < len(right) && right[i] {
				line.WriteString(Pad(c, widths[i]))
			} else {
				line.WriteString(PadRight(c, widths[i]))
			}
		}
		WriteLine(b, line.String())
	}
}

// Grid writes title, then rows (a name, then one cell per label) under
// labels, a label "group/sub" putting group on a header line of its own
// centred over the consecutive columns sharing it, as Table heads the
// seed's table.
func Grid(b *strings.Builder, title string, labels []string, rows [][]string) {
	nameW := 10
	for _, r := range rows {
		nameW = max(nameW, Width(r[0])+2)
	}
	cols := make([]Column, len(labels))
	widths := make([]int, len(labels))
	for i, l := range labels {
		cols[i].Label = l
		_, sub := splitLabel(l)
		widths[i] = max(10, Width(sub)+1)
		for _, r := range rows {
			if i+1 < len(r) {
				widths[i] = max(widths[i], Width(r[i+1])+1)
			}
		}
	}
	groups := columnGroups(cols)
	widenGroups(groups, widths)
	b.WriteString(title)
	b.WriteByte('\n')
	line := strings.Repeat(" ", nameW)
	for _, g := range groups {
		line += "|" + Center(g.name, g.span(widths)-1)
	}
	WriteLine(b, line)
	line = strings.Repeat(" ", nameW)
	for i, l := range labels {
		_, sub := splitLabel(l)
		line += "|" + Pad(sub, widths[i]-1) + " "
	}
	WriteLine(b, line)
	total := nameW
	for _, w := range widths {
		total += 1 + w
	}
	b.WriteString(strings.Repeat("-", total) + "\n")
	for _, r := range rows {
		WriteRow(b, r, nameW, widths, " ")
	}
}

// WriteRow writes one row of a grid: "  " and its name (row[0]) left in
// nameW runes, then each cell (row[1:], missing ones empty) right-aligned
// in its width, sep before each.
func WriteRow(b *strings.Builder, row []string, nameW int, widths []int, sep string) {
	line := PadRight("  "+row[0], nameW)
	for i, w := range widths {
		c := ""
		if i+1 < len(row) {
			c = row[i+1]
		}
		line += sep + Pad(c, w)
	}
	WriteLine(b, line)
}

// span is the width of g's columns with their separators.
func (g group) span(widths []int) int {
	n := 0
	for c := g.from; c < g.to; c++ {
		n += 1 + widths[c]
	}
	return n
}

// widenGroups widens the last column of each group too narrow for its
// name.
func widenGroups(groups []group, widths []int) {
	for _, g := range groups {
		if need := Width(g.name) + 2; g.name != "" && g.span(widths)-1 < need {
			widths[g.to-1] += need - (g.span(widths) - 1)
		}
	}
}
