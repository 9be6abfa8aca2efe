// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Holds: what a capture worker took from the kernel and has not stored
 * yet, in memory that outlives the daemon (see hold.h for why a shared
 * mapping of a tmpfs file, and where). This module makes, finds and
 * removes them; the worker fills a hold's data and header
 * (capture-stream.c, capture-store.c), recovery reads what a killed
 * daemon left (recovery-hold.c).
 *
 * The directory is the daemon's own: made 0700, owned by us, checked on
 * every open (/dev/shm is writable by anyone). Files in it are opened
 * with O_NOFOLLOW and every header field is checked before it is used.
 * Called from the main thread (a session's streams are made there) and
 * at start-up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/store/hold.h"
#include "daemon/store/spool.h"
#include "lib/io-util.h"

_Static_assert(sizeof(struct hold_header) <= HOLD_HDR_SIZE, "hold header past its page");

/* The directory at @fd is ours alone: a directory, owned by us, no access for others. */
static int check_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

static int open_dir(const char *path, int *ret_fd)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	int r;

	if (fd < 0)
		return negative_errno();
	r = check_dir(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/**
 * hold_dir_create() - make (or reuse) the holds' directory, and name it in the state directory.
 * @state_dir_fd: the state directory, locked
 * @tag: its instance tag
 * @ret_fd: the directory
 *
 * $RUNTIME_DIRECTORY (its first path) when systemd gives one, else
 * /dev/shm; the name is HOLD_DIR_PREFIX and the tag in either. The link
 * HOLD_LINK in the state directory is replaced to point there, so that
 * recovery (at the next start or by `ftraced --recover`) finds it
 * wherever this run kept it.
 *
 * Return: 0, -EPERM if the path exists and is not our own private
 * directory, or -errno.
 */
int hold_dir_create(int state_dir_fd, uint32_t tag, int *ret_fd)
{
	const char *runtime = secure_getenv("RUNTIME_DIRECTORY");
	char base[256], path[320], tmp[32];
	size_t n;
	int r;

	n = runtime && runtime[0] == '/' ? strcspn(runtime, ":") : 0;
	if (n == 0 || n >= sizeof(base))
		snprintf(base, sizeof(base), "%s", HOLD_SHM_DIR);
	else
		snprintf(base, sizeof(base), "%.*s", (int)n, runtime);
	snprintf(path, sizeof(path), "%s/" HOLD_DIR_PREFIX "%08" PRIx32, base, tag);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	r = open_dir(path, ret_fd);
	if (r < 0)
		return r;
	/* A new link, renamed over the old one: the state directory always names one. */
	snprintf(tmp, sizeof(tmp), "." HOLD_LINK ".%08" PRIx32, tag);
	(void)unlinkat(state_dir_fd, tmp, 0);
	if (symlinkat(path, state_dir_fd, tmp) < 0 ||
	    renameat(state_dir_fd, tmp, state_dir_fd, HOLD_LINK) < 0) {
		r = negative_errno();
		(void)unlinkat(state_dir_fd, tmp, 0);
		*ret_fd = safe_close(*ret_fd);
		return r;
	}
	return 0;
}

/**
 * hold_dir_open() - the holds' directory an earlier run of this state directory named.
 * @state_dir_fd: the state directory
 * @ret_fd: the directory
 *
 * Return: 0, -ENOENT if there is none (no run kept holds, or a reboot
 * emptied the memory they were in), -EPERM if it is not our own private
 * directory, or -errno.
 */
int hold_dir_open(int state_dir_fd, int *ret_fd)
{
	char path[320];
	ssize_t n;

	n = readlinkat(state_dir_fd, HOLD_LINK, path, sizeof(path) - 1);
	if (n < 0)
		return negative_errno();
	path[n] = '\0';
	if (path[0] != '/')
		return -EINVAL;
	return open_dir(path, ret_fd);
}

/**
 * hold_dir_remove() - at a clean exit: the holds' directory goes, if empty, and its link.
 * @state_dir_fd: the state directory
 *
 * Every stream was finished, so its hold was stored and removed; a
 * directory that still holds something is kept for the next start.
 */
void hold_dir_remove(int state_dir_fd)
{
	char path[320];
	ssize_t n;

	n = readlinkat(state_dir_fd, HOLD_LINK, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	if (path[0] == '/' && rmdir(path) == 0)
		(void)unlinkat(state_dir_fd, HOLD_LINK, 0);
}

/* Maps a hold file and checks its header. */
static int map_file(int fd, bool create, unsigned cpu, uint32_t subbuf_size, size_t capacity,
		    struct hold_header **ret_hdr)
{
	struct hold_header *h;
	struct stat st;

	if (!create) {
		if (fstat(fd, &st) < 0)
			return negative_errno();
		if (!S_ISREG(st.st_mode) || st.st_size < (off_t)HOLD_HDR_SIZE ||
		    (uint64_t)st.st_size > HOLD_HDR_SIZE + HOLD_CAPACITY_MAX)
			return -EBADMSG;
		capacity = (size_t)st.st_size - HOLD_HDR_SIZE;
	} else if (ftruncate(fd, (off_t)(HOLD_HDR_SIZE + capacity)) < 0 ||
		   /* Allocated now: a store into a full tmpfs's mapping would be a SIGBUS. */
		   fallocate(fd, 0, 0, (off_t)(HOLD_HDR_SIZE + capacity)) < 0) {
		return negative_errno();
	}
	h = mmap(NULL, HOLD_HDR_SIZE + capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return negative_errno();
	if (create) {
		h->magic = HOLD_MAGIC;
		h->version = HOLD_VERSION;
		h->cpu = cpu;
		h->subbuf_size = subbuf_size;
		h->capacity = capacity;
	} else if (h->magic != HOLD_MAGIC || h->version != HOLD_VERSION ||
		   h->capacity != capacity || h->subbuf_size == 0 ||
		   atomic_load(&h->n_pending) > capacity ||
		   atomic_load(&h->n_pending) % h->subbuf_size != 0) {
		munmap(h, HOLD_HDR_SIZE + capacity);
		return -EBADMSG;
	}
	*ret_hdr = h;
	return 0;
}

/**
 * hold_new() - a stream's hold, empty, for no spool yet.
 * @hold_dir_fd: the holds' directory (borrowed; must outlive the hold)
 * @cpu: the stream's CPU
 * @subbuf_size: its sub-buffer size
 * @capacity: the most it holds (its pending batch), at most HOLD_CAPACITY_MAX
 * @ret: the hold, mapped
 *
 * The pages are the kernel's (tmpfs) from their first touch: the batch
 * costs its page faults once, when it first fills.
 *
 * Return: 0 or -errno.
 */
int hold_new(int hold_dir_fd, unsigned cpu, uint32_t subbuf_size, size_t capacity,
	     struct hold **ret)
{
	struct hold *h;
	int r;

	if (capacity == 0 || capacity > HOLD_CAPACITY_MAX)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->dir_fd = hold_dir_fd;
	h->capacity = capacity;
	snprintf(h->name, sizeof(h->name), "%016" PRIx64 "-%u", spool_new_id(), cpu);
	h->fd = openat(hold_dir_fd, h->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		       0600);
	if (h->fd < 0) {
		r = negative_errno();
		free(h);
		return r;
	}
	r = map_file(h->fd, /* create= */ true, cpu, subbuf_size, capacity, &h->hdr);
	if (r < 0) {
		hold_free(h);
		return r;
	}
	h->data = (uint8_t *)h->hdr + HOLD_HDR_SIZE;
	*ret = h;
	return 0;
}

/**
 * hold_free() - unmap and remove a hold whose data is stored (or counted as lost).
 * @h: hold or NULL
 *
 * Return: NULL.
 */
struct hold *hold_free(struct hold *h)
{
	if (!h)
		return NULL;
	if (h->hdr)
		munmap(h->hdr, HOLD_HDR_SIZE + h->capacity);
	if (h->fd >= 0) {
		(void)unlinkat(h->dir_fd, h->name, 0);
		close(h->fd);
	}
	free(h);
	return NULL;
}

/* Opens and maps the hold file @name; its header is checked. */
static int open_hold(int hold_dir_fd, const char *name, struct hold_header **ret)
{
	/* Mapped writable as the header's atomics are; nothing here writes. */
	int fd = openat(hold_dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct hold_header *h;
	int r;

	if (fd < 0)
		return negative_errno();
	r = map_file(fd, /* create= */ false, 0, 0, 0, &h);
	close(fd);
	if (r < 0)
		return r;
	*ret = h;
	return 0;
}

/**
 * hold_find() - what a killed daemon held for a spool's CPU, if the spool lacks exactly that.
 * @hold_dir_fd: the holds' directory
 * @spool_id: the spool's trace id
 * @cpu: the CPU
 * @subbuf_size: the spool's sub-buffer size (a hold of another size is not its)
 * @stored: bytes of intact records the CPU's spool holds
 * @ret: a copy of the held sub-buffers (free() it)
 * @ret_n: their bytes, whole sub-buffers
 *
 * A hold counts only if the spool holds exactly the records it came
 * after: with more, its batch was stored before the daemon died; with
 * fewer, the spool lost records and the batch would not follow them.
 *
 * Return: 1 with a batch, 0 if there is none to add, or -errno.
 */
int hold_find(int hold_dir_fd, uint64_t spool_id, unsigned cpu, uint32_t subbuf_size,
	      uint64_t stored, uint8_t **ret, size_t *ret_n)
{
	char suffix[16];
	DIR *d;
	int dfd, found = 0;
	struct dirent *de;

	dfd = fcntl(hold_dir_fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return negative_errno();
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	rewinddir(d);
	snprintf(suffix, sizeof(suffix), "-%u", cpu);
	while (found == 0 && (de = readdir(d))) {
		size_t len = strlen(de->d_name), n_suffix = strlen(suffix);
		struct hold_header *h;
		uint64_t n;

		/* Named after their CPU (hold_new()): a 512-CPU spool opens 512 files, not 512². */
		if (de->d_name[0] == '.' || len <= n_suffix ||
		    strcmp(de->d_name + len - n_suffix, suffix) != 0 ||
		    open_hold(hold_dir_fd, de->d_name, &h) < 0)
			continue;
		n = atomic_load(&h->n_pending);
		if (atomic_load(&h->spool_id) == spool_id && h->cpu == cpu && n > 0 &&
		    h->subbuf_size == subbuf_size && atomic_load(&h->stored) == stored) {
			*ret = malloc(n);
			if (*ret) {
				memcpy(*ret, (uint8_t *)h + HOLD_HDR_SIZE, n);
				*ret_n = n;
				found = 1;
			} else {
				found = -ENOMEM;
			}
		}
		munmap(h, HOLD_HDR_SIZE + h->capacity);
	}
	closedir(d);
	return found;
}

/**
 * hold_dir_prune() - remove the holds of spools that are gone.
 * @hold_dir_fd: the holds' directory
 * @spool_fd: STATE_DIR/spool
 *
 * After recovery: a recovered spool's holds are in its file, and a spool
 * kept for the next start keeps its holds with it. Files that are not
 * holds go too; the directory is ours alone.
 */
void hold_dir_prune(int hold_dir_fd, int spool_fd)
{
	struct dirent *de;
	DIR *d;
	int dfd;

	dfd = fcntl(hold_dir_fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char name[SPOOL_NAME_SIZE];
		struct hold_header *h;
		bool keep = false;

		if (de->d_name[0] == '.')
			continue;
		if (open_hold(hold_dir_fd, de->d_name, &h) == 0) {
			spool_name(atomic_load(&h->spool_id), name, sizeof(name));
			keep = spool_fd >= 0 && atomic_load(&h->n_pending) > 0 &&
			       faccessat(spool_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
			munmap(h, HOLD_HDR_SIZE + h->capacity);
		}
		if (!keep)
			(void)unlinkat(hold_dir_fd, de->d_name, 0);
	}
	closedir(d);
}
