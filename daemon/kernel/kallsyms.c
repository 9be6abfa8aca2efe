// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's symbols for the files' kallsyms section. /proc/kallsyms is
 * read through one fd opened at start-up while the daemon still held
 * CAP_SYSLOG (the kernel decides at open() whether addresses are shown).
 * It is read from several assembler threads, hence the lock around its
 * file position. The kernel takes ~50 ms of CPU to generate it, most of a
 * snapshot's latency, so the last copy is kept and reused while
 * /proc/modules is unchanged and the copy is younger than its validity:
 * KALLSYMS_CACHE_USEC after a change, doubled by every read that finds the
 * text unchanged, up to KALLSYMS_CACHE_GROWTH_MAX times (symbols of BPF
 * programs or trampolines made since may be missing from a file for that
 * long). An older copy is checked against the text and kept if it still
 * matches, which spares compressing it again. A file without events refers
 * to no address: it takes the copy at any age.
 *
 * The copy is a compressed section body in an unlinked file of the state
 * directory (kallsyms_store_in()): written once as the text is read,
 * copied into each file by the kernel, and otherwise the page cache's to
 * keep or drop; it costs the daemon no resident memory between files.
 *
 * Not every symbol goes in: on x86 since 6.2 half of them are __pfx_X, the
 * padding before each function X (and __cfi_X with kCFI). No address an
 * event holds names them: a function pointer, a traced function's ip and
 * a return address all point into a function, never into the padding
 * before it (see symbol_unneeded()). Leaving them out takes the section
 * from 5.4 MB of text to 2.9 and a third off its compressed size.
 *
 * One object, owned by the manager (or by offline recovery); nothing is
 * process-wide.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/time-util.h"
#include "lib/v7-format.h"
#include "lib/v7-writer.h"

/*
 * Is this /proc/kallsyms line ("ADDRESS TYPE NAME[\t[MODULE]]") a symbol
 * no address in a file can name? __pfx_X is the padding the compiler puts
 * before function X (-fpatchable-function-entry, CONFIG_FUNCTION_PADDING_*),
 * __cfi_X its kCFI type hash: callers, function pointers and return
 * addresses point at X itself or inside it, and ftrace's ip is X's own
 * call site. (With call-depth tracking the padding runs a thunk: an
 * interrupt there would show as the previous function plus an offset.)
 */
static bool symbol_unneeded(const char *line, size_t n)
{
	const char *name = memchr(line, ' ', n);

	/* Past the address and the one-letter type. */
	if (!name || (size_t)(name - line) + 3 > n || name[2] != ' ')
		return false;
	name += 3;
	n -= (size_t)(name - line);
	return (n >= 6 && memcmp(name, "__pfx_", 6) == 0) ||
	       (n >= 6 && memcmp(name, "__cfi_", 6) == 0);
}

struct kallsyms {
	int fd;                /* /proc/kallsyms, or -EBADF: no symbols */
	int store_dir_fd;      /* where sealed copies go; -EBADF: memfds */
	pthread_mutex_t lock;  /* the fd's position and the copy below */
	struct kallsyms_section *sealed; /* the last read as a zstd KALLSYMS section body */
	size_t n_text;         /* its text's size; and /proc/modules then: */
	char *modules;
	size_t n_modules;
	_Atomic uint64_t read_usec; /* when the copy was last read or found to match (the main
				     * thread peeks unlocked) */
	uint64_t lifetime;     /* how long a copy is used after a change (KALLSYMS_CACHE_USEC) */
	_Atomic uint64_t valid_usec; /* how long this copy is used: lifetime, doubled by each read
				      * that found it unchanged (up to KALLSYMS_CACHE_GROWTH_MAX
				      * times); the main thread peeks unlocked */
	unsigned growth_max;   /* KALLSYMS_CACHE_GROWTH_MAX */
	struct v7_region head; /* the kernel's own symbols' frame in sealed's body (size 0: none) */
	uint64_t head_hash;    /* of their text, of this many bytes: */
	size_t n_head;
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
	k->store_dir_fd = -EBADF;
	k->lifetime = KALLSYMS_CACHE_USEC;
	k->valid_usec = KALLSYMS_CACHE_USEC;
	k->growth_max = KALLSYMS_CACHE_GROWTH_MAX;
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
	safe_close(k->store_dir_fd);
	kallsyms_section_unref(k->sealed);
	free(k->modules);
	pthread_mutex_destroy(&k->lock);
	free(k);
	return NULL;
}

