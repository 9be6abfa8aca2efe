// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The v7 reader and verifier behind ftracectl info/verify, and the metadata
 * parser behind extract, fed damaged files.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "lib/v7-verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v7_reader *r;
	struct v7_meta m = {};
	uint64_t events, pages;
	char problem[512];
	int fd;

	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		v7_verify(fd, &events, &pages, problem, sizeof(problem));
		if (v7_reader_open(fd, &r, problem, sizeof(problem)) >= 0) {
			v7_meta_read(r, &m, problem, sizeof(problem));
			v7_meta_done(&m);
			v7_reader_free(r);
		}
	}
	close(fd);
	return 0;
}
