// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spool header and scan that crash recovery relies on: a spool of
 * chunk records (or raw sub-buffers) is read up to its last intact record,
 * whatever follows it: a torn record, a damaged frame, garbage. And the
 * in-place spool: its regions collapse into a v7 flyrecord layout, and
 * recovery finds every region whether its hole was collapsed or not.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "daemon/store/spool.h"
#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "tests/unit/v7-fixture.h"

#define PAGE 4096u
#define PAGES_PER_CHUNK 4u

/* A spool file: header, then the records of make_spool(). */
static int spool_with_header(const struct cpu_pages *c, bool zstd, uint64_t *ret_size,
			     uint32_t *ret_chunks)
{
	int src = make_spool(c, PAGE, zstd, PAGES_PER_CHUNK, ret_size, ret_chunks);
	int fd = memfd_create("spool", MFD_CLOEXEC);
	uint8_t *data = malloc(*ret_size);

	assert(fd >= 0 && data);
	assert(pread(src, data, *ret_size, 0) == (ssize_t)*ret_size);
	assert(spool_write_header(fd, &(struct spool_start){ 123456, 77, 5 }, NULL) == 0);
	assert(lseek(fd, 0, SEEK_CUR) == SPOOL_HDR_SIZE);
	assert(write(fd, data, *ret_size) == (ssize_t)*ret_size);
	free(data);
	close(src);
	return fd;
}

static void test_intact(bool zstd)
{
	struct cpu_pages c = {};
	struct spool_scan scan;
	uint32_t chunks;
	uint64_t size;
	int fd;

	make_pages(&c, 0, 3000, PAGE);
	fd = spool_with_header(&c, zstd, &size, &chunks);
	spool_scan(fd, 0, zstd, PAGE, &scan);
	assert(scan.start.read == 123456 && scan.start.overrun == 77 && scan.start.dropped == 5);
	assert(scan.bytes == size && scan.events == 3000);
	assert(scan.chunks == (zstd ? chunks : 0));

	/* Garbage after the last record (a torn write) is not part of the intact data. */
	assert(pwrite(fd, "\x10\x00\x00\x00\x00\x10\x00\x00torn", 12, SPOOL_HDR_SIZE + size) == 12);
	spool_scan(fd, 0, zstd, PAGE, &scan);
	assert(scan.bytes == size && scan.events == 3000);
	close(fd);
	free(c.pages);
}

static void test_damaged_record_ends_the_intact_part(void)
{
	struct cpu_pages c = {};
	struct spool_scan scan;
	uint8_t hdr[CHUNK_HDR_SIZE];
	uint64_t size, second;
	uint32_t chunks, csize;
	int fd;

	make_pages(&c, 0, 3000, PAGE);
	fd = spool_with_header(&c, true, &size, &chunks);
	assert(chunks >= 3);
	/* Flip a byte inside the second record's frame: its checksum fails. */
	assert(pread(fd, hdr, sizeof(hdr), SPOOL_HDR_SIZE) == sizeof(hdr));
	csize = get_le32(hdr);
	second = SPOOL_HDR_SIZE + CHUNK_HDR_SIZE + csize;
	assert(pread(fd, hdr, 1, second + CHUNK_HDR_SIZE + 5) == 1);
	hdr[0] ^= 0xff;
	assert(pwrite(fd, hdr, 1, second + CHUNK_HDR_SIZE + 5) == 1);
	spool_scan(fd, 0, true, PAGE, &scan);
	assert(scan.chunks == 1 && scan.bytes == CHUNK_HDR_SIZE + csize);
	assert(scan.events > 0 && scan.events < 3000);
	close(fd);
	free(c.pages);
}

static void test_no_header(void)
{
	struct cpu_pages c = {};
	struct spool_scan scan;
	uint32_t chunks;
	uint64_t size;
	int fd;

	/* Data that continued in a file without a header (after an in-flight loss). */
	make_pages(&c, 2, 1234, PAGE);
	fd = make_spool(&c, PAGE, true, PAGES_PER_CHUNK, &size, &chunks);
	spool_scan(fd, SPOOL_NO_HEADER, true, PAGE, &scan);
	assert(scan.start.read == UINT64_MAX && scan.bytes == size && scan.events == 1234);
	close(fd);
	free(c.pages);
}

/* A hole (a planted sparse file, zeros) after the data is no data: not scanned as pages. */
static void test_zeros_are_not_pages(void)
{
	struct cpu_pages c = {};
	struct spool_scan scan;
	uint32_t chunks;
	uint64_t size;
	int fd;

	make_pages(&c, 0, 500, PAGE);
	fd = spool_with_header(&c, false, &size, &chunks);
	assert(ftruncate(fd, (off_t)(SPOOL_HDR_SIZE + size + (UINT64_C(1) << 30))) == 0);
	spool_scan(fd, 0, false, PAGE, &scan);
	assert(scan.bytes == size && scan.events == 500);
	assert(scan.ignored == UINT64_C(1) << 30);
	close(fd);
	free(c.pages);
}

