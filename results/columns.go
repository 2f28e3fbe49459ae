package results

import "strconv"

// Column is one (variant, reader) of a run: a column of every table rtload
// prints (the report, compare, plot), its rounds merged by the renderer.
type Column struct {
	// Variant and Reader name the column's trials and reader; Index is
	// the reader's position in the first trial holding it (an unnamed
	// reader is "reader<Index>").
	Variant, Reader string
	Index           int
	// Rounds are the column's trials, in run order.
	Rounds []Round
}

// Round is one trial's reader in a Column. The pointers are into the
// Summary given to Columns; TrialPos and ReaderPos are the positions in
// Summary.Trials and Trial.Readers.
type Round struct {
	Trial               *Trial
	Reader              *Reader
	TrialPos, ReaderPos int
}

// Columns groups the readers of s's trials by (variant, reader name), in
// the order each first appears.
func Columns(s *Summary) []Column {
	var cols []Column
	index := map[[2]string]int{}
	for ti := range s.Trials {
		t := &s.Trials[ti]
		for ri := range t.Readers {
			r := &t.Readers[ri]
			key := [2]string{t.Variant, r.Name}
			i, ok := index[key]
			if !ok {
				i = len(cols)
				index[key] = i
				cols = append(cols, Column{Variant: t.Variant, Reader: r.Name, Index: ri})
			}
			cols[i].Rounds = append(cols[i].Rounds, Round{Trial: t, Reader: r, TrialPos: ti, ReaderPos: ri})
		}
	}
	return cols
}

// PerReader reports whether the trials of ss name more than one reader in
// one of them, so that column labels must carry the reader.
func PerReader(ss ...*Summary) bool {
	for _, s := range ss {
		names := map[string]bool{}
		for _, t := range s.Trials {
			for _, r := range t.Readers {
				names[r.Name] = true
			}
		}
		if len(names) > 1 {
			return true
		}
	}
	return false
}

// Label names c: its variant ("run" when it has none) and, with perReader,
// "<variant><sep><reader>" (an unnamed reader: "reader<Index>").
func (c Column) Label(perReader bool, sep string) string {
	label := c.Variant
	if label == "" {
		label = "run"
	}
	if perReader {
		reader := c.Reader
		if reader == "" {
			reader = "reader" + strconv.Itoa(c.Index)
		}
		label += sep + reader
	}
	return label
}
