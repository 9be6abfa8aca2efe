// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spool header and scan that crash recovery relies on: a spool of
 * chunk records (or raw sub-buffers) is read up to its last intact record,
 * whatever follows it: a torn record, a damaged frame, garbage.
 */
#undef NDEBUG
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/spool.h"
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
	assert(spool_write_header(fd, 123456) == 0);
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
	spool_scan(fd, SPOOL_HDR_SIZE, zstd, PAGE, &scan);
	assert(scan.start_read == 123456);
	assert(scan.bytes == size && scan.events == 3000);
	assert(scan.chunks == (zstd ? chunks : 0));

	/* Garbage after the last record (a torn write) is not part of the intact data. */
	assert(pwrite(fd, "\x10\x00\x00\x00\x00\x10\x00\x00torn", 12, SPOOL_HDR_SIZE + size) == 12);
	spool_scan(fd, SPOOL_HDR_SIZE, zstd, PAGE, &scan);
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
	spool_scan(fd, SPOOL_HDR_SIZE, true, PAGE, &scan);
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
	spool_scan(fd, 0, true, PAGE, &scan);
	assert(scan.start_read == UINT64_MAX && scan.bytes == size && scan.events == 1234);
	close(fd);
	free(c.pages);
}

int main(void)
{
	test_intact(true);
	test_intact(false);
	test_damaged_record_ends_the_intact_part();
	test_no_header();
	return 0;
}
