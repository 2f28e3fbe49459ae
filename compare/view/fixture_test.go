package view

import (
	"testing"

	"github.com/rtload/rtload/compare/internal/comparetest"
	"github.com/rtload/rtload/internal/testutil"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}

// near is comparetest.Near: the assertions read as before.
var near = comparetest.Near
