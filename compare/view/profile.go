package view

import (
	"strings"

	"github.com/rtload/rtload/compare"
)

// profileText writes the profile differences between runs, if any.
func profileText(r *compare.Result, b *strings.Builder) {
	if len(r.Profiles) == 0 {
		return
	}
	b.WriteString("\nwhere in the kernel the time goes, run against run (profiled trials of each variant):\n")
	for _, d := range r.Profiles {
		b.WriteString(d.Text)
	}
}
