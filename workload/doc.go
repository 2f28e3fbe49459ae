// Package workload holds ordinary work that rtload measures or runs as
// background load, apart from the real-time loop in package probe:
//
//   - Messaging is hackbench's model (seed 001_4d16c5daf9962626,
//     hackbench -T -g -f -l -s [--pipe]): groups of sender and receiver
//     threads over AF_UNIX socketpairs or pipes, timed as a whole and with
//     each worker's getrusage(RUSAGE_THREAD) CPU time.
//   - FileWrite is unixbench fstime's write test (seed 002_6f10e0e6388b30c2):
//     Block-byte write(2) calls, Blocks per pass, then lseek(2) to 0, each
//     write optionally timed into record recorders, reported in KB/s.
//
// engine runs them as probes and noise runs them as load sources. Their hot
// methods (FileWrite.Pass, Write) allocate nothing and use raw system calls
// on blocking fds that never meet the netpoller, but they are ordinary
// (preemptible) Go code: none of them runs on the reader's real-time loop.
//
// Every file FileWrite creates is link-safe: see NewFileWrite.
//
// Imports rt, record, x/sys/unix and the standard library.
package workload
