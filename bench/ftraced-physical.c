// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-physical: the least a compressing recorder can do, so that
 * bench/compare.py can put a floor beside trace-cmd and ftraced on the
 * same load. Issue 14 calls its cost "the physical cost": zstd at the same
 * level on the same bytes, plus splice.
 *
 * Per CPU, one thread (unpinned, as ftraced's normal workers):
 *   - poll() the CPU's trace_pipe_raw (woken at the instance's
 *     buffer_percent, which the caller sets as ftraced does);
 *   - splice() whole sub-buffers into a pipe, read() them into a batch;
 *   - each full batch is one ZSTD_compressCCtx() at LEVEL, with zstd's own
 *     parameters for it, and one write() to OUT.cpuN.
 * Nothing more: no file format, metadata, symbols, index or accounting.
 *
 * SIGINT or SIGTERM stops it: tracing_on goes to 0, every thread drains
 * its CPU (whole sub-buffers by splice, the last partial one by read()),
 * then it prints key=value: events the kernel handed out (the per-CPU
 * stats' "read events"), raw and compressed bytes. Its caller takes the
 * CPU time from wait4().
 *
 * Usage: ftraced-physical INSTANCE_DIR LEVEL OUT_PREFIX
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zstd.h>

#include "daemon/base/bounds.h"
#include "lib/io-util.h"

#define BATCH_BYTES CHUNK_TARGET_BYTES /* ftraced's chunk */
#define PIPE_BYTES (1u << 20)
#define CPUS_MAX 1024
#define PATH_BYTES 4096

struct reader {
	unsigned cpu;
	int trace_fd;
	int out_fd;
	int pipe_fd[2];
	int stop_fd; /* shared eventfd, never read: once set, every poll() sees it */
	size_t subbuf_size;
	uint8_t *batch;
	size_t n_batch;
	void *dst;
	size_t dst_cap;
	ZSTD_CCtx *cctx;
	int level;
	uint64_t raw, out;
	int error;
	pthread_t thread;
};

static int stop_fd = -1;

static void on_signal(int sig)
{
	uint64_t one = 1;

	(void)sig;
	(void)!write(stop_fd, &one, sizeof(one));
}

static int flush_batch(struct reader *r)
{
	size_t n;
	int e;

	if (r->n_batch == 0)
		return 0;
	n = ZSTD_compressCCtx(r->cctx, r->dst, r->dst_cap, r->batch, r->n_batch, r->level);
	if (ZSTD_isError(n))
		return -EIO;
	e = loop_write(r->out_fd, r->dst, n);
	if (e < 0)
		return e;
	r->raw += r->n_batch;
	r->out += n;
	r->n_batch = 0;
	return 0;
}

/* Appends @n bytes from the pipe to the batch, compressing each time it is full. */
static int take_from_pipe(struct reader *r, size_t n)
{
	while (n > 0) {
		size_t want = BATCH_BYTES - r->n_batch < n ? BATCH_BYTES - r->n_batch : n;
		int e = loop_read_exact(r->pipe_fd[0], r->batch + r->n_batch, want);

		if (e < 0)
			return e;
		r->n_batch += want;
		n -= want;
		if (r->n_batch == BATCH_BYTES) {
			e = flush_batch(r);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

/* Splices whole sub-buffers until the kernel has none left. */
static int drain_whole(struct reader *r)
{
	for (;;) {
		ssize_t n = splice(r->trace_fd, NULL, r->pipe_fd[1], NULL, PIPE_BYTES,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		int e;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		e = take_from_pipe(r, (size_t)n);
		if (e < 0)
			return e;
	}
}

/* After tracing is off: what splice refuses, the partly filled sub-buffers. */
static int drain_partial(struct reader *r)
{
	for (;;) {
		ssize_t k;

		if (r->n_batch + r->subbuf_size > BATCH_BYTES) {
			int e = flush_batch(r);

			if (e < 0)
				return e;
		}
		k = read(r->trace_fd, r->batch + r->n_batch, r->subbuf_size);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? flush_batch(r) : -errno;
		if (k == 0)
			return flush_batch(r);
		r->n_batch += r->subbuf_size; /* the kernel zeroes what follows a short one */
	}
}

static void *reader_main(void *userdata)
{
	struct reader *r = userdata;
	struct pollfd p[2] = { { .fd = r->trace_fd, .events = POLLIN },
			       { .fd = r->stop_fd, .events = POLLIN } };

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			r->error = -errno;
			return NULL;
		}
		if (p[1].revents)
			break;
		r->error = drain_whole(r);
		if (r->error < 0)
			return NULL;
	}
	return NULL;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = write(fd, text, strlen(text));
	close(fd);
	return k < 0 ? -errno : 0;
}

/* The kernel's count of events it handed to readers of @cpu. */
static uint64_t read_events(const char *instance, unsigned cpu)
{
	char path[PATH_BYTES], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%u/stats", instance, cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "read events:");
	return p ? strtoull(p + strlen("read events:"), NULL, 10) : 0;
}

static int reader_open(struct reader *r, const char *instance, const char *out_prefix)
{
	char path[PATH_BYTES];

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%u/trace_pipe_raw", instance, r->cpu);
	r->trace_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->trace_fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s.cpu%u", out_prefix, r->cpu);
	r->out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->out_fd < 0)
		return -errno;
	if (pipe2(r->pipe_fd, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	(void)fcntl(r->pipe_fd[1], F_SETPIPE_SZ, (int)PIPE_BYTES);
	r->batch = malloc(BATCH_BYTES);
	r->dst_cap = ZSTD_compressBound(BATCH_BYTES);
	r->dst = malloc(r->dst_cap);
	r->cctx = ZSTD_createCCtx();
	return r->batch && r->dst && r->cctx ? 0 : -ENOMEM;
}

int main(int argc, char **argv)
{
	static struct reader readers[CPUS_MAX];
	char path[PATH_BYTES];
	uint64_t events = 0, raw = 0, out = 0;
	long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
	size_t subbuf_size = (size_t)sysconf(_SC_PAGESIZE);
	int e;

	if (argc != 4) {
		fprintf(stderr, "Usage: ftraced-physical INSTANCE_DIR LEVEL OUT_PREFIX\n");
		return 2;
	}
	if (n_cpus < 1 || n_cpus > CPUS_MAX) {
		fprintf(stderr, "ftraced-physical: %ld CPUs, at most %d handled\n", n_cpus, CPUS_MAX);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", argv[1]);
	{
		FILE *f = fopen(path, "re");
		unsigned kb;

		/* Kernels before 6.8 have 4 KiB sub-buffers, the page size, and no such file. */
		if (f && fscanf(f, "%u", &kb) == 1)
			subbuf_size = (size_t)kb * 1024;
		if (f)
			fclose(f);
	}
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_fd < 0 || signal(SIGINT, on_signal) == SIG_ERR ||
	    signal(SIGTERM, on_signal) == SIG_ERR) {
		perror("ftraced-physical");
		return 1;
	}
	for (long cpu = 0; cpu < n_cpus; cpu++) {
		struct reader *r = &readers[cpu];

		*r = (struct reader){ .cpu = (unsigned)cpu, .trace_fd = -1, .out_fd = -1,
				      .pipe_fd = { -1, -1 }, .stop_fd = stop_fd,
				      .subbuf_size = subbuf_size, .level = atoi(argv[2]) };
		e = reader_open(r, argv[1], argv[3]);
		if (e == 0)
			e = -pthread_create(&r->thread, NULL, reader_main, r);
		if (e < 0) {
			fprintf(stderr, "ftraced-physical: CPU %ld: %s\n", cpu, strerror(-e));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (long cpu = 0; cpu < n_cpus; cpu++)
		pthread_join(readers[cpu].thread, NULL);
	snprintf(path, sizeof(path), "%s/tracing_on", argv[1]);
	e = write_file(path, "0\n");
	if (e < 0)
		fprintf(stderr, "ftraced-physical: %s: %s\n", path, strerror(-e));
	for (long cpu = 0; cpu < n_cpus; cpu++) {
		struct reader *r = &readers[cpu];

		if (r->error == 0)
			r->error = drain_whole(r);
		if (r->error == 0)
			r->error = drain_partial(r);
		if (r->error < 0) {
			fprintf(stderr, "ftraced-physical: CPU %ld: %s\n", cpu, strerror(-r->error));
			return 1;
		}
		events += read_events(argv[1], (unsigned)cpu);
		raw += r->raw;
		out += r->out;
	}
	printf("events=%llu raw=%llu out=%llu\n", (unsigned long long)events,
	       (unsigned long long)raw, (unsigned long long)out);
	return 0;
}
