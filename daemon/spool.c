// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Spools: while a capture runs, each CPU's stored data (compressed chunk
 * records, or raw sub-buffers with compression "none") is appended to its
 * own file, because a v7 file needs each CPU's data in one contiguous
 * region and so can only be assembled once every CPU's stream is
 * complete. A chunk record is `u32 csize, u32 usize, zstd frame` and the
 * frame carries its own content checksum, so a spool is both the v7 chunk
 * stream, ready to copy, and verifiable after a crash.
 *
 * Names are built from the capture's internal trace id, never from client
 * text. Owned by one session, main thread only; the capture worker of each
 * CPU writes through the fd it is given.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "daemon/spool.h"
#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"

static void dir_name(char *buf, size_t n, uint64_t trace_id)
{
	snprintf(buf, n, SPOOL_DIR "/%016" PRIx64, trace_id);
}

/**
 * spool_name_valid() - could @name be a spool directory of ours?
 * @name: a name found in SPOOL_DIR
 *
 * Return: true for 16 lower-case hex digits.
 */
bool spool_name_valid(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");

	return n == SPOOL_NAME_SIZE - 1 && name[n] == '\0';
}

/**
 * spool_name() - the name of a capture's spool directory inside SPOOL_DIR.
 * @trace_id: the capture's id
 * @buf: receives it
 * @n: its size, SPOOL_NAME_SIZE
 */
void spool_name(uint64_t trace_id, char *buf, size_t n)
{
	snprintf(buf, n, "%016" PRIx64, trace_id);
}

/**
 * spool_new_id() - a fresh trace id, naming a capture's spool and its file.
 *
 * Return: 64 random bits (a mix of pid and time if getrandom fails).
 */
uint64_t spool_new_id(void)
{
	uint64_t id;
	struct timespec ts;

	if (getrandom(&id, sizeof(id), 0) == sizeof(id))
		return id;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_sec << 20 ^ (uint64_t)ts.tv_nsec;
}

/**
 * spool_create() - make the spool directory and one empty file per CPU.
 * @s: the spool to fill in
 * @state_dir_fd: the daemon's state directory
 * @trace_id: the capture's id
 * @n_cpus: number of CPUs
 *
 * Return: 0 or -errno; on failure nothing is left behind.
 */