/* A version-1 spool (16-byte header, no count) from before the count slot still reads. */
static void test_version_1_header(void)
{
	struct cpu_pages c = {};
	struct spool_scan scan;
	uint8_t hdr[SPOOL_HDR_V1_SIZE];
	uint32_t chunks;
	uint64_t size;
	int src, fd;
	uint8_t *data;

	make_pages(&c, 0, 2000, PAGE);
	src = make_spool(&c, PAGE, true, PAGES_PER_CHUNK, &size, &chunks);
	fd = memfd_create("spool-v1", MFD_CLOEXEC);
	data = malloc(size);
	assert(fd >= 0 && data && pread(src, data, size, 0) == (ssize_t)size);
	put_le32(hdr, SPOOL_MAGIC);
	put_le32(hdr + 4, 1);
	put_le64(hdr + 8, 777);
	assert(write(fd, hdr, sizeof(hdr)) == sizeof(hdr));
	assert(write(fd, data, size) == (ssize_t)size);
	spool_scan(fd, 0, true, PAGE, &scan);
	assert(scan.start.read == 777 && scan.start.overrun == UINT64_MAX &&
	       scan.data_offset == SPOOL_HDR_V1_SIZE);
	assert(scan.bytes == size && scan.events == 2000 && scan.chunks == chunks);
	free(data);
	close(src);
	close(fd);
	free(c.pages);
}

#define IP_CPUS 3u
static const unsigned ip_events[IP_CPUS] = { 3000, 0, 1700 };

/* An in-place spool of IP_CPUS CPUs in @state_fd, each region with its header and records. */
static void fill_in_place(struct spool *s, int state_fd, uint64_t *bytes)
{
	assert(spool_create_in_place(s, state_fd, spool_new_id(), IP_CPUS) == 0);
	for (unsigned cpu = 0; cpu < IP_CPUS; cpu++) {
		struct cpu_pages c = {};
		uint32_t chunks = 0;
		uint64_t pos;
		uint8_t *data;
		int src;

		assert((uint64_t)lseek(s->fds[cpu], 0, SEEK_CUR) ==
		       spool_region_start(s->region_bytes, cpu));
		assert(spool_write_header(s->fds[cpu], &(struct spool_start){ 1000 + cpu, 2000 + cpu, 0 },
					  &pos) == 0);
		assert(pos == spool_region_start(s->region_bytes, cpu) + SPOOL_HDR_SIZE);
		assert(spool_region_end(s->region_bytes, pos) ==
		       spool_region_start(s->region_bytes, cpu + 1));
		bytes[cpu] = 0;
		if (ip_events[cpu] == 0)
			continue;
		make_pages(&c, cpu, ip_events[cpu], PAGE);
		src = make_spool(&c, PAGE, true, PAGES_PER_CHUNK, &bytes[cpu], &chunks);
		data = malloc(bytes[cpu]);
		assert(data && pread(src, data, bytes[cpu], 0) == (ssize_t)bytes[cpu]);
		assert(write(s->fds[cpu], data, bytes[cpu]) == (ssize_t)bytes[cpu]);
		free(data);
		close(src);
		free(c.pages);
	}
}

/* What recovery makes of the spool: every CPU's header and events, wherever its region is. */
static void check_split(const struct spool *s)
{
	int fds[IP_CPUS];

	/* Kept under a second name, for the next crash this test plays. */
	assert(linkat(s->dir_fd, SPOOL_IN_PLACE_NAME, s->dir_fd, "kept", 0) == 0);
	assert(spool_split_in_place(s->dir_fd, IP_CPUS, true, PAGE, fds) == 0);
	/* An ordinary spool now: a file per CPU, the in-place file gone. */
	assert(faccessat(s->dir_fd, SPOOL_IN_PLACE_NAME, F_OK, 0) < 0 && errno == ENOENT);
	for (unsigned cpu = 0; cpu < IP_CPUS; cpu++) {
		struct spool_scan scan;
		char name[16];
		struct stat a, b;

		snprintf(name, sizeof(name), "cpu%u", cpu);
		assert(fstatat(s->dir_fd, name, &a, 0) == 0 && fstat(fds[cpu], &b) == 0);
		assert(a.st_ino == b.st_ino);
		spool_scan(fds[cpu], 0, true, PAGE, &scan);
		assert(scan.start.read == 1000 + cpu && scan.start.overrun == 2000 + cpu &&
		       scan.data_offset == SPOOL_HDR_SIZE);
		assert(scan.events == ip_events[cpu]);
		close(fds[cpu]);
		assert(unlinkat(s->dir_fd, name, 0) == 0);
	}
	assert(renameat(s->dir_fd, "kept", s->dir_fd, SPOOL_IN_PLACE_NAME) == 0);
}

