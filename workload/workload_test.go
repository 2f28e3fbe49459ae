package workload_test

import (
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
)

func TestMain(m *testing.M) { testutil.Main(m) }

func clock(t testing.TB) *rt.Clock { return testutil.AutoClock(t) }
