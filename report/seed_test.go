package report

import "github.com/rtload/rtload/internal/testutil"

// seedRows and seedOverflowRow are seed 000's table (testutil.Seed000).
var (
	seedRows        = testutil.Seed000
	seedOverflowRow = testutil.Seed000Overflow
)
