// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a session's trace clock stands against the wall clock: trace-cmd's
 * --date option (DATE, microseconds to add to the trace timestamps), so
 * `trace-cmd report` prints times that line up with journald and
 * application logs. Measured once per session, at its start, so that all
 * its files (segments, snapshots, recovered files) line up exactly with
 * each other.
 *
 * Clocks the kernel shares with user space (mono, mono_raw, boot, tai) are
 * read directly. The others (local, global, perf: sched_clock) are read the
 * way trace-cmd does it, by writing a marker between two readings of the
 * wall clock and reading back its timestamp; ftraced does it in a small
 * instance of its own, never in the top-level buffer or a session's.
 * Counter clocks (counter, x86-tsc) have no mapping to time: no DATE.
 *
 * tracefs is shared, so the instance may be removed by another process
 * (nothing holds its files open between readings): it is made again at
 * the next reading. It is also the daemon's mark on its instance tag in
 * tracefs: from its first reading on (the first session on a marker
 * clock: local, the default, global or perf), the daemon holds a lock
 * (flock) on the instance's directory for its life. A state directory copied, with its tag, to another daemon (in
 * another mount namespace, say) shares nothing else with this one, but
 * tracefs is the same everywhere: that daemon finds the lock taken and
 * refuses to start, naming the holder (clock_anchor_check_tag()). The
 * lock is the kernel's: it goes with the process, and an open directory
 * does not keep the instance from being removed.
 *
 * Main thread only (start-up and session setup).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "lib/io-util.h"

/* The calibration instance's id: sessions count from 1, triggers from 1 << 40. */
#define CLOCK_ANCHOR_INSTANCE_ID 0
#define CLOCK_ANCHOR_BUFFER_KB 4u
/* Readings taken at most; the one with the narrowest wall-clock window wins. */
#define CLOCK_ANCHOR_TRIES 3
/*
 * A window this narrow ends the readings: the midpoint is then within
 * 10 us of the marker, and each reading costs a read of the ring's text.
 */
#define CLOCK_ANCHOR_WINDOW_GOOD_NS 20000u
/* One read of the ring's text: 4 KiB of markers per CPU come to about 7 KiB. */
#define CLOCK_ANCHOR_TEXT_MAX 16384u
/* /proc/locks: a line is "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO 0 EOF", well within this. */
#define PROC_LOCKS_LINE_MAX 256u
/* Each marker's text: this prefix and a number no earlier marker had. */
#define CLOCK_ANCHOR_STAMP "ftraced-clock-anchor"
#define CLOCK_ANCHOR_STAMP_MAX (sizeof(CLOCK_ANCHOR_STAMP) + 21)

struct clock_anchor {
	uint32_t tag;
	struct instance *instance; /* made at first use, and again if it was removed */
	int lock_fd;               /* its directory, locked: the tag is this daemon's */
	char clock[32];            /* the instance's clock now */
	uint64_t stamps;           /* markers written so far */
};

/* The anchor instance's directory for a tag: where the lock is. */
static int anchor_dir(uint32_t tag, char *buf, size_t n)
{
	const char *tracing = tracefs_tracing_dir();

	if (!tracing)
		return -ENOENT;
	if ((size_t)snprintf(buf, n, "%s/instances/ftraced-%08" PRIx32 "-%d", tracing, tag,
			     CLOCK_ANCHOR_INSTANCE_ID) >= n)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The process holding the flock on @fd's inode, from /proc/locks, into
 * @holder ("pid N"; one in a pid namespace not visible from here shows no
 * pid there).
 */
static void lock_holder(int fd, char *holder, size_t n)
{
	char line[PROC_LOCKS_LINE_MAX], want[64];
	struct stat st;
	FILE *f;

	snprintf(holder, n, "a process not visible from here");
	if (fstat(fd, &st) < 0)
		return;
	snprintf(want, sizeof(want), " %02x:%02x:%llu ", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, want);
		long pid;

		if (!at || !strstr(line, "FLOCK"))
			continue;
		/* The pid is the word before the device and inode. */
		while (at > line && at[-1] == ' ')
			at--;
		while (at > line && at[-1] != ' ')
			at--;
		pid = strtol(at, NULL, 10);
		if (pid > 0)
			snprintf(holder, n, "pid %ld", pid);
		break;
	}
	fclose(f);
}

