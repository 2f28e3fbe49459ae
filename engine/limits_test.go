package engine

import (
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/scenario"
)

// TestLogChunkReadBack: the largest log_chunk a scenario may set is what
// a reader of results lets one compressed chunk inflate to, so every
// chunk rtload writes reads back (scenario cannot import results).
func TestLogChunkReadBack(t *testing.T) {
	if int64(scenario.MaxLogChunk) != results.MaxWakeupChunkBytes {
		t.Errorf("scenario.MaxLogChunk %d != results.MaxWakeupChunkBytes %d", scenario.MaxLogChunk, results.MaxWakeupChunkBytes)
	}
}
