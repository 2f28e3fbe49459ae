//go:build linux && amd64 && cgo

package main

// The C side: bench/drainloop.h (drain450.c's loop) compiled in, a block
// of ticks per cgo call. Nothing here is timed across the cgo boundary:
// fid_c_block sleeps to each of its block's deadlines and drains every
// socket inside one call, each recv timed by rdtscp;lfence in C.

/*
#cgo CFLAGS: -O2 -Wall -Wextra
#cgo LDFLAGS: -pthread
#include "../../drainloop.h"
#include <pthread.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <sys/syscall.h>

// raw_syscall6 is the SYSCALL instruction with no libc wrapper, as Go's
// RawSyscall6 makes it: the -c-syscall raw diagnostic, never the baseline.
static inline long raw_syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6) {
	long r;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return r;
}

// drain_tick_raw is drain_tick (drainloop.h) with each recv made by
// raw_syscall6 instead of glibc's recvfrom/recvmsg: what the C loop's
// timed window costs without glibc's wrapper (a cancellation point).
static void drain_tick_raw(const int *fds, int nsock, int use_msg, struct drain_bufs *b, struct drain_rec *rec) {
	for (int i = 0; i < nsock; i++) {
		for (;;) {
			long r;
			uint64_t t0 = rdtscp();
			if (use_msg) {
				b->mh.msg_namelen = sizeof b->sa;
				r = raw_syscall6(SYS_recvmsg, fds[i], (long)&b->mh, MSG_DONTWAIT, 0, 0, 0);
			} else {
				b->salen = sizeof b->sa;
				r = raw_syscall6(SYS_recvfrom, fds[i], (long)b->buf, (long)b->size, MSG_DONTWAIT, (long)&b->sa, (long)&b->salen);
			}
			uint64_t dt = rdtscp() - t0;
			if (rec) {
				if (rec->n < rec->cap)
					rec->dts[rec->n++] = dt;
				else
					rec->unrecorded++;
				if (r >= 0)
					rec->data++;
				else if (r == -EAGAIN)
					rec->eagain++;
				else
					rec->errs++;
			}
			if (r < 0)
				break;
		}
	}
}

static int *fid_fds;
static int fid_nsock;
static struct sockaddr_in *fid_addrs;
static uint64_t *fid_dts;
static size_t fid_cap;
static struct load_ctl fid_ctl;
static pthread_t fid_tx, fid_sp[64];
static int fid_nspin, fid_started;
static char fid_buf[2048]; // static, as drain450's reader keeps it

// fid_init copies the sockets and their loopback ports, and allocates and
// writes once (so that it is resident before mlockall and never faults
// on the real-time thread) the sample buffer of cap calls. 0 or -1.
static int fid_init(const int *fds, int nsock, const uint16_t *ports, double interval_ms, size_t cap) {
	tsc_init();
	fid_fds = calloc(nsock, sizeof *fid_fds);
	fid_addrs = calloc(nsock, sizeof *fid_addrs);
	fid_dts = malloc(cap * sizeof *fid_dts);
	if (!fid_fds || !fid_addrs || !fid_dts)
		return -1;
	memset(fid_dts, 0, cap * sizeof *fid_dts);
	fid_cap = cap;
	fid_nsock = nsock;
	for (int i = 0; i < nsock; i++) {
		fid_fds[i] = fds[i];
		fid_addrs[i].sin_family = AF_INET;
		fid_addrs[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fid_addrs[i].sin_port = htons(ports[i]);
	}
	fid_ctl.nsock = nsock;
	fid_ctl.addrs = fid_addrs;
	fid_ctl.interval_ms = interval_ms;
	return 0;
}

static const uint64_t *fid_samples(void) { return fid_dts; }

// fid_start starts drain450's sender thread and nspin spin threads
// (SCHED_OTHER, unpinned). 0 or an errno.
static int fid_start(int nspin) {
	if (nspin > 64)
		nspin = 64;
	int e = pthread_create(&fid_tx, NULL, sender_run, &fid_ctl);
	if (e)
		return e;
	fid_started = 1;
	for (int i = 0; i < nspin; i++) {
		if ((e = pthread_create(&fid_sp[i], NULL, spin_run, &fid_ctl)))
			return e;
		fid_nspin = i + 1;
	}
	return 0;
}

// fid_stop stops and joins the threads fid_start started; it returns the
// spin threads' loop count.
static uint64_t fid_stop(void) {
	atomic_store(&fid_ctl.stop, 1);
	if (fid_started)
		pthread_join(fid_tx, NULL);
	for (int i = 0; i < fid_nspin; i++)
		pthread_join(fid_sp[i], NULL);
	fid_started = fid_nspin = 0;
	return atomic_load(&fid_ctl.spins);
}

struct fid_block {
	int64_t start_ns, period_ns; // the first deadline; the tick period
	int32_t ticks, settle, use_msg, raw; // raw: drain_tick_raw (diagnostic)
	// out
	uint64_t recorded, missed, n, data, eagain, errs, unrecorded;
	int64_t wake_max_ns;
};

// fid_c_block is drain450's reader loop for one block: sleep to each
// deadline (clock_nanosleep TIMER_ABSTIME), drain every socket (each call
// timed), skip the ticks already past after a late one; the ticks from
// start + settle periods on are recorded into the sample buffer (from its
// start), every call's ticks in run order.
static void fid_c_block(struct fid_block *b) {
	struct drain_bufs bufs;
	drain_bufs_init(&bufs, fid_buf, sizeof fid_buf);
	struct drain_rec rec = {.dts = fid_dts, .cap = fid_cap};
	int64_t deadline = b->start_ns, measure_from = b->start_ns + b->settle * b->period_ns,
		end = b->start_ns + b->ticks * b->period_ns;
	b->recorded = b->missed = 0;
	b->wake_max_ns = 0;
	while (deadline < end) {
		sleep_until(deadline);
		int64_t woke = mono();
		int on = deadline >= measure_from;
		if (b->raw)
			drain_tick_raw(fid_fds, fid_nsock, b->use_msg, &bufs, on ? &rec : NULL);
		else
			drain_tick(fid_fds, fid_nsock, b->use_msg, &bufs, on ? &rec : NULL);
		if (on) {
			b->recorded++;
			if (woke - deadline > b->wake_max_ns)
				b->wake_max_ns = woke - deadline;
		}
		deadline += b->period_ns;
		int64_t now = mono();
		while (deadline <= now) { // skip: jump to the next due tick
			deadline += b->period_ns;
			b->missed++;
		}
	}
	b->n = rec.n;
	b->data = rec.data;
	b->eagain = rec.eagain;
	b->errs = rec.errs;
	b->unrecorded = rec.unrecorded;
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// cSide is the C loop over the shared sockets.
type cSide struct {
	samples []uint64 // the C sample buffer, read after each block
}

// newCSide hands the sockets and their ports to C and allocates the
// sample buffer of capCalls calls.
func newCSide(fds []int, ports []uint16, interval float64, capCalls int) (*cSide, error) {
	cfds := make([]C.int, len(fds))
	for i, fd := range fds {
		cfds[i] = C.int(fd)
	}
	if C.fid_init(&cfds[0], C.int(len(fds)), (*C.uint16_t)(unsafe.Pointer(&ports[0])), C.double(interval), C.size_t(capCalls)) != 0 {
		return nil, fmt.Errorf("fidelity: C side: out of memory for %d sockets and %d samples", len(fds), capCalls)
	}
	return &cSide{samples: unsafe.Slice((*uint64)(unsafe.Pointer(C.fid_samples())), capCalls)}, nil
}

// startLoad starts the C sender and spin threads.
func (c *cSide) startLoad(spin int) error {
	if e := C.fid_start(C.int(spin)); e != 0 {
		C.fid_stop()
		return fmt.Errorf("fidelity: pthread_create: %w", syscall.Errno(e))
	}
	return nil
}

// stopLoad stops them and returns the spin threads' loops.
func (c *cSide) stopLoad() uint64 { return uint64(C.fid_stop()) }

// cResult is one C block: its counts and the ticks of its recorded calls
// (a view of the sample buffer, valid until the next block).
type cResult struct {
	recorded, missed, data, eagain, errs, unrecorded uint64
	wakeMaxNs                                        int64
	dts                                              []uint64
}

// block runs one C block (one cgo call): ticks deadlines from startNs.
// raw makes the recv calls without glibc (the -c-syscall raw diagnostic).
func (c *cSide) block(startNs, periodNs int64, ticks, settle int, recvmsg, raw bool) cResult {
	b := C.struct_fid_block{start_ns: C.int64_t(startNs), period_ns: C.int64_t(periodNs), ticks: C.int32_t(ticks), settle: C.int32_t(settle)}
	if recvmsg {
		b.use_msg = 1
	}
	if raw {
		b.raw = 1
	}
	C.fid_c_block(&b)
	return cResult{recorded: uint64(b.recorded), missed: uint64(b.missed), data: uint64(b.data), eagain: uint64(b.eagain),
		errs: uint64(b.errs), unrecorded: uint64(b.unrecorded), wakeMaxNs: int64(b.wake_max_ns), dts: c.samples[:b.n]}
}
