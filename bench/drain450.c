// drain450: seed 000 in plain C, the baseline `make bench` compares rtload
// against. N UDP sockets bound on 127.0.0.1 ephemeral ports; a sender thread
// sends one 64-byte message per socket per interval, spread evenly (event n
// due at start + n*interval/N, socket n % N, due events batched into one
// sendmmsg of up to 64, sleeping to the next due time with 1 ns timer slack,
// as rtload's sender does); a reader thread pinned to one CPU at SCHED_FIFO
// with mlockall wakes on absolute CLOCK_MONOTONIC ticks (clock_nanosleep
// TIMER_ABSTIME) and drains every socket with MSG_DONTWAIT until EAGAIN,
// timing each recv call with rdtscp;lfence before and after (rtload's
// rt/clock_amd64.s). Spin threads (SCHED_OTHER, unpinned) are the seed's
// "5 other threads busy".
//
// Per-call cost is kept in a 1-tick histogram up to 2^20 ticks (exact
// percentiles) plus the seed's 128-tick table from origin 64. The drain
// stores each call's ticks and the reader folds them into the histograms
// after the tick (as rtload's drain flushes its samples after the tick's
// last call). The loop itself (timing, drain, sender, spin) is
// bench/drainloop.h, which bench/cmd/fidelity compiles in through cgo to
// run this loop and rtload's drain on one thread.
//
// Usage:
//   drain450 [-n sockets] [-m recvfrom,recvmsg] [-d seconds] [-w warmup]
//            [-c cpu] [-p prio] [-P period_ms] [-i interval_ms] [-N spin]
//            [-r rcvbuf] [-L us] [-o]
//   -L us   hold /dev/cpu_dma_latency at us while running (rtload and
//           cyclictest hold 0 by default; -1, the default here, holds nothing)
//   -o      set SO_RXQ_OVFL on every socket (as rtload did before it dropped it)
//   drain450 -S seconds -N threads     spin only (noise for cyclictest/rtload)
//   drain450 -T reads                   cost of one rdtscp;lfence read, ns:
//           ns_per_read is the median over blocks of 1000 reads (robust to
//           preemptions on a loaded machine, as rtload's BenchmarkOverhead),
//           ns_per_read_mean the whole run's mean
// Output: one JSON object per method on stdout, one line each.
#define _GNU_SOURCE
#include "drainloop.h"
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define FINE (1u << 20)
#define WIDTH 128
#define ORIGIN 64
#define OVERFLOW 8256
#define NBUCKETS (1 + (OVERFLOW - ORIGIN) / WIDTH)
#define MAXTICKS 100000
#define TICKCALLS (1u << 16) // samples one tick holds (calls beyond: unrecorded_calls)

static int nsock = 450, cpu = 1, prio = 80, nspin = 5, rcvbuf = 256 * 1024, dma_us = -1, rxq_ovfl;
static double dur = 4, warm = 0.5, period_ms = 10, interval_ms = 20;
static int *fds;
static struct sockaddr_in *addrs;
static struct load_ctl ctl;

struct result {
	uint64_t calls, data, eagain, errs, unrecorded, wakeups, overruns, msgs, sum, max;
	uint64_t buckets[NBUCKETS + 1];
	double wake_ns[MAXTICKS], drain_ns[MAXTICKS];
};
static uint32_t *fine;
static struct result res;
static const char *method;

static uint64_t *tick_dts;

// fold adds one tick's recorded calls to res and empties r.
static void fold(struct drain_rec *r) {
	for (size_t j = 0; j < r->n; j++) {
		uint64_t dt = r->dts[j];
		res.calls++;
		res.sum += dt;
		if (dt > res.max)
			res.max = dt;
		fine[dt < FINE ? dt : FINE - 1]++;
		res.buckets[dt < ORIGIN ? 0 : dt >= OVERFLOW ? NBUCKETS : 1 + (dt - ORIGIN) / WIDTH]++;
	}
	res.data += r->data;
	res.msgs += r->data;
	res.eagain += r->eagain;
	res.errs += r->errs;
	res.unrecorded += r->unrecorded;
	r->n = 0;
	r->data = r->eagain = r->errs = r->unrecorded = 0;
}

