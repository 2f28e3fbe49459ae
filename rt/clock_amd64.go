package rt

const haveTSC = true

// rdtscp reads the TSC with RDTSCP followed by LFENCE: RDTSCP waits for
// every earlier instruction, LFENCE keeps later ones from starting early, so
// a pair of reads brackets exactly the code between them.
//
//go:noescape
func rdtscp() uint64
