package report

import (
	"github.com/rtload/rtload/internal/testutil"
	"testing"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name, got)
}
