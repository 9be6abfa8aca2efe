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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/kallsyms.h"
#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/time-util.h"
#include "lib/v7-format.h"
#include "lib/v7-writer.h"

struct kallsyms {
	int fd;                /* /proc/kallsyms, or -EBADF: no symbols */
	pthread_mutex_t lock;  /* the fd's position and the copy below */
	struct kallsyms_section *sealed; /* the last read as a zstd KALLSYMS section body */
	size_t n_text;         /* its text's size; and /proc/modules then: */
	char *modules;
	size_t n_modules;
	_Atomic uint64_t read_usec; /* when the copy was read (the main thread peeks unlocked) */
	pthread_t prefetch;    /* a refresh ahead of the files that need it */
	uint64_t prefetch_max_age; /* what it refreshes: a copy older than this */
	bool prefetching;      /* prefetch is to be joined (main thread only) */
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
	if (k->prefetching)
		pthread_join(k->prefetch, NULL);
	safe_close(k->fd);
	kallsyms_section_unref(k->sealed);
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

/**
 * kallsyms_section_unref() - drop a reference to a sealed section.
 * @sec: section or NULL
 *
 * Thread-safe. Return: NULL.
 */
struct kallsyms_section *kallsyms_section_unref(struct kallsyms_section *sec)
{
	if (sec && atomic_fetch_sub_explicit(&sec->refs, 1, memory_order_acq_rel) == 1) {
		free(sec->data);
		free(sec);
	}
	return NULL;
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

static int read_modules(char **ret, size_t *ret_size)
{
	int fd = open("/proc/modules", O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return negative_errno();
	r = read_whole_fd(fd, ret, ret_size);
	close(fd);
	return r;
}

/*
 * Makes the cached section current: reused while /proc/modules is unchanged
 * and the copy is younger than @max_age_usec; otherwise /proc/kallsyms is
 * read again, compressed as it is read (the text is never held whole).
 * Called with the lock held.
 */
static int refresh(struct kallsyms *k, uint64_t max_age_usec)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	_cleanup_free_ uint8_t *frame = NULL;
	char *modules = NULL;
	size_t n_modules = 0, n_frame, n_text;
	uint64_t now = monotonic_usec();
	struct kallsyms_section *sec;
	uint8_t *sealed = NULL;
	size_t n_sealed = 0;
	int r;

	r = read_modules(&modules, &n_modules);
	if (r == -ENOENT) {
		modules = strdup(""); /* a kernel without modules: they never change */
	} else if (r < 0) {
		free(modules);
		modules = NULL; /* no way to tell: never reuse */
	}
	if (k->sealed && modules && k->modules && now - k->read_usec < max_age_usec &&
	    n_modules == k->n_modules && memcmp(modules, k->modules, n_modules) == 0) {
		free(modules);
		return 0;
	}
	r = compressor_new(&c);
	if (r >= 0)
		r = compress_fd(c, KALLSYMS_ZSTD_LEVEL, KALLSYMS_ZSTD_WINDOW_LOG, k->fd,
				METADATA_FILE_MAX, &frame, &n_frame, &n_text);
	if (r >= 0)
		r = v7_seal_kallsyms(c, frame, n_frame, n_text, &sealed, &n_sealed);
	sec = r >= 0 ? malloc(sizeof(*sec)) : NULL;
	if (r >= 0 && !sec)
		r = -ENOMEM;
	if (r < 0) {
		free(sealed);
		free(modules);
		return r;
	}
	*sec = (struct kallsyms_section){ .refs = 1, .size = n_sealed, .data = sealed };
	kallsyms_section_unref(k->sealed);
	free(k->modules);
	k->sealed = sec;
	k->n_text = n_text;
	k->modules = modules;
	k->n_modules = n_modules;
	k->read_usec = now;
	return 0;
}

/**
 * kallsyms_read_sealed() - the symbols as a zstd file's KALLSYMS section body.
 * @k: kallsyms, or NULL (no symbols)
 * @ret: a reference to the section for v7_file.kallsyms_sealed, for the
 *       caller to drop with kallsyms_section_unref(); NULL when there are no symbols
 *
 * Thread-safe: assembler threads read concurrently. Every file shares the
 * one compressed section (about a sixth of the text): no copy and no
 * compression per file.
 *
 * Return: 0 (also without symbols) or -errno.
 */
int kallsyms_read_sealed(struct kallsyms *k, struct kallsyms_section **ret)
{
	int r;

	*ret = NULL;
	if (!k || k->fd < 0)
		return 0;
	pthread_mutex_lock(&k->lock);
	r = refresh(k, KALLSYMS_CACHE_USEC);
	if (r >= 0) {
		atomic_fetch_add_explicit(&k->sealed->refs, 1, memory_order_relaxed);
		*ret = k->sealed;
	}
	pthread_mutex_unlock(&k->lock);
	return r;
}

/**
 * kallsyms_read() - the symbols as text, for uncompressed files.
 * @k: kallsyms, or NULL (no symbols)
 * @ret: the text, NUL-terminated, for the caller to free; NULL when there is none
 * @ret_size: its length
 *
 * Thread-safe. Return: 0 (also without symbols) or -errno.
 */
int kallsyms_read(struct kallsyms *k, char **ret, size_t *ret_size)
{
	size_t n = 0;
	char *text;
	int r;

	*ret = NULL;
	*ret_size = 0;
	if (!k || k->fd < 0)
		return 0;
	pthread_mutex_lock(&k->lock);
	r = refresh(k, KALLSYMS_CACHE_USEC);
	/* The section body decompresses to the u32 size, then the text. */
	text = r >= 0 ? malloc(k->n_text + 5) : NULL;
	if (r >= 0 && !text)
		r = -ENOMEM;
	if (r >= 0)
		r = decompress_frame(k->sealed->data + V7_BLOCK_HDR_SIZE,
				     k->sealed->size - V7_BLOCK_HDR_SIZE,
				     text, k->n_text + 4, &n);
	pthread_mutex_unlock(&k->lock);
	if (r < 0 || n != k->n_text + 4) {
		free(text);
		return r < 0 ? r : -EIO;
	}
	memmove(text, text + 4, n - 4);
	text[n - 4] = '\0';
	*ret = text;
	*ret_size = n - 4;
	return 0;
}

static void *prefetch_main(void *userdata)
{
	struct kallsyms *k = userdata;

	/* A failure is the file writer's to see: it refreshes again. */
	pthread_mutex_lock(&k->lock);
	(void)refresh(k, k->prefetch_max_age);
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/**
 * kallsyms_prefetch() - refresh the cached section on a thread if it is too old.
 * @k: kallsyms, or NULL
 * @max_age_usec: how old the copy may be
 *
 * The kernel takes ~80 ms to generate the symbols, and compressing them
 * as long again; called ahead of the files that need them, no file waits.
 * A session calls this when it starts (with the cache's lifetime, for the
 * file after its stop); a flight recorder as its history grows (with half
 * of it, so a snapshot at any time finds a copy ready) and when a snapshot
 * is asked for (the read then overlaps the drain). No timer of its own.
 * Main thread; a prefetch still running is left to finish.
 */
void kallsyms_prefetch(struct kallsyms *k, uint64_t max_age_usec)
{
	if (!k || k->fd < 0)
		return;
	if (monotonic_usec() - atomic_load(&k->read_usec) < max_age_usec)
		return;
	if (k->prefetching) {
		if (pthread_tryjoin_np(k->prefetch, NULL) != 0)
			return; /* still at it */
		k->prefetching = false;
	}
	k->prefetch_max_age = max_age_usec; /* read by the thread, which starts after this */
	k->prefetching = pthread_create(&k->prefetch, NULL, prefetch_main, k) == 0;
}
