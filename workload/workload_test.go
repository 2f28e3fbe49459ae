package workload_test

import (
	"sync"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

var autoClock = sync.OnceValues(func() (*rt.Clock, error) { return rt.NewClock("auto") })

func clock(t testing.TB) *rt.Clock {
	t.Helper()
	c, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
