// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * v7_verify() against damaged files - the damage `trace-cmd report` reads
 * silently (exit 0, fewer or garbled events): truncation at every section
 * boundary and inside every section header, and a flipped byte in every
 * section (inside compressed frames the zstd checksum must catch it; in
 * OPTIONS sections, whose texts carry no checksum, the option headers).
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/v7-verify.h"
#include "lib/v7-writer.h"
#include "tests/unit/v7-fixture.h"

struct section {
	uint64_t offset;
	uint16_t id;
	uint16_t flags;
	uint64_t size;
};

static int verify_bytes(const uint8_t *bytes, size_t n, char *problem, size_t n_problem)
{
	int fd = memfd_create("v7", MFD_CLOEXEC), r;
	uint64_t events, pages;

	assert(fd >= 0 && write(fd, bytes, n) == (ssize_t)n);
	r = v7_verify(fd, &events, &pages, problem, n_problem);
	close(fd);
	return r;
}

/* The section chain, from the end of the file header to EOF. */
static size_t sections(const uint8_t *b, size_t n, struct section *out, size_t max)
{
	size_t pos = 10 + 2 + 2 + 4, k = 0;

	pos += strlen((const char *)b + pos) + 1; /* compression name */
	pos += strlen((const char *)b + pos) + 1; /* version */
	pos += 8;
	while (pos < n && k < max) {
		out[k] = (struct section){ .offset = pos, .id = get_le16(b + pos),
					   .flags = get_le16(b + pos + 2), .size = get_le64(b + pos + 8) };
		pos += 16 + out[k].size;
		k++;
	}
	assert(pos == n);
	return k;
}

int main(void)
{
	struct fixture fx;
	struct section sec[32];
	char problem[512];
	uint8_t *bytes, *copy;
	uint64_t size, events, pages;
	size_t n_sec;
	int fd, r;

	fixture_init(&fx, 4096, /* zstd= */ true, 4);
	fd = memfd_create("v7", MFD_CLOEXEC);
	assert(fd >= 0 && v7_write(fd, &fx.file, &size) == 0);
	bytes = malloc(size);
	copy = malloc(size);
	assert(bytes && copy && pread(fd, bytes, size, 0) == (ssize_t)size);
	assert(v7_verify(fd, &events, &pages, problem, sizeof(problem)) == 0);
	assert(events == 3000 + 1234);
	close(fd);

	n_sec = sections(bytes, size, sec, ELEMENTSOF(sec));
	assert(n_sec == 10); /* 6 metadata, 2 OPTIONS, flyrecord, STRINGS */

	for (size_t k = 0; k < n_sec; k++) {
		/* Truncated at the section's start, inside its header, and inside its body. */
		uint64_t cuts[] = { sec[k].offset, sec[k].offset + 8, sec[k].offset + 16 + sec[k].size / 2 };

		for (size_t c = 0; c < ELEMENTSOF(cuts); c++) {
			r = verify_bytes(bytes, cuts[c], problem, sizeof(problem));
			if (r >= 0)
				fprintf(stderr, "truncation at %llu (section %u) not detected\n",
					(unsigned long long)cuts[c], sec[k].id);
			assert(r < 0 && problem[0]);
		}
		/* A flipped byte. */
		memcpy(copy, bytes, size);
		if (sec[k].id == 0)
			copy[sec[k].offset + 16 + 3] ^= 0x40; /* the first option's size */
		else if (sec[k].id == 3) { /* CPU 0: page aligned, count word, chunk header, frame */
			uint64_t chunk = ALIGN_UP(sec[k].offset + 16, 4096) + 4;

			/* The middle of the frame: not every bit of a zstd stream is used. */
			copy[chunk + 8 + get_le32(bytes + chunk) / 2] ^= 0x01;
		}
		else
			copy[sec[k].offset + 16 + 8 + (sec[k].size - 8) / 2] ^= 0x01;
		r = verify_bytes(copy, size, problem, sizeof(problem));
		if (r >= 0)
			fprintf(stderr, "flip in section %u at %llu not detected\n", sec[k].id,
				(unsigned long long)sec[k].offset);
		assert(r < 0 && problem[0]);
		printf("section %2u at %7llu: truncation and flip detected (%s)\n", sec[k].id,
		       (unsigned long long)sec[k].offset, problem);
	}
	/* Trailing bytes break the section chain. */
	memcpy(copy, bytes, size);
	assert(verify_bytes(copy, size - 1, problem, sizeof(problem)) < 0);

	free(bytes);
	free(copy);
	fixture_done(&fx);
	printf("v7-verify: all tests passed\n");
	return 0;
}