/*
 * Locks the directory at @path for this process's life. Return: the fd,
 * -EBUSY (another process holds it: named in @holder), or -errno.
 */
static int lock_dir(const char *path, char *holder, size_t n)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return negative_errno();
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return negative_errno();
		lock_holder(fd, holder, n);
		return -EBUSY;
	}
	return TAKE_FD(fd);
}

/**
 * clock_anchor_check_tag() - is the tag another live daemon's?
 * @tag: the tag this daemon's state directory names
 * @holder: receives the other daemon ("pid N") when it is
 * @n: its size
 *
 * Called at the start, before orphans are removed: an anchor instance
 * whose directory is locked belongs to a daemon that is running (one that
 * died left it unlocked, an orphan).
 *
 * Return: 0 (the tag is free), -EBUSY (taken: @holder says by whom), or -errno.
 */
int clock_anchor_check_tag(uint32_t tag, char *holder, size_t n)
{
	char path[PATH_MAX];
	int r = anchor_dir(tag, path, sizeof(path));

	if (r < 0)
		return r;
	r = lock_dir(path, holder, n);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	close(r); /* an orphan's: removed with the others */
	return 0;
}

/*
 * Takes the lock on the anchor instance (just made), the tag's mark in
 * tracefs. Return: 0, -EBUSY if another daemon made it first, or -errno.
 */
static int lock_instance(struct clock_anchor *a)
{
	char path[PATH_MAX], holder[64];
	int r = anchor_dir(a->tag, path, sizeof(path));

	if (r >= 0)
		r = lock_dir(path, holder, sizeof(holder));
	if (r == -EBUSY)
		log_error("The instance tag %08" PRIx32 " is held by another ftraced too (%s)",
			  a->tag, holder);
	if (r < 0)
		return r;
	a->lock_fd = safe_close(a->lock_fd);
	a->lock_fd = r;
	return 0;
}

/**
 * clock_anchor_new() - the anchor; its instance is made (and locked) at its first use.
 * @tag: the daemon's instance tag (orphans with it removed already)
 * @ret: the anchor
 *
 * Not at the start: sizing any instance's buffer sets the kernel's
 * "expanded" flag for good, after which the top level's boot ring (7 KiB
 * per CPU) is never grown for the next tool that uses it. A daemon that
 * records nothing leaves that as it is.
 *
 * Return: 0 or -ENOMEM.
 */
int clock_anchor_new(uint32_t tag, struct clock_anchor **ret)
{
	struct clock_anchor *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->tag = tag;
	a->lock_fd = -EBADF;
	*ret = a;
	return 0;
}

struct clock_anchor *clock_anchor_free(struct clock_anchor *a)
{
	if (!a)
		return NULL;
	a->instance = instance_free(a->instance);
	safe_close(a->lock_fd);
	free(a);
	return NULL;
}

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The POSIX clock a trace clock is, or -1. */
static clockid_t posix_clock(const char *clock)
{
	if (strcmp(clock, "mono") == 0)
		return CLOCK_MONOTONIC;
	if (strcmp(clock, "mono_raw") == 0)
		return CLOCK_MONOTONIC_RAW;
	if (strcmp(clock, "boot") == 0)
		return CLOCK_BOOTTIME;
	if (strcmp(clock, "tai") == 0)
		return CLOCK_TAI;
	return -1;
}

/**
 * clock_anchor_parse_trace() - the timestamp of a marker in an instance's trace text.
 * @text: whole lines of `trace` or `trace_pipe`
 *        ("  task-1  [001] .....  1234.567890: tracing_mark_write: STAMP")
 * @stamp: the marker's whole text
 * @ret_us: its timestamp in microseconds
 *
 * Return: 0, or -ENOENT if no line's marker is @stamp with a timestamp.
 */