int spool_create(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus)
{
	char name[64];
	int r;

	*s = (struct spool){ .state_dir_fd = state_dir_fd, .trace_id = trace_id, .dir_fd = -EBADF };
	if (mkdirat(state_dir_fd, SPOOL_DIR, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	dir_name(name, sizeof(name), trace_id);
	if (mkdirat(state_dir_fd, name, 0700) < 0)
		return negative_errno();
	s->dir_fd = openat(state_dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (s->dir_fd < 0) {
		r = negative_errno();
		spool_remove(s);
		return r;
	}
	s->fds = calloc(n_cpus, sizeof(*s->fds));
	if (!s->fds) {
		spool_remove(s);
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		s->fds[cpu] = -EBADF;
	s->n_cpus = n_cpus;
	for (unsigned cpu = 0; cpu < n_cpus; cpu++) {
		snprintf(name, sizeof(name), "cpu%u", cpu);
		s->fds[cpu] = openat(s->dir_fd, name,
				     O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->fds[cpu] < 0) {
			r = negative_errno();
			spool_remove(s);
			return r;
		}
	}
	return 0;
}

/**
 * spool_close() - close the spool files but keep them on disk.
 * @s: spool
 */
void spool_close(struct spool *s)
{
	for (unsigned cpu = 0; s->fds && cpu < s->n_cpus; cpu++)
		s->fds[cpu] = safe_close(s->fds[cpu]);
	free(s->fds);
	s->fds = NULL;
	s->n_cpus = 0;
	s->dir_fd = safe_close(s->dir_fd);
}

/**
 * spool_remove() - close and delete the spool files and their directory.
 * @s: spool (may be half-built or already removed)
 */
void spool_remove(struct spool *s)
{
	char name[64];

	for (unsigned cpu = 0; s->fds && cpu < s->n_cpus; cpu++)
		s->fds[cpu] = safe_close(s->fds[cpu]);
	free(s->fds);
	s->fds = NULL;
	s->n_cpus = 0;
	if (s->dir_fd >= 0) {
		/* The CPU files and the recovery recipe (recovery.c): everything in it. */
		DIR *d = fdopendir(dup(s->dir_fd));
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(s->dir_fd, de->d_name, 0);
		if (d)
			closedir(d);
		s->dir_fd = safe_close(s->dir_fd);
		dir_name(name, sizeof(name), s->trace_id);
		if (unlinkat(s->state_dir_fd, name, AT_REMOVEDIR) < 0)
			log_warning_errno(negative_errno(), "Removing spool '%s' failed: %m", name);
	}
}

/**
 * spool_report_stale() - log the spools an interrupted capture left.
 * @state_dir_fd: the daemon's state directory, locked by us
 *
 * Called at start-up, before any capture runs, so every spool found is
 * stale. They hold compressed data of a capture that never completed and
 * are kept, never deleted here.
 *
 * Return: the number of stale spools.
 */
unsigned spool_report_stale(int state_dir_fd)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d;
	int fd;

	fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !spool_name_valid(de->d_name))
			continue;
		log_notice("Keeping spool '" SPOOL_DIR "/%s' of an interrupted capture", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/**
 * spool_write_header() - start a spool: its header, then the data position.
 * @fd: the spool, empty or being reused from its start
 * @start_read: the kernel's "read events" counter of the CPU at the cut, or UINT64_MAX
 *
 * Return: 0 with the file offset at SPOOL_HDR_SIZE, -ENOSPC for a short write, or -errno.
 */
int spool_write_header(int fd, uint64_t start_read)
{
	uint8_t hdr[SPOOL_HDR_SIZE];
	ssize_t k;

	put_le32(hdr, SPOOL_MAGIC);
	put_le32(hdr + 4, SPOOL_VERSION);
	put_le64(hdr + 8, start_read);
	k = pwrite(fd, hdr, sizeof(hdr), 0);
	if (k < 0)
		return -errno;
	if (k != sizeof(hdr))
		return -ENOSPC;
	return lseek(fd, SPOOL_HDR_SIZE, SEEK_SET) < 0 ? -errno : 0;
}

/**
 * spool_scan() - read a spool up to its last intact record.
 * @fd: the spool, or a file of chunk records without a header
 * @data_offset: where the records start (SPOOL_HDR_SIZE after a header, else 0)
 * @zstd: chunk records; false: whole raw sub-buffers
 * @page_size: the capture's sub-buffer size
 * @ret: what the intact part holds: whole chunk records that decompress
 *       (checksum) into whole, well-formed pages, or whole pages
 *
 * Reads nothing beyond what each record header, bounded by chunk_record_check(),
 * allows; a damaged or torn record ends the intact part.
 */
void spool_scan(int fd, uint64_t data_offset, bool zstd, uint32_t page_size,
		struct spool_scan *ret)
{
	uint64_t off = data_offset, size;
	uint8_t hdr[SPOOL_HDR_SIZE], *in = NULL, *raw = NULL;
	size_t in_cap = 0, raw_cap = 0;
	uint32_t page = page_size;
	struct stat st;

	*ret = (struct spool_scan){ .start_read = UINT64_MAX };
	if (fstat(fd, &st) < 0)
		return;
	size = (uint64_t)st.st_size;
	if (data_offset == SPOOL_HDR_SIZE && loop_pread_exact(fd, hdr, sizeof(hdr), 0) == 0 &&
	    get_le32(hdr) == SPOOL_MAGIC)
		ret->start_read = get_le64(hdr + 8);
	while (off < size) {
		uint32_t csize = page, usize = page;
		int64_t events;
		size_t got;

		if (zstd) {
			if (size - off < CHUNK_HDR_SIZE ||
			    loop_pread_exact(fd, hdr, CHUNK_HDR_SIZE, off) < 0)
				break;
			if (chunk_record_check(hdr, size - off - CHUNK_HDR_SIZE, page, &csize,
					       &usize) < 0)
				break;
		} else if (size - off < page) {
			break;
		}
		if (csize > in_cap || usize > raw_cap) {
			free(in);
			free(raw);
			in_cap = MAX(in_cap, (size_t)csize);
			raw_cap = MAX(raw_cap, (size_t)usize);
			in = malloc(in_cap);
			raw = malloc(raw_cap);
			if (!in || !raw)
				break;
		}
		if (zstd) {
			if (loop_pread_exact(fd, in, csize, off + CHUNK_HDR_SIZE) < 0 ||
			    decompress_frame(in, csize, raw, usize, &got) < 0 || got != usize)
				break;
		} else if (loop_pread_exact(fd, raw, page, off) < 0) {
			break;
		}
		events = rb_pages_count_events(raw, usize, page);
		if (events < 0)
			break;
		ret->events += (uint64_t)events;
		off += zstd ? CHUNK_HDR_SIZE + csize : page;
		ret->chunks += zstd;
	}
	free(in);
	free(raw);
	ret->bytes = off - data_offset;
}
