package rt

const (
	haveTSC   = true
	haveRdpmc = true
)

// rdtscp reads the TSC with RDTSCP followed by LFENCE: RDTSCP waits for
// every earlier instruction, LFENCE keeps later ones from starting early, so
// a pair of reads brackets exactly the code between them.
//
//go:noescape
func rdtscp() uint64

// rdtscFenced reads the TSC with LFENCE;RDTSC;LFENCE: the read where
// CPUID does not offer RDTSCP (some hypervisors hide it; executing it
// there faults), bracketing the code between two reads as rdtscp does.
//
//go:noescape
func rdtscFenced() uint64

// cpuid executes CPUID with EAX = leaf and ECX = sub.
//
//go:noescape
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// rdpmc reads performance counter ecx with LFENCE;RDPMC;LFENCE (the same
// bracketing as rdtscp: RDPMC is not serializing). ecx is the user page's
// index - 1, bit 30 selecting a fixed-function counter. It faults (SIGSEGV)
// unless the kernel allows user rdpmc: call it only through
// pmcReader.read, which checks cap_user_rdpmc and index first.
//
//go:noescape
func rdpmc(ecx uint32) uint64