int clock_anchor_parse_trace(const char *text, const char *stamp, uint64_t *ret_us)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *end = strchr(line, '\n') ?: line + strlen(line);
		const char *mark = strstr(line, ": tracing_mark_write: ");
		const char *p, *dot;
		unsigned long long sec, usec;

		/* The whole marker: "stamp 1" must not be found in "stamp 10". */
		if (!mark || mark > end)
			continue;
		p = mark + strlen(": tracing_mark_write: ");
		if ((size_t)(end - p) != strlen(stamp) || strncmp(p, stamp, strlen(stamp)) != 0)
			continue;
		/* Back from ": tracing_mark_write" over the "SECONDS.MICROS" token. */
		for (p = mark; p > line && p[-1] != ' '; p--)
			;
		dot = memchr(p, '.', (size_t)(mark - p));
		if (!dot || sscanf(p, "%llu.%6llu", &sec, &usec) != 2 || mark - dot - 1 != 6)
			continue;
		*ret_us = (uint64_t)sec * 1000000u + usec;
		return 0;
	}
	return -ENOENT;
}

static int calibration_instance(struct clock_anchor *a, const char *clock)
{
	int r;

	/*
	 * tracefs is shared: another process may have removed the instance
	 * (rmdir works on it, nothing holds its files open between readings).
	 * The object is dropped and the instance made again, so no later file
	 * goes without its anchor.
	 */
	if (a->instance && !instance_exists(a->instance)) {
		log_notice("The clock-anchor instance '%s' was removed by another process; "
			   "making it again", instance_name(a->instance));
		a->instance = instance_free(a->instance);
	}
	if (!a->instance) {
		r = instance_new(a->tag, CLOCK_ANCHOR_INSTANCE_ID, &a->instance);
		if (r == -EEXIST)
			return r; /* a crash's leftover: removed at the next start */
		if (r < 0)
			return r;
		r = lock_instance(a);
		if (r == -EBUSY) {
			/* Made by us, locked by another daemon in between: its now, left alone. */
			a->instance = instance_abandon(a->instance);
			return r;
		}
		if (r >= 0)
			r = instance_set_buffer_size(a->instance, CLOCK_ANCHOR_BUFFER_KB);
		if (r >= 0)
			r = instance_set_tracing(a->instance, true);
		if (r < 0) {
			a->instance = instance_free(a->instance);
			return r;
		}
		a->clock[0] = '\0';
	}
	if (clock && strcmp(a->clock, clock) != 0) {
		r = instance_set_clock(a->instance, clock);
		if (r < 0)
			return r;
		snprintf(a->clock, sizeof(a->clock), "%s", clock);
	}
	return 0;
}

/*
 * The timestamp of marker @stamp, read from the ring's trace_pipe (CPU @cpu's,
 * or with -1 all CPUs'). Reading consumes: the ring never holds more than the
 * markers not read yet, where the `trace` file is walked from its start
 * through every CPU's ring at each read. Lines may be split between reads.
 */
static int read_stamp(struct clock_anchor *a, int cpu, const char *stamp, uint64_t *ret_us)
{
	_cleanup_free_ char *buf = malloc(CLOCK_ANCHOR_TEXT_MAX + 1);
	_cleanup_close_ int fd = -EBADF;
	size_t held = 0;
	int r;

	if (!buf)
		return -ENOMEM;
	r = instance_open_pipe(a->instance, cpu, &fd);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t n = read(fd, buf + held, CLOCK_ANCHOR_TEXT_MAX - held);
		char *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return -ENOENT; /* all read, and it was not there */
		if (n < 0)
			return negative_errno();
		if (n == 0)
			return -ENOENT;
		held += (size_t)n;
		end = memrchr(buf, '\n', held);
		if (!end) {
			/* No line ends in a full buffer: not a line of ours, dropped. */
			held = held == CLOCK_ANCHOR_TEXT_MAX ? 0 : held;
			continue;
		}
		*end = '\0';
		if (clock_anchor_parse_trace(buf, stamp, ret_us) == 0)
			return 0;
		held -= (size_t)(end + 1 - buf);
		memmove(buf, end + 1, held);
	}
}

/*
 * The timestamp of marker @stamp: from the CPU it went to when the thread
 * stayed on @cpu, else, or if it is not there, from all of them.
 */
static int marker_timestamp(struct clock_anchor *a, int cpu, const char *stamp, uint64_t *ret_us)
{
	int r = cpu >= 0 ? read_stamp(a, cpu, stamp, ret_us) : -ENOENT;

	return r == -ENOENT ? read_stamp(a, -1, stamp, ret_us) : r;
}