static void *reader(void *arg) {
	(void)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		perror("sched_setaffinity");
	struct sched_param sp = {.sched_priority = prio};
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		perror("sched_setscheduler");
	prctl(PR_SET_TIMERSLACK, 1);
	static char buf[2048];
	struct drain_bufs bufs;
	drain_bufs_init(&bufs, buf, sizeof buf);
	struct drain_rec rec = {.dts = tick_dts, .cap = TICKCALLS};
	int use_msg = strcmp(method, "recvmsg") == 0;
	int64_t period = (int64_t)(period_ms * 1e6);
	int64_t start = mono() + period, measure_from = start + (int64_t)(warm * 1e9),
		end = measure_from + (int64_t)(dur * 1e9);
	int64_t deadline = start;
	for (;;) {
		sleep_until(deadline);
		int64_t woke = mono();
		if (deadline >= end)
			break;
		int on = deadline >= measure_from;
		uint64_t d0 = rdtscp();
		drain_tick(fds, nsock, use_msg, &bufs, on ? &rec : NULL);
		uint64_t d1 = rdtscp();
		if (on) {
			fold(&rec);
			if (res.wakeups < MAXTICKS) {
				res.wake_ns[res.wakeups] = woke - deadline;
				res.drain_ns[res.wakeups] = (double)(d1 - d0);
				res.wakeups++;
			}
		}
		deadline += period;
		int64_t now = mono();
		while (deadline <= now) { // skip: jump to the next due tick
			deadline += period;
			if (on)
				res.overruns++;
		}
	}
	return NULL;
}

static uint64_t pct(double q) {
	uint64_t want = (uint64_t)(q * res.calls + 0.999999), acc = 0;
	if (want < 1)
		want = 1;
	for (uint32_t i = 0; i < FINE; i++) {
		acc += fine[i];
		if (acc >= want)
			return i;
	}
	return res.max;
}

