// drainloop.h: the measured loop of bench/drain450.c, in one place so that
// bench/cmd/fidelity compiles the same C code in through cgo: the
// rdtscp;lfence clock read, the absolute tick sleep, the drain of every
// socket until EAGAIN with each recv call timed, the paced sendmmsg sender
// and the spin threads (seed 000's "5 other threads busy").
//
// Include it first (it defines _GNU_SOURCE). Everything is static: each
// translation unit that includes it gets its own copy.
#ifndef RTLOAD_DRAINLOOP_H
#define RTLOAD_DRAINLOOP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cpuid.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

// tsc_fenced: read the TSC LFENCE;RDTSC;LFENCE instead of RDTSCP;LFENCE,
// as rtload does where CPUID offers no RDTSCP (a VM that hides it:
// executing RDTSCP there faults) or RTLOAD_TSC_READ=lfence asks. Set once
// by tsc_init, before any read.
static int tsc_fenced;

// tsc_init decides tsc_fenced as rtload's rt.readTSCFacts does: CPUID
// 0x80000001 EDX bit 27 (RDTSCP), or RTLOAD_TSC_READ=lfence.
static inline void tsc_init(void) {
	unsigned a, b, c, d = 0;
	const char *env = getenv("RTLOAD_TSC_READ");
	tsc_fenced = (env && strcmp(env, "lfence") == 0) || !__get_cpuid(0x80000001, &a, &b, &c, &d) || !(d & (1u << 27));
}

// rdtscp reads the TSC as rtload's rt/clock_amd64.s does: RDTSCP, then
// LFENCE so that later instructions do not start before the read; or,
// with tsc_fenced, LFENCE;RDTSC;LFENCE (rdtscFenced), the same bracketing.
static inline uint64_t rdtscp(void) {
	uint32_t lo, hi, aux;
	if (__builtin_expect(tsc_fenced, 0))
		__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	else
		__asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

// mono is CLOCK_MONOTONIC in ns.
static inline int64_t mono(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// sleep_until sleeps to CLOCK_MONOTONIC t (ns) with clock_nanosleep
// TIMER_ABSTIME, retrying EINTR (the deadline is absolute).
static inline void sleep_until(int64_t t) {
	struct timespec ts = {t / 1000000000, t % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

// drain_bufs is what one recv call is given: a 2048-byte data buffer, a
// source address buffer (sockaddr_storage, 128 bytes) and, for recvmsg, one
// iovec and a msghdr without a control buffer. drain450 keeps buf static
// (.bss) and the rest on the reader's stack; so does fidelity's C block.
struct drain_bufs {
	char *buf;
	size_t size;
	struct sockaddr_storage sa;
	socklen_t salen;
	struct iovec iov;
	struct msghdr mh;
};

static inline void drain_bufs_init(struct drain_bufs *b, char *buf, size_t size) {
	memset(b, 0, sizeof *b);
	b->buf = buf;
	b->size = size;
	b->iov.iov_base = buf;
	b->iov.iov_len = size;
	b->mh.msg_name = &b->sa;
	b->mh.msg_iov = &b->iov;
	b->mh.msg_iovlen = 1;
}

// drain_rec is what drain_tick records: the TSC ticks of each measured
// call in dts[0:n] (n < cap; calls beyond cap are counted in unrecorded,
// never dropped silently), and the calls by result. The caller folds dts
// into its histograms after the tick, as rtload's drain flushes its
// samples after the tick's last call: between two calls the loop only
// stores one value.
struct drain_rec {
	uint64_t *dts;
	size_t cap, n;
	uint64_t data, eagain, errs, unrecorded;
};

// drain_tick drains every socket of fds[0:nsock] once, in order, with
// MSG_DONTWAIT until EAGAIN (or another error), each recv call timed with
// rdtscp;lfence right before and right after it. use_msg picks recvmsg(2),
// else recvfrom(2), both with a source address buffer. rec == NULL
// records nothing (warm-up). No allocation; the only system calls are the
// recv calls.
static inline void drain_tick(const int *fds, int nsock, int use_msg, struct drain_bufs *b, struct drain_rec *rec) {
	for (int i = 0; i < nsock; i++) {
		for (;;) {
			ssize_t r;
			uint64_t t0 = rdtscp();
			if (use_msg) {
				b->mh.msg_namelen = sizeof b->sa;
				r = recvmsg(fds[i], &b->mh, MSG_DONTWAIT);
			} else {
				b->salen = sizeof b->sa;
				r = recvfrom(fds[i], b->buf, b->size, MSG_DONTWAIT, (struct sockaddr *)&b->sa, &b->salen);
			}
			uint64_t dt = rdtscp() - t0;
			if (rec) {
				if (rec->n < rec->cap)
					rec->dts[rec->n++] = dt;
				else
					rec->unrecorded++;
				if (r >= 0)
					rec->data++;
				else if (errno == EAGAIN)
					rec->eagain++;
				else
					rec->errs++;
			}
			if (r < 0)
				break;
		}
	}
}

// load_ctl drives the sender and spin threads: stop ends them; spins
// counts the spin threads' loops; the sender sends to addrs[0:nsock].
struct load_ctl {
	atomic_int stop;
	atomic_ullong spins;
	int nsock;
	const struct sockaddr_in *addrs;
	double interval_ms;
};

// spin_run busy-loops until ctl->stop (a SCHED_OTHER spin thread).
static void *spin_run(void *arg) {
	struct load_ctl *ctl = arg;
	uint64_t n = 0;
	while (!atomic_load_explicit(&ctl->stop, memory_order_relaxed))
		n++;
	atomic_fetch_add(&ctl->spins, n);
	return NULL;
}

// sender_run sends one 64-byte message per socket per interval, spread
// evenly: event n due at start + n*interval/N to socket n % N, due events
// batched into one sendmmsg of up to 64, sleeping to the next due time with
// 1 ns timer slack, as rtload's sender does. Each payload starts with
// rtload's header (net/udp Header): the sequence number per socket and the
// send time (CLOCK_MONOTONIC ns), little-endian.
static void *sender_run(void *arg) {
	struct load_ctl *ctl = arg;
	prctl(PR_SET_TIMERSLACK, 1);
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	struct mmsghdr mm[64];
	struct iovec iov[64];
	static char payload[64][64];
	memset(mm, 0, sizeof mm);
	int64_t step = (int64_t)(ctl->interval_ms * 1e6) / ctl->nsock, start = mono();
	uint64_t n = 0;
	while (!atomic_load(&ctl->stop)) {
		int64_t now = mono(), due = start + (int64_t)n * step;
		if (due > now) {
			int64_t w = due < now + 10000000 ? due : now + 10000000;
			sleep_until(w);
			continue;
		}
		int k = 0;
		while (k < 64 && start + (int64_t)n * step <= now) {
			int s = n % ctl->nsock;
			uint64_t *p = (uint64_t *)payload[k];
			p[0] = n / ctl->nsock;
			p[1] = now;
			iov[k].iov_base = payload[k];
			iov[k].iov_len = 64;
			mm[k].msg_hdr.msg_iov = &iov[k];
			mm[k].msg_hdr.msg_iovlen = 1;
			mm[k].msg_hdr.msg_name = (void *)&ctl->addrs[s];
			mm[k].msg_hdr.msg_namelen = sizeof ctl->addrs[s];
			k++;
			n++;
		}
		sendmmsg(tx, mm, k, 0);
	}
	close(tx);
	return NULL;
}

#endif
