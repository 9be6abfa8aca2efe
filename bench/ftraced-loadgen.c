// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-loadgen: a known workload for tests and benchmarks, pinned to
 * one CPU.
 *
 *   marker:  writes "ftseq=TAG:CPU:I" for I = 0..COUNT-1 into an
 *            instance's trace_marker, so a reader can check that every
 *            number arrived exactly once and in order; with --also-instance,
 *            each marker goes into a second instance's trace_marker too, so
 *            two recorders capture the same workload at the same time;
 *   syscall: calls getppid() COUNT times (a cheap, filterable syscall), each
 *   from loadgen_syscall(i), a function for uprobes to count.
 *
 * At a given rate per second, or flat out (rate 0), for COUNT events or
 * until --seconds have passed, whichever comes first. With --wait, it prints
 * its pid and waits for a line on stdin before starting, so a capture can
 * filter on its pid. At the end it prints "written=N failed=M seconds=S":
 * a marker write fails (EBADF) when the ring buffer is full and the
 * instance does not overwrite, which counts as a loss.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One syscall of --syscall mode: a real function with the call's number, for uprobe tests. */
__attribute__((noinline, used)) void loadgen_syscall(unsigned long long n);
__attribute__((noinline, used)) void loadgen_syscall(unsigned long long n)
{
	__asm__ volatile("" : : "r"(n) : "memory"); /* kept: the call is what is probed */
	syscall(SYS_getppid);
}

/* The trace_marker of instance @name, opened for writing, or -1 (said on stderr). */
static int open_marker(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/instances/%s/trace_marker", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "ftraced-loadgen: cannot open %s: %m\n", path);
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "Usage: ftraced-loadgen --cpu N --count N [--rate PER_SEC] [--seconds S] [--wait]\n"
			"         (--instance NAME [--also-instance NAME] [--tag TAG] [--tracing-dir DIR]\n"
			"          | --syscall)\n");
}

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "also-instance", required_argument, NULL, 'a' },
		{ "tracing-dir", required_argument, NULL, 't' },
		{ "tag", required_argument, NULL, 'g' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },
		{ "syscall", no_argument, NULL, 's' },
		{ "wait", no_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 'S' },
		{}
	};
	const char *instance = NULL, *also = NULL, *dir = "/sys/kernel/tracing", *tag = "t";
	unsigned long long count = 0, failed = 0, i;
	double rate = 0, seconds = 0, start, elapsed;
	bool syscall_mode = false, wait_stdin = false;
	int cpu = -1, fd = -1, also_fd = -1, c;
	cpu_set_t set;
	char buf[128];

	while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
		switch (c) {
		case 'i': instance = optarg; break;
		case 'a': also = optarg; break;
		case 't': dir = optarg; break;
		case 'g': tag = optarg; break;
		case 'c': cpu = atoi(optarg); break;
		case 'n': count = strtoull(optarg, NULL, 10); break;
		case 'r': rate = atof(optarg); break;
		case 's': syscall_mode = true; break;
		case 'w': wait_stdin = true; break;
		case 'S': seconds = atof(optarg); break;
		default: usage(); return 2;
		}
	}
	if (cpu < 0 || count == 0 || (!syscall_mode && !instance) || (syscall_mode && also) ||
	    strlen(tag) > 32) {
		usage();
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		fprintf(stderr, "ftraced-loadgen: cannot pin to CPU %d: %m\n", cpu);
		return 1;
	}
	if (!syscall_mode) {
		fd = open_marker(dir, instance);
		if (fd < 0)
			return 1;
	}
	if (also) {
		also_fd = open_marker(dir, also);
		if (also_fd < 0)
			return 1;
	}
	if (wait_stdin) {
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
	}

	start = now();
	for (i = 0; i < count; i++) {
		if (seconds > 0 && (i & 255) == 0 && now() - start >= seconds)
			break;
		if (rate > 0 && (i & 63) == 0) {
			double due = start + (double)i / rate, t = now();

			if (due > t) {
				struct timespec ts = { .tv_sec = (time_t)(due - t),
						       .tv_nsec = (long)((due - t - (double)(time_t)(due - t)) * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
		if (syscall_mode) {
			loadgen_syscall(i);
		} else {
			int n = snprintf(buf, sizeof(buf), "ftseq=%s:%d:%llu", tag, cpu, i);

			/* A marker refused by either instance counts as failed. */
			if (write(fd, buf, (size_t)n) != n ||
			    (also_fd >= 0 && write(also_fd, buf, (size_t)n) != n))
				failed++;
		}
	}
	elapsed = now() - start;
	printf("written=%llu failed=%llu seconds=%.6f\n", i - failed, failed, elapsed);
	return 0;
}
