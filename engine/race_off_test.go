//go:build !race

package engine

// raceEnabled: built without -race (see race_on_test.go).
const raceEnabled = false
