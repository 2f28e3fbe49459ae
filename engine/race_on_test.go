//go:build race

package engine

// raceEnabled: built with -race. The race detector drops sync.Pool items at
// random, so encoding/json reallocates its encode buffers and heap growth
// is not the program's own: allocation bounds are asserted without -race
// (make test runs them so).
const raceEnabled = true
