package engine

import (
	"fmt"
	"testing"

	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/rt/seccomp"
	"github.com/rtload/rtload/scenario"
)

// TestLogChunkReadBack: the largest log_chunk a scenario may set is what
// a reader of results lets one compressed chunk inflate to, so every
// chunk rtload writes reads back (scenario cannot import results).
func TestLogChunkReadBack(t *testing.T) {
	if int64(scenario.MaxLogChunk) != wakelog.MaxChunkBytes {
		t.Errorf("scenario.MaxLogChunk %d != wakelog.MaxChunkBytes %d", scenario.MaxLogChunk, wakelog.MaxChunkBytes)
	}
}

// TestSeccompLengthBounds: the allow-all lengths a scenario may ask for
// are exactly those rt/seccomp compiles (scenario cannot import it).
func TestSeccompLengthBounds(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{
		{seccomp.MinAllowAll - 1, false},
		{seccomp.MinAllowAll, true},
		{seccomp.MaxInstructions, true},
		{seccomp.MaxInstructions + 1, false},
	} {
		doc := fmt.Sprintf("readers: [{cpu: 0, seccomp: {profile: allow-all, instructions: %d}}]\n", tc.n)
		s, err := scenario.Load("x.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		verr := s.Validate(scenario.Host{NumCPU: 1})
		_, perr := seccomp.New(seccompConfig(s.Readers[0].Seccomp))
		if (verr == nil) != tc.ok || (perr == nil) != tc.ok {
			t.Errorf("%d instructions: validate %v, compile %v; want both ok=%v", tc.n, verr, perr, tc.ok)
		}
	}
}
