// Package engine turns scenario trials into kernel objects and threads,
// runs them and owns their cleanup: UDP socket groups, paced senders,
// real-time readers (probe.Loop on an rt.Thread), noise sources, and a
// non-real-time writer that streams the per-wakeup log to disk. It is the
// only package that imports both scenario and the kernel-facing packages.
package engine
