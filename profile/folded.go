package profile

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteFolded writes p as folded stacks (Brendan Gregg's format, read by
// flamegraph.pl and speedscope): one line per distinct stack, frames
// outermost first separated by ';', then a space and the sample count.
// The first frame is the phase ("drain", "sleep", "other"), so a flame
// graph splits into the three phases; kernel frames carry the "_[k]"
// suffix of perf's stackcollapse-perf.pl --kernel. A ';' in a name
// becomes ':'. Lines are sorted, so equal profiles give equal files.
func (p *Profile) WriteFolded(w io.Writer) error {
	agg := map[string]uint64{}
	for _, s := range p.Stacks {
		var b strings.Builder
		b.WriteString(s.Phase.String())
		for i := len(s.Frames) - 1; i >= 0; i-- {
			f := s.Frames[i]
			b.WriteByte(';')
			b.WriteString(strings.ReplaceAll(f.Func, ";", ":"))
			if f.Kernel {
				b.WriteString("_[k]")
			}
		}
		agg[b.String()] += s.Count
	}
	keys := make([]string, 0, len(agg))
	for k := range agg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		fmt.Fprintf(bw, "%s %d\n", k, agg[k])
	}
	return bw.Flush()
}