/*
 * A marker between two wall-clock readings: wall minus trace time, in µs.
 * Each marker has a number of its own, so the ring is never cleared
 * between readings: a clear waits for an RCU grace period, 15 ms each.
 */
static int measure_by_marker(struct clock_anchor *a, const char *clock, int64_t *ret)
{
	uint64_t best_window = UINT64_MAX;
	int r;

	r = calibration_instance(a, clock);
	if (r < 0)
		return r;
	for (int k = 0; k < CLOCK_ANCHOR_TRIES && best_window > CLOCK_ANCHOR_WINDOW_GOOD_NS; k++) {
		char stamp[CLOCK_ANCHOR_STAMP_MAX];
		uint64_t before, after, ts_us;
		int cpu = sched_getcpu();

		snprintf(stamp, sizeof(stamp), CLOCK_ANCHOR_STAMP " %" PRIu64, ++a->stamps);
		before = now_ns(CLOCK_REALTIME);
		r = instance_write_marker(a->instance, stamp);
		after = now_ns(CLOCK_REALTIME);
		if (r < 0)
			return r;
		if (sched_getcpu() != cpu)
			cpu = -1;
		r = marker_timestamp(a, cpu, stamp, &ts_us);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		if (after - before < best_window) {
			best_window = after - before;
			*ret = (int64_t)((before + (after - before) / 2) / 1000 - ts_us);
		}
	}
	return best_window == UINT64_MAX ? -ENOENT : 0;
}

/**
 * clock_anchor_offset_us() - wall clock minus trace clock @clock, now.
 * @a: the anchor
 * @clock: the trace clock a file's timestamps are in
 * @ret: microseconds to add to a timestamp for its wall-clock time
 *
 * Return: 0; -EOPNOTSUPP for a counter clock (no time to map); or -errno.
 */
int clock_anchor_offset_us(struct clock_anchor *a, const char *clock, int64_t *ret)
{
	clockid_t id = posix_clock(clock);
	if (id >= 0) {
		uint64_t before = now_ns(CLOCK_REALTIME), t = now_ns(id);
		uint64_t after = now_ns(CLOCK_REALTIME);

		*ret = (int64_t)((before + (after - before) / 2) / 1000 - t / 1000);
		return 0;
	}
	if (strcmp(clock, "local") != 0 && strcmp(clock, "global") != 0 &&
	    strcmp(clock, "perf") != 0)
		return -EOPNOTSUPP;
	return measure_by_marker(a, clock, ret);
}

/**
 * clock_anchor_date() - the DATE option's text for a file on @clock, now.
 * @a: the anchor
 * @clock: the file's trace clock
 * @buf: receives "0x..." (trace-cmd reads it with strtoll(..., 0)), or ""
 *
 * Return: 0, -EOPNOTSUPP for a counter clock, or -errno; @buf is "" unless 0.
 */
int clock_anchor_date(struct clock_anchor *a, const char *clock,
		      char buf[static CLOCK_ANCHOR_DATE_MAX])
{
	int64_t offset;
	int r;

	buf[0] = '\0';
	r = clock_anchor_offset_us(a, clock, &offset);
	if (r < 0)
		return r;
	snprintf(buf, CLOCK_ANCHOR_DATE_MAX, "%s0x%" PRIx64, offset < 0 ? "-" : "",
		 offset < 0 ? -(uint64_t)offset : (uint64_t)offset);
	return 0;
}

/* Is @text a DATE text as clock_anchor_date() writes it? (Recipes come from disk.) */
bool clock_anchor_date_valid(const char *text)
{
	const char *p = text + (text[0] == '-');
	size_t n = strlen(p);

	if (n < 3 || n > 18 || strncmp(p, "0x", 2) != 0)
		return false;
	return strspn(p + 2, "0123456789abcdef") == n - 2;
}

/* This boot's id (/proc/sys/kernel/random/boot_id): a DATE holds only within one boot. */
int boot_id(char buf[static 40])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int r = 0;

	if (!f)
		return negative_errno();
	if (!fgets(buf, 40, f))
		r = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return r < 0 ? r : buf[0] ? 0 : -EIO;
}
