package engine

import (
	"testing"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// TestSchedPolicy: the one scenario → rt policy conversion.
func TestSchedPolicy(t *testing.T) {
	for _, tt := range []struct {
		in   scenario.Policy
		want rt.Policy
	}{
		{scenario.PolicyFIFO, rt.FIFO},
		{scenario.PolicyRR, rt.RR},
		{scenario.PolicyOther, rt.Other},
		{0, rt.Other}, // unset: never after Load, the kernel's default
	} {
		if got := schedPolicy(tt.in); got != tt.want {
			t.Errorf("schedPolicy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