/**
 * kallsyms_store_in() - keep the sealed copies in unlinked files of a directory.
 * @k: kallsyms
 * @dir_fd: the directory (the state directory), duplicated
 *
 * Without one, where its file system has no O_TMPFILE, or while it has less
 * than KALLSYMS_STORE_FREE_MIN free, copies go in memfds.
 * Main thread, before any file is written.
 *
 * Return: 0 or -errno of the dup.
 */
int kallsyms_store_in(struct kallsyms *k, int dir_fd)
{
	int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return negative_errno();
	safe_close(k->store_dir_fd);
	k->store_dir_fd = fd;
	return 0;
}

/*
 * A new file for one sealed copy: unlinked in the state directory while it
 * has room to spare (KALLSYMS_STORE_FREE_MIN), else in memory.
 */
static int store_open(const struct kallsyms *k, bool in_memory)
{
	struct statvfs st;
	int fd = -EBADF;

	if (!in_memory && k->store_dir_fd >= 0 && fstatvfs(k->store_dir_fd, &st) == 0 &&
	    (uint64_t)st.f_bavail * st.f_frsize >= KALLSYMS_STORE_FREE_MIN)
		fd = openat(k->store_dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = memfd_create("ftraced-kallsyms", MFD_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

/**
 * kallsyms_set_lifetime() - how long a copy is used after a change (tests shorten it).
 * @k: kallsyms
 * @usec: the lifetime; 0 keeps KALLSYMS_CACHE_USEC
 * @growth_max: how many times that unchanged reads make it at most (1: fixed);
 *              0 keeps KALLSYMS_CACHE_GROWTH_MAX
 */
void kallsyms_set_lifetime(struct kallsyms *k, uint64_t usec, unsigned growth_max)
{
	if (usec > 0) {
		k->lifetime = usec;
		k->valid_usec = usec;
	}
	if (growth_max > 0)
		k->growth_max = growth_max;
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
		safe_close(sec->body.fd);
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
 * The kernel's own symbols come first in /proc/kallsyms, those of modules
 * (and BPF programs, ftrace trampolines: "NAME\t[MODULE]") after. The
 * first part does not change while the kernel runs: the kept bytes before
 * the first module's line, and their hash, tell that it is the same.
 */
static int scan_head(int fd, size_t *ret_n, uint64_t *ret_hash)
{
	_cleanup_free_ struct line_reader *lr = malloc(sizeof(*lr));
	uint64_t hash = UINT64_C(14695981039346656037), line_hash = hash;
	size_t pos = 0, line_start = 0;
	char buf[16 * 1024], prev = 0;

	if (!lr)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return negative_errno();
	line_reader_init(lr, fd, symbol_unneeded);
	for (;;) {
		ssize_t n = line_reader_read(lr, buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		if (n == 0 || pos + (size_t)n > METADATA_FILE_MAX)
			break;
		for (ssize_t i = 0; i < n; i++, pos++) {
			if (prev == '\t' && buf[i] == '[') {
				*ret_n = line_start;
				*ret_hash = line_hash;
				return 0;
			}
			hash = (hash ^ (uint8_t)buf[i]) * UINT64_C(1099511628211);
			if (buf[i] == '\n') {
				line_start = pos + 1;
				line_hash = hash;
			}
			prev = buf[i];
		}
	}
	*ret_n = line_start; /* no module: the whole text but a last line without its newline */
	*ret_hash = line_hash;
	return 0;
}

/*
 * The kernel's own symbols' frame outlives the daemon in the state
 * directory, for this boot only: a restart (systemd's, an upgrade's) then
 * does not pay level 19's seconds again. A header of KALLSYMS_HEAD_HDR
 * bytes says the boot, the text's hash and size and the frame's size; the
 * frame follows. It is taken only if all of them match and it
 * decompresses to text of that hash.
 */
#define KALLSYMS_HEAD_FILE "kallsyms-head"
#define KALLSYMS_HEAD_HDR  256u

static void head_header(char hdr[static KALLSYMS_HEAD_HDR], const char *boot, uint64_t hash,
			size_t n_text, size_t n_frame)
{
	memset(hdr, 0, KALLSYMS_HEAD_HDR);
	snprintf(hdr, KALLSYMS_HEAD_HDR, "ftraced kallsyms head 1\nboot=%s\nhash=%016" PRIx64
		 "\ntext=%zu\nframe=%zu\n", boot, hash, n_text, n_frame);
}

/* The saved frame for this boot and text, as an fd and a region of it; -ENOENT: none. */
static int head_load(const struct kallsyms *k, uint64_t hash, size_t n_text,
		     struct v7_region *ret)
{
	char boot[40], hdr[KALLSYMS_HEAD_HDR], want[KALLSYMS_HEAD_HDR];
	_cleanup_free_ uint8_t *frame = NULL, *text = NULL;
	_cleanup_close_ int fd = -EBADF;
	uint64_t h = UINT64_C(14695981039346656037);
	size_t n_frame, got;
	struct stat st;
	int r;

	if (k->store_dir_fd < 0 || boot_id(boot) < 0)
		return -ENOENT;
	fd = openat(k->store_dir_fd, KALLSYMS_HEAD_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    O_NONBLOCK);
	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= KALLSYMS_HEAD_HDR ||
	    (uint64_t)st.st_size > KALLSYMS_HEAD_HDR + (uint64_t)METADATA_FILE_MAX)
		return -EBADMSG;
	n_frame = (size_t)st.st_size - KALLSYMS_HEAD_HDR;
	head_header(want, boot, hash, n_text, n_frame);
	r = loop_pread_exact(fd, hdr, sizeof(hdr), 0);
	if (r < 0)
		return r;
	if (memcmp(hdr, want, sizeof(hdr)) != 0)
		return -ESTALE; /* another boot, or the text differs */
	frame = malloc(n_frame);
	text = malloc(n_text + 1);
	if (!frame || !text)
		return -ENOMEM;
	r = loop_pread_exact(fd, frame, n_frame, KALLSYMS_HEAD_HDR);
	if (r >= 0)
		r = decompress_frame(frame, n_frame, text, n_text + 1, &got);
	if (r < 0 || got != n_text)
		return -EBADMSG;
	for (size_t i = 0; i < got; i++)
		h = (h ^ text[i]) * UINT64_C(1099511628211);
	if (h != hash)
		return -EBADMSG;
	*ret = (struct v7_region){ .fd = TAKE_FD(fd), .offset = KALLSYMS_HEAD_HDR,
				   .size = n_frame };
	return 0;
}

/* The frame just made, saved for the next start in this boot; a failure costs only that. */
static void head_save(const struct kallsyms *k, const struct v7_region *head, uint64_t hash,
		      size_t n_text)
{
	_cleanup_free_ char *buf = NULL;
	char boot[40];
	int r;

	if (k->store_dir_fd < 0 || boot_id(boot) < 0)
		return;
	buf = malloc(KALLSYMS_HEAD_HDR + head->size);
	if (!buf)
		return;
	head_header(buf, boot, hash, n_text, head->size);
	r = loop_pread_exact(head->fd, buf + KALLSYMS_HEAD_HDR, head->size, head->offset);
	if (r >= 0)
		r = replace_file_at(k->store_dir_fd, KALLSYMS_HEAD_FILE, buf,
				    KALLSYMS_HEAD_HDR + head->size, 0600);
	if (r < 0)
		log_debug_errno(r, "Cannot keep the kernel's own symbols for a restart, "
				"ignoring: %m");
}

/*
 * A new sealed copy in a store file (memory when the disk is full). The
 * kernel's own symbols are compressed once, at KALLSYMS_HEAD_ZSTD_LEVEL,
 * and their frame is copied into every later copy while they read the
 * same; only the modules' part, small, is compressed again.
 */
static int seal(struct kallsyms *k, int *ret_fd, struct v7_region *ret_body, size_t *ret_n_text)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	struct v7_seal_head head = { .level = KALLSYMS_HEAD_ZSTD_LEVEL };
	struct v7_region before = { .fd = -EBADF };
	_cleanup_close_ int saved_fd = -EBADF; /* the state directory's copy, while it is used */
	uint64_t hash;
	int fd, r;

	r = scan_head(k->fd, &head.n_text, &hash);
	if (r < 0)
		return r;
	if (k->sealed && k->head.size > 0 && hash == k->head_hash && head.n_text == k->n_head)
		before = k->head;
	else if (head_load(k, hash, head.n_text, &before) >= 0) {
		saved_fd = before.fd;
		log_debug("The kernel's own symbols are those kept for this boot (%zu bytes)",
			  head.n_text);
	} else {
		log_debug("The kernel's own symbols are compressed (%zu bytes)", head.n_text);
	}
	r = compressor_new(&c);
	if (r < 0)
		return r;
	for (bool in_memory = false;; in_memory = true) {
		fd = store_open(k, in_memory);
		if (fd < 0)
			return fd;
		head.reuse = before;
		r = v7_seal_kallsyms(c, KALLSYMS_ZSTD_LEVEL, KALLSYMS_ZSTD_WINDOW_LOG, k->fd,
				     symbol_unneeded, METADATA_FILE_MAX, &head, fd, ret_body,
				     ret_n_text);
		/* The disk filled up meanwhile: memory, rather than files without symbols. */
		if (r >= 0 || in_memory || (r != -ENOSPC && r != -EDQUOT))
			break;
		fd = safe_close(fd);
	}
	if (r < 0) {
		safe_close(fd);
		return r;
	}
	if (before.size == 0)
		head_save(k, &head.reuse, hash, head.n_text);
	k->head = head.reuse;
	k->head_hash = hash;
	k->n_head = head.n_text;
	*ret_fd = fd;
	return 0;
}

/*
 * Makes the cached section current: reused while /proc/modules is unchanged
 * and the copy is younger than @max_age_usec; otherwise /proc/kallsyms is
 * read again, compressed as it is read (the text is never held whole).
 * Called with the lock held; @ahead: from a prefetch, not for a file.
 */
static int refresh(struct kallsyms *k, uint64_t max_age_usec, bool ahead)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *modules = NULL;
	size_t n_modules = 0, n_text;
	uint64_t now = monotonic_usec();
	struct kallsyms_section *sec;
	struct v7_region body;
	bool same_modules;
	int r;

	r = read_modules(&modules, &n_modules);
	if (r == -ENOENT) {
		modules = strdup(""); /* a kernel without modules: they never change */
	} else if (r < 0) {
		modules = mfree(modules); /* no way to tell: never reuse */
	}
	same_modules = k->sealed && modules && k->modules && n_modules == k->n_modules &&
		       memcmp(modules, k->modules, n_modules) == 0;
	if (same_modules && now - k->read_usec < max_age_usec)
		return 0;
	/* Tests look for these: whether a file waited for the read. */
	if (ahead)
		log_debug("Reading the kernel's symbols ahead of the files");
	else if (k->sealed)
		log_debug("Reading the kernel's symbols for a file (the copy was %" PRIu64 " ms old)",
			  (now - k->read_usec) / 1000);
	else
		log_debug("Reading the kernel's symbols for a file (no copy yet)");
	/*
	 * Mostly they have not changed (BPF programs come and go, modules
	 * rarely): the text is then only compared with the copy, which spares
	 * its compression, as long again as the kernel's read (~60 ms each).
	 * A change costs a second read.
	 */
	if (same_modules) {
		r = frames_equal_fd(k->sealed->body.fd, k->sealed->body.offset + V7_BLOCK_HDR_SIZE,
				    k->sealed->body.size - V7_BLOCK_HDR_SIZE, sizeof(uint32_t), k->fd,
				    symbol_unneeded);
		if (r > 0) {
			uint64_t valid = MIN(k->valid_usec * 2, k->lifetime * k->growth_max);

			/* Tests look for this line and its figure. */
			log_debug("The kernel's symbols are unchanged: the copy is kept (for %" PRIu64
				  " s)", valid / 1000000);
			k->valid_usec = valid;
			k->read_usec = now;
			return 0;
		}
		if (r < 0)
			log_debug_errno(r, "Cannot compare the kernel's symbols with the copy: %m");
	}
	r = seal(k, &fd, &body, &n_text);
	if (r < 0)
		return r;
	sec = malloc(sizeof(*sec));
	if (!sec)
		return -ENOMEM;
	body.fd = TAKE_FD(fd);
	*sec = (struct kallsyms_section){ .refs = 1, .body = body };
	kallsyms_section_unref(k->sealed);
	free(k->modules);
	k->sealed = sec;
	k->n_text = n_text;
	k->modules = TAKE_PTR(modules);
	k->n_modules = n_modules;
	k->valid_usec = k->lifetime;
	k->read_usec = now;
	log_debug("The kernel's symbols are read: %zu bytes, %" PRIu64 " compressed, in %" PRIu64
		  " ms", n_text, body.size, (monotonic_usec() - now) / 1000);
	return 0;
}

/**
 * kallsyms_read_sealed() - the symbols as a zstd file's KALLSYMS section body.
 * @k: kallsyms, or NULL (no symbols)
 * @any_age: a copy of any age will do, while /proc/modules is unchanged: for
 *           a file without events, which refers to no address
 * @ret: a reference to the section for v7_file.kallsyms_sealed, for the
 *       caller to drop with kallsyms_section_unref(); NULL when there are no symbols
 *
 * Thread-safe: assembler threads read concurrently. Every file shares the
 * one compressed section (about a sixth of the text): no copy and no
 * compression per file.
 *
 * Return: 0 (also without symbols) or -errno.
 */
int kallsyms_read_sealed(struct kallsyms *k, bool any_age, struct kallsyms_section **ret)
{
	int r;

	*ret = NULL;
	if (!k || k->fd < 0)
		return 0;
	pthread_mutex_lock(&k->lock);
	r = refresh(k, any_age ? UINT64_MAX : k->valid_usec, /* ahead= */ false);
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
 * @any_age: see kallsyms_read_sealed()
 * @ret: the text, NUL-terminated, for the caller to free; NULL when there is none
 * @ret_size: its length
 *
 * Thread-safe. Return: 0 (also without symbols) or -errno.
 */
int kallsyms_read(struct kallsyms *k, bool any_age, char **ret, size_t *ret_size)
{
	_cleanup_free_ uint8_t *body = NULL;
	const struct v7_region *sealed;
	size_t n = 0;
	char *text;
	int r;

	*ret = NULL;
	*ret_size = 0;
	if (!k || k->fd < 0)
		return 0;
	pthread_mutex_lock(&k->lock);
	r = refresh(k, any_age ? UINT64_MAX : k->valid_usec, /* ahead= */ false);
	sealed = r >= 0 ? &k->sealed->body : NULL;
	/* The section body decompresses to the u32 size, then the text. */
	body = r >= 0 ? malloc(sealed->size) : NULL;
	text = r >= 0 ? malloc(k->n_text + 5) : NULL;
	if (r >= 0 && (!text || !body))
		r = -ENOMEM;
	if (r >= 0)
		r = loop_pread_exact(sealed->fd, body, sealed->size, sealed->offset);
	if (r >= 0)
		r = decompress_frame(body + V7_BLOCK_HDR_SIZE, sealed->size - V7_BLOCK_HDR_SIZE,
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

/* Is a prefetch thread still at work? One that is done is joined. Main thread. */
static bool prefetch_running(struct kallsyms *k)
{
	if (k->prefetching && pthread_tryjoin_np(k->prefetch, NULL) == 0)
		k->prefetching = false;
	return k->prefetching;
}

/* The age past which @age counts a copy as due. */
static uint64_t max_age(const struct kallsyms *k, enum kallsyms_age age)
{
	uint64_t valid = atomic_load(&k->valid_usec);

	if (age == KALLSYMS_EXPIRED)
		return valid;
	return valid - MIN(KALLSYMS_REFRESH_LEAD_USEC, valid / 2);
}

/**
 * kallsyms_stale_at() - when the copy reaches an age.
 * @k: kallsyms, or NULL
 * @age: KALLSYMS_EXPIRED: a file would read the symbols again; EXPIRING: a
 *       prefetch would
 *
 * A prefetch begun for a copy that old stamps it anew in a moment: counted
 * as done now. Main thread (the copy's time is read unlocked).
 *
 * Return: CLOCK_MONOTONIC usec; 0 when there is no copy and none is being
 * read (the last read failed); UINT64_MAX without symbols.
 */
uint64_t kallsyms_stale_at(struct kallsyms *k, enum kallsyms_age age)
{
	uint64_t read_usec, now = monotonic_usec();

	if (!k || k->fd < 0)
		return UINT64_MAX;
	read_usec = atomic_load(&k->read_usec);
	if (prefetch_running(k) && (read_usec == 0 || now - read_usec >= k->prefetch_max_age))
		read_usec = now;
	return read_usec == 0 ? 0 : read_usec + max_age(k, age);
}

static void *prefetch_main(void *userdata)
{
	struct kallsyms *k = userdata;

	/* A failure is the file writer's to see: it refreshes again. */
	pthread_mutex_lock(&k->lock);
	(void)refresh(k, k->prefetch_max_age, /* ahead= */ true);
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

/**
 * kallsyms_prefetch() - refresh the cached section on a thread if it is old enough.
 * @k: kallsyms, or NULL
 * @age: refresh a copy this old (see kallsyms_stale_at())
 *
 * The kernel takes ~50 ms of CPU to generate the symbols (more, and as
 * long again to compress them, when they changed); called ahead of the
 * files that need them, no file waits. A session calls this when it starts
 * (EXPIRED, for the file after a short capture) and, while it has captured
 * anything, as its data grows and at the time this returns (EXPIRING, so
 * its stop, a snapshot or a segment at any time finds a copy ready:
 * session-symbols.c); a flight recorder also when a snapshot is asked for
 * (EXPIRED: the read then overlaps the drain).
 * Main thread; a prefetch still running is left to finish.
 *
 * Return: when (CLOCK_MONOTONIC, usec) the copy will be @age, for the
 * caller's next call; UINT64_MAX without symbols.
 */
uint64_t kallsyms_prefetch(struct kallsyms *k, enum kallsyms_age age)
{
	uint64_t max_age_usec, now = monotonic_usec(), read_usec;

	if (!k || k->fd < 0)
		return UINT64_MAX;
	max_age_usec = max_age(k, age);
	read_usec = atomic_load(&k->read_usec);
	if (read_usec != 0 && now - read_usec < max_age_usec)
		return read_usec + max_age_usec;
	/* Still at it: look again once it has surely set the copy's time. */
	if (prefetch_running(k))
		return now + KALLSYMS_PREFETCH_RETRY_USEC;
	k->prefetch_max_age = max_age_usec; /* read by the thread, which starts after this */
	k->prefetching = pthread_create(&k->prefetch, NULL, prefetch_main, k) == 0;
	/*
	 * The refresh stamps the copy with the time it takes the lock (soon
	 * after now), read or found unchanged: past max_age after that.
	 */
	return now + KALLSYMS_PREFETCH_RETRY_USEC + (k->prefetching ? max_age_usec : 0);
}
