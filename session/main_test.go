package session

import (
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }
