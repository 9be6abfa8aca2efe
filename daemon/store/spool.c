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
 * A segment published in the state directory can instead keep every CPU's
 * spool in one sparse file, each in a region of its own. When the segment
 * closes, the holes between the regions are collapsed (a file system
 * operation that moves no data), and the metadata is appended: the spool
 * becomes the file, and the data is written once (spool_create_in_place()).
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
#include <linux/falloc.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/store/spool.h"
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

/* The spool directory, with room for @n_cpus fds (all -EBADF). */
static int make_dir(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus)
{
	char name[64];

	*s = (struct spool){ .state_dir_fd = state_dir_fd, .trace_id = trace_id, .dir_fd = -EBADF };
	if (mkdirat(state_dir_fd, SPOOL_DIR, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	dir_name(name, sizeof(name), trace_id);
	if (mkdirat(state_dir_fd, name, 0700) < 0)
		return negative_errno();
	s->dir_fd = openat(state_dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (s->dir_fd < 0) {
		int r = negative_errno();

		spool_remove(s);
		return r;
	}
	s->fds = calloc(MAX(n_cpus, 1u), sizeof(*s->fds));
	if (!s->fds) {
		spool_remove(s);
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		s->fds[cpu] = -EBADF;
	s->n_cpus = n_cpus;
	return 0;
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

	r = make_dir(s, state_dir_fd, trace_id, n_cpus);
	if (r < 0)
		return r;
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
 * spool_in_place_region() - each CPU's region in an in-place spool.
 * @n_cpus: number of CPUs
 *
 * Return: its size, or 0 when there are too many CPUs for one file.
 */
uint64_t spool_in_place_region(unsigned n_cpus)
{
	uint64_t region = n_cpus ? SPOOL_IN_PLACE_BYTES / n_cpus : 0;

	region = MIN(region, SPOOL_REGION_MAX) / SPOOL_REGION_MIN * SPOOL_REGION_MIN;
	return region;
}

/**
 * spool_region_start() - where a CPU's spool begins in an in-place spool.
 * @region_bytes: the spool's region size
 * @cpu: CPU number
 *
 * Return: its offset in SPOOL_IN_PLACE_NAME.
 */
uint64_t spool_region_start(uint64_t region_bytes, unsigned cpu)
{
	return cpu == 0 ? SPOOL_IN_PLACE_FIRST : (uint64_t)cpu * region_bytes;
}

/**
 * spool_region_end() - where the region holding @pos ends: the next CPU's begins there.
 * @region_bytes: the in-place spool's region size (0: a spool file of its own)
 * @pos: an offset in the region
 *
 * Return: the end, or 0 (no end) for a spool file of its own.
 */
uint64_t spool_region_end(uint64_t region_bytes, uint64_t pos)
{
	/* Regions are aligned to their size, except CPU 0's, which starts a little after 0. */
	return region_bytes ? (pos / region_bytes + 1) * region_bytes : 0;
}

/* The size an in-place file has from the start: up to the last CPU's header. */
static off_t in_place_size(uint64_t region_bytes, unsigned n_cpus)
{
	return (off_t)(spool_region_start(region_bytes, n_cpus - 1) + SPOOL_HDR_SIZE);
}

static int put_header(int fd, uint64_t offset, const struct spool_start *start)
{
	uint8_t hdr[SPOOL_HDR_SIZE];

	put_le32(hdr, SPOOL_MAGIC);
	put_le32(hdr + 4, SPOOL_VERSION);
	put_le64(hdr + 8, start->read);
	put_le64(hdr + 16, start->overrun);
	put_le64(hdr + 24, start->dropped);
	put_le32(hdr + SPOOL_COUNT_OFFSET, 0);
	return loop_pwrite(fd, hdr, sizeof(hdr), offset);
}

/**
 * spool_create_in_place() - make the spool directory and one sparse file for every CPU.
 * @s: the spool to fill in
 * @state_dir_fd: the daemon's state directory
 * @trace_id: the capture's id
 * @n_cpus: number of CPUs
 *
 * Each CPU gets its own fd on SPOOL_IN_PLACE_NAME (its own file position),
 * standing at its region, which holds a header saying "nothing read yet"
 * until the capture writes the real one: after a crash, every region has
 * a header, which is how recovery finds them even when some holes were
 * already collapsed.
 *
 * Return: 0, -EFBIG when the file system does not allow a file this large
 * or there are too many CPUs, or -errno; on failure nothing is left behind.
 */
int spool_create_in_place(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus)
{
	uint64_t region = spool_in_place_region(n_cpus);
	int r;

	if (region == 0)
		return -EFBIG;
	r = make_dir(s, state_dir_fd, trace_id, n_cpus);
	if (r < 0)
		return r;
	s->region_bytes = region;
	for (unsigned cpu = 0; cpu < n_cpus && r >= 0; cpu++) {
		off_t start = (off_t)spool_region_start(region, cpu);

		s->fds[cpu] = openat(s->dir_fd, SPOOL_IN_PLACE_NAME,
				     O_RDWR | O_CLOEXEC | O_NOFOLLOW | (cpu == 0 ? O_CREAT | O_EXCL : 0),
				     0600);
		if (s->fds[cpu] < 0)
			r = negative_errno();
		/* The whole size at once: a file system that cannot hold it says so now. */
		else if (cpu == 0 && ftruncate(s->fds[0], in_place_size(region, n_cpus)) < 0)
			r = negative_errno();
		else
			r = put_header(s->fds[cpu], (uint64_t)start, &SPOOL_START_UNKNOWN);
		if (r >= 0 && lseek(s->fds[cpu], start, SEEK_SET) < 0)
			r = negative_errno();
	}
	if (r < 0)
		spool_remove(s);
	return r;
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
		s->dir_fd = safe_close(s->dir_fd);
		dir_name(name, sizeof(name), s->trace_id);
		spool_remove_dir(s->state_dir_fd, name);
	}
}

/**
 * spool_remove_dir() - remove a spool directory and everything in it.
 * @parent_fd: the directory @name is relative to
 * @name: the spool's directory
 *
 * Everything, hidden files too: a kill can leave a half-written ".recipe.tmp".
 */
void spool_remove_dir(int parent_fd, const char *name)
{
	int dir_fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	else
		safe_close(dir_fd);
	if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0)
		log_warning_errno(negative_errno(), "Removing spool '%s' failed: %m", name);
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
 * @fd: the spool, standing where it starts (0 in its own file, its region in place)
 * @start: the kernel's counters of the CPU at the cut
 * @ret_data_pos: receives where the records start (may be NULL)
 *
 * Return: 0 with the file offset SPOOL_HDR_SIZE further, -ENOSPC for a short
 * write, or -errno.
 */
int spool_write_header(int fd, const struct spool_start *start, uint64_t *ret_data_pos)
{
	off_t at = lseek(fd, 0, SEEK_CUR);
	int r;

	if (at < 0)
		return -errno;
	r = put_header(fd, (uint64_t)at, start);
	if (r < 0)
		return r;
	if (lseek(fd, at + SPOOL_HDR_SIZE, SEEK_SET) < 0)
		return -errno;
	if (ret_data_pos)
		*ret_data_pos = (uint64_t)at + SPOOL_HDR_SIZE;
	return 0;
}

/*
 * The spool header at @offset: its start counters and where its records
 * begin. false: no header of ours there.
 */
static bool read_header(int fd, uint64_t offset, struct spool_scan *ret, uint64_t *ret_data_offset)
{
	static const uint32_t size_of[] = { [1] = SPOOL_HDR_V1_SIZE, [2] = SPOOL_HDR_V2_SIZE,
					     [3] = SPOOL_HDR_SIZE };
	uint8_t hdr[SPOOL_HDR_SIZE];
	uint32_t version;

	if (loop_pread_exact(fd, hdr, SPOOL_HDR_V1_SIZE, offset) < 0 ||
	    get_le32(hdr) != SPOOL_MAGIC)
		return false;
	version = get_le32(hdr + 4);
	if (version < 1 || version > SPOOL_VERSION)
		return false;
	ret->start.read = get_le64(hdr + 8);
	if (version >= 3) {
		if (loop_pread_exact(fd, hdr, SPOOL_HDR_SIZE, offset) < 0)
			return false;
		ret->start.overrun = get_le64(hdr + 16);
		ret->start.dropped = get_le64(hdr + 24);
	}
	*ret_data_offset = offset + size_of[version];
	return true;
}

/*
 * Every sub-buffer the kernel hands out holds data: one whose header says
 * none (a zero-filled file, a hole) was never captured, and ends the
 * intact part rather than pass for thousands of empty pages.
 */
static bool pages_hold_data(const uint8_t *pages, size_t n, uint32_t page_size)
{
	for (size_t off = 0; off + page_size <= n; off += page_size) {
		struct rb_page_info info;

		if (rb_page_parse(pages + off, page_size, &info) < 0 || info.data_size == 0)
			return false;
	}
	return true;
}

/**
 * spool_scan() - read a spool up to its last intact record.
 * @fd: the spool, or a file of chunk records without a header
 * @header: where its header is (0 in its own file), or SPOOL_NO_HEADER:
 *	records from offset 0
 * @zstd: chunk records; false: whole raw sub-buffers
 * @page_size: the capture's sub-buffer size
 * @ret: what the intact part holds: whole chunk records that decompress
 *       (checksum) into whole, well-formed pages, or whole pages
 *
 * Reads nothing beyond what each record header, bounded by chunk_record_check(),
 * allows; a damaged or torn record, or a sub-buffer without data, ends the
 * intact part (what follows is left out: @ret->ignored says how much). A
 * header that is not ours leaves the start counter unknown, and records
 * are looked for after it all the same.
 */
void spool_scan(int fd, uint64_t header, bool zstd, uint32_t page_size,
		struct spool_scan *ret)
{
	uint64_t off = 0, size;
	uint8_t hdr[CHUNK_HDR_SIZE], *in = NULL, *raw = NULL;
	size_t in_cap = 0, raw_cap = 0;
	struct stat st;

	*ret = (struct spool_scan){ .start = SPOOL_START_UNKNOWN };
	if (header != SPOOL_NO_HEADER && !read_header(fd, header, ret, &off))
		off = header + SPOOL_HDR_SIZE;
	ret->data_offset = off;
	if (fstat(fd, &st) < 0)
		return;
	size = (uint64_t)st.st_size;
	while (off < size) {
		uint32_t csize = page_size, usize = page_size;
		int64_t events;
		size_t got;

		if (zstd) {
			if (size - off < CHUNK_HDR_SIZE ||
			    loop_pread_exact(fd, hdr, CHUNK_HDR_SIZE, off) < 0)
				break;
			if (chunk_record_check(hdr, size - off - CHUNK_HDR_SIZE, page_size, &csize,
					       &usize) < 0)
				break;
		} else if (size - off < page_size) {
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
		} else if (loop_pread_exact(fd, raw, page_size, off) < 0) {
			break;
		}
		events = rb_pages_count_events(raw, usize, page_size);
		if (events < 0 || !pages_hold_data(raw, usize, page_size))
			break;
		ret->events += (uint64_t)events;
		off += zstd ? CHUNK_HDR_SIZE + csize : page_size;
		ret->chunks += zstd;
	}
	free(in);
	free(raw);
	ret->bytes = off - ret->data_offset;
	ret->ignored = size > off ? size - off : 0;
}

/* The granule the file system moves extents by (collapse offsets must be multiples). */
static uint64_t block_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_blksize > 0 ? (uint64_t)st.st_blksize : 4096;
}

/**
 * spool_collapse_regions() - close the holes between the CPUs' regions of a file.
 * @fd: a file laid out like an in-place spool, its writers all done
 * @region_bytes: its region size
 * @n: number of CPUs (regions)
 * @bytes: each CPU's records (after the SPOOL_HDR_SIZE bytes its region starts with)
 * @ret_data_offsets: receives where each CPU's records now start, also on failure
 * @ret_end: receives where the last CPU's records end: the file's size
 *
 * The file is cut after the last CPU's records, then each hole, from the
 * last to the first, is removed with FALLOC_FL_COLLAPSE_RANGE from the
 * first block after a CPU's records to the next region. Each region keeps
 * its first SPOOL_HDR_SIZE bytes: in a spool, the header recovery finds
 * the moved regions by.
 *
 * Return: 0, or -errno: -EOPNOTSUPP (or -EINVAL) from a file system that
 * cannot collapse; the regions are then wherever @ret_data_offsets says,
 * and can be copied from there.
 */
int spool_collapse_regions(int fd, uint64_t region_bytes, unsigned n, const uint64_t *bytes,
			   uint64_t *ret_data_offsets, uint64_t *ret_end)
{
	uint64_t blk = block_size(fd), *start = ret_data_offsets;

	if (n == 0 || region_bytes == 0)
		return -EINVAL;
	for (unsigned cpu = 0; cpu < n; cpu++)
		start[cpu] = spool_region_start(region_bytes, cpu);
	*ret_end = start[n - 1] + SPOOL_HDR_SIZE + bytes[n - 1];
	if (ftruncate(fd, (off_t)*ret_end) < 0)
		goto fail;
	for (unsigned cpu = n - 1; cpu-- > 0;) {
		uint64_t from = ALIGN_UP(start[cpu] + SPOOL_HDR_SIZE + bytes[cpu], blk);
		uint64_t len = start[cpu + 1] > from ? start[cpu + 1] - from : 0;

		if (len == 0)
			continue;
		if (fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, (off_t)from, (off_t)len) < 0)
			goto fail;
		for (unsigned later = cpu + 1; later < n; later++)
			start[later] -= len;
		*ret_end -= len;
	}
	for (unsigned cpu = 0; cpu < n; cpu++)
		start[cpu] += SPOOL_HDR_SIZE;
	return 0;

fail:
	for (unsigned cpu = 0; cpu < n; cpu++)
		start[cpu] += SPOOL_HDR_SIZE;
	return negative_errno();
}

/**
 * spool_mirror_prepare() - lay out an empty output file like an in-place spool.
 * @fd: a regular file, empty, open for writing
 * @n_cpus: number of CPUs
 * @ret_region: receives the region size
 *
 * A record's spool files stay as they are (the daemon can recover them);
 * its chunk records are also written into the client's file, at the
 * offsets an in-place spool would have them, so that the stop only
 * collapses that file (spool_collapse_regions()). This checks, on the
 * empty file, that its file system can collapse and allows a file of the
 * size, and leaves it sparse at that size.
 *
 * Return: 0, -EOPNOTSUPP (or -EINVAL) from a file system that cannot
 * collapse, -EFBIG, -EINVAL for what is not a regular file, -ENOTEMPTY for
 * a file that is not empty (left alone), or -errno; an empty file is empty
 * again on failure.
 */
int spool_mirror_prepare(int fd, unsigned n_cpus, uint64_t *ret_region)
{
	uint64_t region = spool_in_place_region(n_cpus), blk = block_size(fd);
	struct stat st;
	int r = 0;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size != 0 || lseek(fd, 0, SEEK_CUR) != 0)
		return -ENOTEMPTY;
	if (region == 0)
		return -EFBIG;
	/* Collapsing a hole is enough to learn whether the file system can (not up to EOF). */
	if (ftruncate(fd, (off_t)(3 * blk)) < 0 ||
	    fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, (off_t)blk, (off_t)blk) < 0 ||
	    ftruncate(fd, in_place_size(region, n_cpus)) < 0)
		r = negative_errno();
	if (r < 0) {
		(void)!ftruncate(fd, 0);
		return r;
	}
	*ret_region = region;
	return 0;
}

/*
 * Copies @n bytes at @offset of @in to the spool file @name in @dir_fd, in
 * the kernel (both are on one file system), whole or not at all: written
 * under a temporary name, then renamed over whatever @name was.
 * Return: its fd, or -errno.
 */
static int copy_to_spool_file(int dir_fd, const char *name, int in, uint64_t offset, uint64_t n)
{
	char tmp[NAME_MAX + 1];
	off_t from = (off_t)offset;
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(dir_fd, tmp, 0);
	fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	while (n > 0 && r >= 0) {
		ssize_t k = copy_file_range(in, &from, fd, NULL, (size_t)MIN(n, UINT64_C(1) << 30), 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			r = k < 0 ? negative_errno() : -ENODATA;
		else
			n -= (uint64_t)k;
	}
	if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = negative_errno();
	if (r < 0) {
		unlinkat(dir_fd, tmp, 0);
		close(fd);
		return r;
	}
	return fd;
}

/**
 * spool_split_in_place() - an in-place spool as one spool file per CPU, for recovery.
 * @dir_fd: the spool directory
 * @n_cpus: its CPU count (from the recipe)
 * @zstd: chunk records (in-place spools always are)
 * @page_size: the capture's sub-buffer size
 * @fds: receives each CPU's spool file, "cpuN": its header and intact records
 *
 * A region is either where it was made or, when the daemon died while the
 * file was being finished, moved down to the first block after the
 * previous CPU's records: there a header of this version says it was moved.
 * The in-place file goes once every CPU's file is made, so recovery may
 * append to those (a crash then leaves an ordinary spool); a crash before
 * that splits it again.
 *
 * Return: 0, -ENOENT when the spool is not in place, or -errno.
 */
int spool_split_in_place(int dir_fd, unsigned n_cpus, bool zstd, uint32_t page_size, int *fds)
{
	uint64_t region = spool_in_place_region(n_cpus), prev_end = 0, blk;
	int fd, r = 0;

	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		fds[cpu] = -EBADF;
	fd = openat(dir_fd, SPOOL_IN_PLACE_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return negative_errno();
	if (region == 0) {
		close(fd);
		return -EINVAL;
	}
	blk = block_size(fd);
	for (unsigned cpu = 0; cpu < n_cpus && r >= 0; cpu++) {
		uint64_t start = spool_region_start(region, cpu), moved, data;
		struct spool_scan scan, at_moved;
		char name[32];

		moved = ALIGN_UP(prev_end, blk);
		if (cpu > 0 && moved < start && read_header(fd, moved, &at_moved, &data) &&
		    data == moved + SPOOL_HDR_SIZE)
			start = moved;
		spool_scan(fd, start, zstd, page_size, &scan);
		prev_end = scan.data_offset + scan.bytes;
		snprintf(name, sizeof(name), "cpu%u", cpu);
		r = copy_to_spool_file(dir_fd, name, fd, start, prev_end - start);
		if (r >= 0)
			fds[cpu] = r;
	}
	close(fd);
	if (r >= 0 && unlinkat(dir_fd, SPOOL_IN_PLACE_NAME, 0) < 0)
		r = negative_errno();
	if (r < 0)
		for (unsigned cpu = 0; cpu < n_cpus; cpu++)
			fds[cpu] = safe_close(fds[cpu]);
	return r < 0 ? r : 0;
}