static void test_in_place(void)
{
	char dir[] = "test-spool-XXXXXX";
	uint64_t bytes[IP_CPUS], offsets[IP_CPUS], end, hole;
	struct spool s, partial;
	struct statfs sfs;
	bool collapses;
	int state_fd, r;

	assert(mkdtemp(dir));
	state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(state_fd >= 0 && fstatfs(state_fd, &sfs) == 0);
	/* ext4 and xfs collapse; elsewhere (tmpfs) only the copy fallback can be checked. */
	collapses = sfs.f_type == EXT4_SUPER_MAGIC || sfs.f_type == XFS_SUPER_MAGIC;

	/* A crash while capturing: every region where it was made. */
	fill_in_place(&s, state_fd, bytes);
	check_split(&s);

	r = spool_collapse_regions(s.fds[0], s.region_bytes, IP_CPUS, bytes, offsets, &end);
	if (collapses) {
		struct stat st;

		assert(r == 0);
		assert(fstat(s.fds[0], &st) == 0 && (uint64_t)st.st_size == end);
		assert(offsets[0] == SPOOL_IN_PLACE_FIRST + SPOOL_HDR_SIZE);
		/* Each region follows the previous one's records, block-aligned. */
		for (unsigned cpu = 1; cpu < IP_CPUS; cpu++)
			assert(offsets[cpu] - SPOOL_HDR_SIZE ==
			       ALIGN_UP(offsets[cpu - 1] + bytes[cpu - 1], (uint64_t)st.st_blksize));
		assert(end == offsets[IP_CPUS - 1] + bytes[IP_CPUS - 1]);
	} else {
		printf("# %s cannot collapse ranges: checking the uncollapsed layout only\n", dir);
		assert(r < 0);
		for (unsigned cpu = 0; cpu < IP_CPUS; cpu++)
			assert(offsets[cpu] == spool_region_start(s.region_bytes, cpu) + SPOOL_HDR_SIZE);
	}
	for (unsigned cpu = 0; cpu < IP_CPUS; cpu++) {
		struct spool_scan scan;

		spool_scan(s.fds[0], offsets[cpu] - SPOOL_HDR_SIZE, true, PAGE, &scan);
		assert(scan.data_offset == offsets[cpu] && scan.bytes == bytes[cpu]);
		assert(scan.events == ip_events[cpu]);
	}
	/* A crash after the collapse, while the metadata was being appended. */
	assert(write(s.fds[IP_CPUS - 1], "metadata", 8) == 8);
	check_split(&s);
	spool_remove(&s);

	/* A crash between two collapses: the later hole gone, the earlier one still there. */
	if (collapses) {
		fill_in_place(&partial, state_fd, bytes);
		end = spool_region_start(partial.region_bytes, IP_CPUS - 1) + SPOOL_HDR_SIZE +
		      bytes[IP_CPUS - 1];
		assert(ftruncate(partial.fds[0], (off_t)end) == 0);
		hole = ALIGN_UP(spool_region_start(partial.region_bytes, 1) + SPOOL_HDR_SIZE, 4096u);
		assert(fallocate(partial.fds[0], FALLOC_FL_COLLAPSE_RANGE, (off_t)hole,
				 (off_t)(spool_region_start(partial.region_bytes, 2) - hole)) == 0);
		check_split(&partial);
		spool_remove(&partial);
	}
	assert(unlinkat(state_fd, SPOOL_DIR, AT_REMOVEDIR) == 0);
	close(state_fd);
	assert(rmdir(dir) == 0);
}

/* A record's output laid out for its mirror: only an empty file, only where it collapses. */
static void test_mirror_prepare(void)
{
	char dir[] = "test-spool-XXXXXX", path[64];
	uint64_t region = 0;
	struct statfs sfs;
	struct stat st;
	int fd, r;

	assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert(fd >= 0 && fstatfs(fd, &sfs) == 0);
	r = spool_mirror_prepare(fd, IP_CPUS, &region);
	assert(fstat(fd, &st) == 0);
	if (sfs.f_type == EXT4_SUPER_MAGIC || sfs.f_type == XFS_SUPER_MAGIC) {
		assert(r == 0 && region == spool_in_place_region(IP_CPUS));
		assert((uint64_t)st.st_size == spool_region_start(region, IP_CPUS - 1) +
					       SPOOL_HDR_SIZE);
		assert(st.st_blocks == 0);
		/* Not empty any more: refused, and left as it is. */
		assert(spool_mirror_prepare(fd, IP_CPUS, &region) == -ENOTEMPTY);
		assert(ftruncate(fd, 0) == 0 && write(fd, "x", 1) == 1);
		assert(spool_mirror_prepare(fd, IP_CPUS, &region) == -ENOTEMPTY);
		assert(fstat(fd, &st) == 0 && st.st_size == 1);
	} else {
		printf("# %s cannot collapse ranges: the mirror must be refused\n", dir);
		assert(r == -EOPNOTSUPP || r == -EINVAL);
		assert(st.st_size == 0);
	}
	close(fd);
	/* Not a regular file. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(fd >= 0 && spool_mirror_prepare(fd, IP_CPUS, &region) == -EINVAL);
	close(fd);
	assert(unlink(path) == 0 && rmdir(dir) == 0);
}

int main(void)
{
	test_intact(true);
	test_intact(false);
	test_damaged_record_ends_the_intact_part();
	test_no_header();
	test_zeros_are_not_pages();
	test_version_1_header();
	test_in_place();
	test_mirror_prepare();
	return 0;
}
