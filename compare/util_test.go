package compare

import (
	"math/rand/v2"
	"os"
)

func mkdir(d string) error { return os.MkdirAll(d, 0o755) }

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }
