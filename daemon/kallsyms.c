// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's symbols for the files' kallsyms section. /proc/kallsyms is
 * read through one fd opened at start-up while the daemon still held
 * CAP_SYSLOG (the kernel decides at open() whether addresses are shown).
 * It is read from several assembler threads, hence the lock around its
 * file position. The kernel takes ~80 ms to generate it, most of a
 * snapshot's latency, so the last copy is kept and reused while
 * /proc/modules is unchanged and the copy is younger than
 * KALLSYMS_CACHE_USEC (symbols of BPF programs loaded since may be missing
 * from a file for that long).
 *
 * One object, owned by the manager (or by offline recovery); nothing is
 * process-wide.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/kallsyms.h"
#include "ftraced/macro.h"

struct kallsyms {
	int fd;                /* /proc/kallsyms, or -EBADF: no symbols */
	pthread_mutex_t lock;  /* the fd's position and the copy below */
	char *text;            /* the last read, and /proc/modules then */
	size_t n_text;
	char *modules;
	size_t n_modules;
	uint64_t read_usec;
};

/**
 * kallsyms_open() - open /proc/kallsyms now, with the privileges held now.
 * @ret: the object; its fd is -EBADF when /proc/kallsyms cannot be opened
 *
 * Return: 0, or -errno of the open (the object is still returned: files
 * then carry no symbols), or -ENOMEM (no object).
 */
int kallsyms_open(struct kallsyms **ret)
{
	struct kallsyms *k = calloc(1, sizeof(*k));
	int r = 0;

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	k->fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (k->fd < 0)
		r = negative_errno();
	*ret = k;
	return r;
}

/**
 * kallsyms_free() - close the fd and drop the copy.
 * @k: kallsyms or NULL
 *
 * Return: NULL.
 */
struct kallsyms *kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return NULL;
	safe_close(k->fd);
	free(k->text);
	free(k->modules);
	pthread_mutex_destroy(&k->lock);
	free(k);
	return NULL;
}

static long read_sysctl(const char *path, long fallback)
{
	char buf[32] = "";
	FILE *f = fopen(path, "re");
	long v = fallback;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

/**
 * kallsyms_shown_to_users() - would /proc/kallsyms show addresses to an unprivileged user?
 *
 * The kernel's rule (kallsyms_show_value()): with kptr_restrict 0, to
 * anyone if perf_event_paranoid is 1 or less, else only with
 * CAP_SYSLOG; with kptr_restrict 1 only with CAP_SYSLOG; with 2 never.
 * A group member is taken to have no capabilities. Read each time: the
 * sysctls may change while the daemon runs.
 *
 * Return: true if such a user sees real addresses.
 */
bool kallsyms_shown_to_users(void)
{
	return read_sysctl("/proc/sys/kernel/kptr_restrict", 2) == 0 &&
	       read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2) <= 1;
}

/**
 * kallsyms_has_addresses() - does the fd show real addresses?
 * @k: kallsyms
 *
 * Without CAP_SYSLOG at open time (a unit whose bounding set lacks it, or
 * ProtectKernelLogs=yes, which removes it) every address reads as zero.
 *
 * Return: true if any of the first symbols (4 KiB of them) has a non-zero address.
 */
bool kallsyms_has_addresses(const struct kallsyms *k)
{
	char head[4096];
	ssize_t n;

	if (k->fd < 0)
		return false;
	n = pread(k->fd, head, sizeof(head) - 1, 0);
	if (n <= 0)
		return false;
	head[n] = '\0';
	/* Per-CPU symbols come first on some kernels (6.1), legitimately at 0. */
	for (char *line = head; *line;) {
		char *end = strchr(line, '\n');

		for (char *p = line; *p && *p != ' ' && *p != '\n'; p++)
			if (*p != '0')
				return true;
		if (!end)
			break;
		line = end + 1;
	}
	return false;
}

/* Reads a whole file through @fd from its start; *ret is NUL-terminated. */
static int read_whole_fd(int fd, char **ret, size_t *ret_size)
{
	size_t n = 0, cap = 0;
	char *buf = NULL;
	int r = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		r = negative_errno();
	while (r >= 0) {
		ssize_t k;

		if (n + 65536 > cap) {
			char *p;

			if (cap >= METADATA_FILE_MAX) {
				r = -EFBIG;
				break;
			}
			cap = MAX(cap * 2, (size_t)1 << 16);
			p = realloc(buf, cap);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		k = read(fd, buf + n, cap - n - 1);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = negative_errno();
		} else if (k == 0) {
			break;
		} else {
			n += (size_t)k;
		}
	}
	if (r < 0) {
		free(buf);
		return r;
	}
	if (buf)
		buf[n] = '\0';
	*ret = buf;
	*ret_size = n;
	return 0;
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int read_modules(char **ret, size_t *ret_size)
{
	int fd = open("/proc/modules", O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return negative_errno();
	r = read_whole_fd(fd, ret, ret_size);
	close(fd);
	return r;
}

/**
 * kallsyms_read() - the symbols, as /proc/kallsyms shows them to the daemon.
 * @k: kallsyms, or NULL (no symbols)
 * @ret: a copy of the text, NUL-terminated, for the caller to free; NULL when
 *       there is none
 * @ret_size: its length
 *
 * Thread-safe: assembler threads read concurrently.
 *
 * Return: 0 (also without symbols) or -errno.
 */
int kallsyms_read(struct kallsyms *k, char **ret, size_t *ret_size)
{
	char *modules = NULL, *text = NULL;
	size_t n_modules = 0, n_text = 0;
	uint64_t now = monotonic_usec();
	int r;

	*ret = NULL;
	*ret_size = 0;
	if (!k || k->fd < 0)
		return 0;
	pthread_mutex_lock(&k->lock);
	r = read_modules(&modules, &n_modules);
	if (r == -ENOENT) {
		modules = strdup(""); /* a kernel without modules: they never change */
	} else if (r < 0) {
		free(modules);
		modules = NULL; /* no way to tell: never reuse */
	}
	if (k->text && modules && k->modules &&
	    now - k->read_usec < KALLSYMS_CACHE_USEC &&
	    n_modules == k->n_modules &&
	    memcmp(modules, k->modules, n_modules) == 0) {
		text = malloc(k->n_text + 1);
		r = text ? 0 : -ENOMEM;
		if (text) {
			memcpy(text, k->text, k->n_text + 1);
			n_text = k->n_text;
		}
		free(modules);
		pthread_mutex_unlock(&k->lock);
		*ret = text;
		*ret_size = n_text;
		return r;
	}
	r = read_whole_fd(k->fd, &text, &n_text);
	if (r >= 0 && text) {
		char *copy = malloc(n_text + 1);

		free(k->text);
		free(k->modules);
		k->text = copy;
		k->n_text = copy ? n_text : 0;
		if (copy)
			memcpy(copy, text, n_text + 1);
		k->modules = TAKE_PTR(modules);
		k->n_modules = n_modules;
		k->read_usec = now;
	}
	free(modules);
	pthread_mutex_unlock(&k->lock);
	if (r < 0)
		return r;
	*ret = text;
	*ret_size = n_text;
	return 0;
}

