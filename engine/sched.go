package engine

import (
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// schedPolicy is the one conversion of a scenario policy to rt's. Load
// fills every policy and Validate refuses an unset one, so the zero value
// never reaches here; it maps to rt.Other, the kernel's default.
func schedPolicy(p scenario.Policy) rt.Policy {
	switch p {
	case scenario.PolicyFIFO:
		return rt.FIFO
	case scenario.PolicyRR:
		return rt.RR
	}
	return rt.Other
}
