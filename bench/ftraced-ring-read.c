// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-ring-read: what reading one CPU's ring buffer costs the reader,
 * two ways, on the same workload.
 *
 *   splice: splice() trace_pipe_raw -> pipe, read() the pipe into memory
 *           (what ftraced's capture streams do);
 *   read:   read() trace_pipe_raw straight into memory, a sub-buffer per
 *           call (the kernel swaps a full one out and copies it once; it
 *           copies the events of the one being written, leaving it partial);
 *   mmap:   map the ring (kernel >= 6.10), TRACE_MMAP_IOCTL_GET_READER for
 *           each sub-buffer, copy the new bytes of the reader sub-buffer
 *           into memory (the copy stands in for the pending batch, as the
 *           read() does for splice).
 *
 * Both wait in poll() for the instance's buffer_percent, as ftraced does.
 * Prints the reader's CPU time (its own thread, kernel included) per MiB
 * taken from the ring. bench/ring-read.sh sets up the instance and load.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* include/uapi/linux/trace_mmap.h (6.10); Debian 12's headers predate it. */
struct trace_buffer_meta {
	uint32_t meta_page_size;
	uint32_t meta_struct_len;
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	struct {
		uint64_t lost_events;
		uint32_t id;
		uint32_t read;
	} reader;
	uint64_t flags;
	uint64_t entries;
	uint64_t overrun;
	uint64_t read;
};

#define TRACE_MMAP_IOCTL_GET_READER _IO('R', 0x20)
#define SUBBUF_HDR_BYTES 16u          /* u64 timestamp, u64 commit */
#define COMMIT_SIZE_MASK ((1u << 27) - 1)
#define PIPE_BYTES (1u << 20)
#define SINK_BYTES (1u << 20)

static uint8_t sink[SINK_BYTES];
static size_t n_sink;
static uint64_t total, calls;

/* Where the reader's bytes go: a batch buffer, as in a capture stream. */
static void take(const void *p, size_t n)
{
	if (n > SINK_BYTES)
		n = SINK_BYTES;
	if (n_sink + n > SINK_BYTES)
		n_sink = 0;
	memcpy(sink + n_sink, p, n);
	n_sink += n;
	total += n;
}

static double seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int wait_for_data(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 200) < 0 && errno != EINTR ? -errno : 0;
}

static int read_by_splice(int fd, double until)
{
	static uint8_t buf[PIPE_BYTES];
	int pipe_fd[2];

	if (pipe2(pipe_fd, O_NONBLOCK) < 0)
		return -errno;
	(void)fcntl(pipe_fd[1], F_SETPIPE_SZ, (int)PIPE_BYTES);
	while (seconds(CLOCK_MONOTONIC) < until) {
		if (wait_for_data(fd) < 0)
			return -errno;
		for (;;) {
			ssize_t n = splice(fd, NULL, pipe_fd[1], NULL, PIPE_BYTES,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			ssize_t k;

			calls++;
			if (n <= 0)
				break;
			k = read(pipe_fd[0], buf, (size_t)n);
			calls++;
			if (k > 0)
				take(buf, (size_t)k);
		}
	}
	return 0;
}

static int read_directly(int fd, double until)
{
	static uint8_t buf[PIPE_BYTES];

	while (seconds(CLOCK_MONOTONIC) < until) {
		if (wait_for_data(fd) < 0)
			return -errno;
		for (;;) {
			ssize_t k = read(fd, buf, sizeof(buf));

			calls++;
			if (k <= 0)
				break;
			take(buf, (size_t)k);
		}
	}
	return 0;
}

static int read_by_mmap(int fd, double until)
{
	const struct trace_buffer_meta *meta;
	const uint8_t *data;
	uint32_t id = UINT32_MAX, done = 0;

	meta = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED)
		return -errno;
	data = mmap(NULL, (size_t)meta->subbuf_size * meta->nr_subbufs, PROT_READ, MAP_SHARED, fd,
		    meta->meta_page_size);
	if (data == MAP_FAILED)
		return -errno;
	while (seconds(CLOCK_MONOTONIC) < until) {
		if (wait_for_data(fd) < 0)
			return -errno;
		/*
		 * Each GET_READER hands over the reader sub-buffer; everything
		 * committed to it is ours until the next call, which may swap it.
		 */
		for (;;) {
			const uint8_t *subbuf;
			uint32_t commit;

			if (ioctl(fd, TRACE_MMAP_IOCTL_GET_READER) < 0)
				return -errno;
			calls++;
			if (meta->reader.id != id) {
				id = meta->reader.id;
				done = 0;
			}
			subbuf = data + (size_t)id * meta->subbuf_size;
			commit = (uint32_t)(*(const volatile uint64_t *)(subbuf + 8)) &
				 COMMIT_SIZE_MASK;
			if (commit <= done)
				break;
			take(subbuf, SUBBUF_HDR_BYTES);
			take(subbuf + SUBBUF_HDR_BYTES + done, commit - done);
			done = commit;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	double cpu0, until;
	cpu_set_t cpus;
	int fd, r;

	if (argc != 5 || (strcmp(argv[1], "splice") && strcmp(argv[1], "read") &&
			  strcmp(argv[1], "mmap"))) {
		fprintf(stderr, "Usage: ftraced-ring-read splice|read|mmap TRACE_PIPE_RAW SECONDS "
			"READER_CPU\n");
		return 2;
	}
	CPU_ZERO(&cpus);
	CPU_SET(atoi(argv[4]), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) < 0)
		perror("sched_setaffinity");
	fd = open(argv[2], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	until = seconds(CLOCK_MONOTONIC) + atof(argv[3]);
	cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
	r = strcmp(argv[1], "mmap") == 0   ? read_by_mmap(fd, until) :
	    strcmp(argv[1], "read") == 0   ? read_directly(fd, until) :
					     read_by_splice(fd, until);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	printf("%s: %.1f MiB, reader CPU %.3f s, %.0f us/MiB, %llu system calls\n", argv[1],
	       (double)total / 1048576.0, cpu0, cpu0 * 1e6 / ((double)total / 1048576.0 + 1e-9),
	       (unsigned long long)calls);
	return 0;
}
