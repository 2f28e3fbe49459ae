package compare

import (
	"slices"
	"testing"

	"github.com/rtload/rtload/results"
)

// TestTrialMarkKindsJudged: the kinds check quotes are the kinds results
// judges (results.MarkKind.Judged), MarkInvalid standing for MarkEmpty.
func TestTrialMarkKindsJudged(t *testing.T) {
	for _, k := range results.MarkKinds {
		quoted := slices.Contains(TrialMarkKinds, k) || k == results.MarkEmpty && slices.Contains(TrialMarkKinds, results.MarkInvalid)
		if quoted != k.Judged() {
			t.Errorf("%s: quoted %v, judged %v", k, quoted, k.Judged())
		}
	}
}