static int cmpd(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double dpct(double *v, uint64_t n, double q) {
	if (!n)
		return 0;
	uint64_t i = (uint64_t)(q * n + 0.999999);
	if (i < 1)
		i = 1;
	return v[i - 1];
}

static double tsc_hz(void) {
	int64_t m0 = mono();
	uint64_t t0 = rdtscp();
	sleep_until(m0 + 100000000);
	int64_t m1 = mono();
	uint64_t t1 = rdtscp();
	return (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
}

int main(int argc, char **argv) {
	char *methods = "recvfrom,recvmsg";
	double spin_only = 0;
	long clock_reads = 0;
	int o;
	tsc_init();
	while ((o = getopt(argc, argv, "n:m:d:w:c:p:P:i:N:r:S:T:L:o")) != -1) {
		switch (o) {
		case 'n': nsock = atoi(optarg); break;
		case 'm': methods = optarg; break;
		case 'd': dur = atof(optarg); break;
		case 'w': warm = atof(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'p': prio = atoi(optarg); break;
		case 'P': period_ms = atof(optarg); break;
		case 'i': interval_ms = atof(optarg); break;
		case 'N': nspin = atoi(optarg); break;
		case 'r': rcvbuf = atoi(optarg); break;
		case 'S': spin_only = atof(optarg); break;
		case 'T': clock_reads = atol(optarg); break;
		case 'L': dma_us = atoi(optarg); break;
		case 'o': rxq_ovfl = 1; break;
		default: fprintf(stderr, "usage: see the comment at the top of drain450.c\n"); return 2;
		}
	}
	if (clock_reads > 0) {
		volatile uint64_t sink = 0;
		long nblocks = clock_reads / 1000 > 0 ? clock_reads / 1000 : 1;
		double *block = malloc(nblocks * sizeof(double));
		if (!block)
			return 1;
		int64_t t0 = mono();
		for (long b = 0; b < nblocks; b++) {
			int64_t b0 = mono();
			for (int i = 0; i < 1000; i++)
				sink += rdtscp();
			block[b] = (double)(mono() - b0) / 1000;
		}
		double mean = (double)(mono() - t0) / (nblocks * 1000);
		qsort(block, nblocks, sizeof(double), cmpd);
		printf("{\"clock_reads\":%ld,\"ns_per_read\":%.2f,\"ns_per_read_mean\":%.2f}\n", nblocks * 1000, block[nblocks / 2], mean);
		free(block);
		return 0;
	}
	pthread_t sp[64], tx, rx;
	if (nspin > 64)
		nspin = 64;
	if (spin_only > 0) {
		for (int i = 0; i < nspin; i++)
			pthread_create(&sp[i], NULL, spin_run, &ctl);
		sleep_until(mono() + (int64_t)(spin_only * 1e9));
		atomic_store(&ctl.stop, 1);
		for (int i = 0; i < nspin; i++)
			pthread_join(sp[i], NULL);
		printf("{\"spin_threads\":%d,\"loops\":%llu}\n", nspin, (unsigned long long)atomic_load(&ctl.spins));
		return 0;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall");
	if (dma_us >= 0) { // the PM QoS request lasts while the fd is open
		int32_t us = dma_us;
		int qfd = open("/dev/cpu_dma_latency", O_WRONLY);
		if (qfd < 0 || write(qfd, &us, sizeof us) != sizeof us) {
			perror("/dev/cpu_dma_latency");
			return 1;
		}
	}
	fine = calloc(FINE, sizeof *fine);
	tick_dts = calloc(TICKCALLS, sizeof *tick_dts);
	fds = calloc(nsock, sizeof *fds);
	addrs = calloc(nsock, sizeof *addrs);
	int64_t setup0 = mono();
	for (int i = 0; i < nsock; i++) {
		fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (fds[i] < 0) {
			perror("socket");
			return 1;
		}
		if (setsockopt(fds[i], SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf))
			setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		int one = 1;
		if (rxq_ovfl && setsockopt(fds[i], SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one)) {
			perror("setsockopt SO_RXQ_OVFL");
			return 1;
		}
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (bind(fds[i], (struct sockaddr *)&a, sizeof a)) {
			perror("bind");
			return 1;
		}
		socklen_t l = sizeof addrs[i];
		getsockname(fds[i], (struct sockaddr *)&addrs[i], &l);
	}
	double setup_ms = (mono() - setup0) / 1e6;
	double hz = tsc_hz();
	for (int i = 0; i < nspin; i++)
		pthread_create(&sp[i], NULL, spin_run, &ctl);
	ctl.nsock = nsock;
	ctl.addrs = addrs;
	ctl.interval_ms = interval_ms;
	pthread_create(&tx, NULL, sender_run, &ctl);
	for (char *m = strtok(strdup(methods), ","); m; m = strtok(NULL, ",")) {
		method = m;
		memset(&res, 0, sizeof res);
		memset(fine, 0, FINE * sizeof *fine);
		pthread_create(&rx, NULL, reader, NULL);
		pthread_join(rx, NULL);
		qsort(res.wake_ns, res.wakeups, sizeof(double), cmpd);
		qsort(res.drain_ns, res.wakeups, sizeof(double), cmpd);
		printf("{\"method\":\"%s\",\"sockets\":%d,\"tsc_hz\":%.0f,\"setup_ms\":%.3f,\"calls\":%llu,\"data_calls\":%llu,"
		       "\"eagain_calls\":%llu,\"errors\":%llu,\"unrecorded_calls\":%llu,\"messages\":%llu,\"mean_ticks\":%.1f,\"p50_ticks\":%llu,"
		       "\"p90_ticks\":%llu,\"p99_ticks\":%llu,\"p99_9_ticks\":%llu,\"max_ticks\":%llu,\"wakeups\":%llu,"
		       "\"overruns\":%llu,\"wakeup_p50_ns\":%.0f,\"wakeup_p99_ns\":%.0f,\"wakeup_max_ns\":%.0f,"
		       "\"drain_p50_ns\":%.0f,\"drain_p99_ns\":%.0f,\"buckets\":[",
		       m, nsock, hz, setup_ms, (unsigned long long)res.calls, (unsigned long long)res.data,
		       (unsigned long long)res.eagain, (unsigned long long)res.errs, (unsigned long long)res.unrecorded, (unsigned long long)res.msgs,
		       res.calls ? (double)res.sum / res.calls : 0, (unsigned long long)pct(.5), (unsigned long long)pct(.9),
		       (unsigned long long)pct(.99), (unsigned long long)pct(.999), (unsigned long long)res.max,
		       (unsigned long long)res.wakeups, (unsigned long long)res.overruns, dpct(res.wake_ns, res.wakeups, .5),
		       dpct(res.wake_ns, res.wakeups, .99), res.wakeups ? res.wake_ns[res.wakeups - 1] : 0,
		       dpct(res.drain_ns, res.wakeups, .5) * 1e9 / hz, dpct(res.drain_ns, res.wakeups, .99) * 1e9 / hz);
		for (int i = 0; i <= NBUCKETS; i++)
			printf("%s%llu", i ? "," : "", (unsigned long long)res.buckets[i]);
		printf("]}\n");
		fflush(stdout);
	}
	atomic_store(&ctl.stop, 1);
	pthread_join(tx, NULL);
	for (int i = 0; i < nspin; i++)
		pthread_join(sp[i], NULL);
	return 0;
}
