// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-chunk-cost: what compressing one CPU's sub-buffers costs, in
 * 512 KiB chunks as the capture makes them, three ways on the same bytes:
 *
 *   ftraced     the capture's compressor (lib/compress.c, compressor_for_chunks():
 *               its tables, a window over the chunk, the content checksum);
 *   zstd+check  zstd's own parameters for the level and chunk, with the checksum;
 *   zstd        the same without it: what bench/ftraced-physical does
 *               (ZSTD_compressCCtx() takes no checksum, so ZSTD_compress2()).
 *
 * Takes a file of raw sub-buffers, e.g. one CPU's output of
 * ftraced-physical decompressed with `zstd -d`. Runs PASSES rounds (the
 * first one unmeasured, to warm caches), the three ways in turn, and
 * prints thread CPU per raw MB and per 40-byte marker event, and the bytes
 * each way wrote. Compressing from a warm cache, it shows the difference
 * between the ways, not what the capture pays on cold pages.
 *
 * Usage: ftraced-chunk-cost PAGES LEVEL [PASSES]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "daemon/base/bounds.h"
#include "lib/compress.h"
#include "lib/io-util.h"

#define CHUNK_BYTES CHUNK_TARGET_BYTES /* the capture's chunk */
#define INPUT_MAX (UINT64_C(1) << 32)
#define PASSES_MAX 100
#define MARKER_BYTES 40.0 /* a marker event in the ring, header included, roughly */

enum way { WAY_FTRACED, WAY_ZSTD_CHECK, WAY_ZSTD, _WAY_MAX };

static const char *const way_names[_WAY_MAX] = { "ftraced", "zstd+check", "zstd" };

static double thread_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One pass over @in in chunks; returns the bytes written, or 0 on an error. */
static size_t pass(enum way w, struct compressor *ft, ZSTD_CCtx *check, ZSTD_CCtx *plain,
		   int level, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	size_t total = 0;

	for (size_t off = 0; off + CHUNK_BYTES <= n; off += CHUNK_BYTES) {
		size_t k;

		if (w == WAY_FTRACED) {
			if (compress_frame(ft, level, in + off, CHUNK_BYTES, out, cap, &k) < 0)
				return 0;
		} else {
			k = ZSTD_compress2(w == WAY_ZSTD ? plain : check, out, cap, in + off,
					   CHUNK_BYTES);
			if (ZSTD_isError(k))
				return 0;
		}
		total += k;
	}
	return total;
}

int main(int argc, char **argv)
{
	double cpu[_WAY_MAX] = { 0 };
	size_t written[_WAY_MAX] = { 0 };
	struct compressor *ft = NULL;
	ZSTD_CCtx *check, *plain;
	uint8_t *in, *out;
	int level, passes, fd, r;
	size_t n, cap;
	struct stat st;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s PAGES LEVEL [PASSES]\n", argv[0]);
		return 2;
	}
	level = atoi(argv[2]);
	passes = argc > 3 ? atoi(argv[3]) : 6;
	if (level < 1 || level > ZSTD_maxCLevel() || passes < 2 || passes > PASSES_MAX) {
		fprintf(stderr, "LEVEL 1..%d, PASSES 2..%d\n", ZSTD_maxCLevel(), PASSES_MAX);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (st.st_size < (off_t)CHUNK_BYTES || (uint64_t)st.st_size > INPUT_MAX) {
		fprintf(stderr, "%s: want 512 KiB to 4 GiB of sub-buffers\n", argv[1]);
		return 1;
	}
	n = (size_t)st.st_size;
	cap = ZSTD_compressBound(CHUNK_BYTES);
	in = malloc(n);
	out = malloc(cap);
	check = ZSTD_createCCtx();
	plain = ZSTD_createCCtx();
	if (!in || !out || !check || !plain || compressor_new(&ft) < 0 ||
	    compressor_for_chunks(ft) < 0 ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(check, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(check, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(plain, ZSTD_c_compressionLevel, level))) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	r = loop_read_exact(fd, in, n);
	close(fd);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	for (int p = 0; p < passes; p++) {
		for (int k = 0; k < _WAY_MAX; k++) {
			/* Each way goes first in turn: no way always follows the same one. */
			enum way w = (enum way)((k + p) % _WAY_MAX);
			double t0 = thread_cpu_s();

			written[w] = pass(w, ft, check, plain, level, in, n, out, cap);
			if (written[w] == 0) {
				fprintf(stderr, "%s: compression failed\n", way_names[w]);
				return 1;
			}
			if (p > 0)
				cpu[w] += thread_cpu_s() - t0;
		}
	}
	printf("%zu raw bytes in %u-byte chunks, level %d, %d passes measured\n",
	       n / CHUNK_BYTES * CHUNK_BYTES, CHUNK_BYTES, level, passes - 1);
	for (int w = 0; w < _WAY_MAX; w++) {
		double per_byte = cpu[w] / (passes - 1) / (double)(n / CHUNK_BYTES * CHUNK_BYTES);

		printf("%-10s %7.3f ms/MB %6.1f ns/event %10zu bytes\n", way_names[w],
		       per_byte * 1e9, per_byte * MARKER_BYTES * 1e9, written[w]);
	}
	compressor_free(ft);
	ZSTD_freeCCtx(check);
	ZSTD_freeCCtx(plain);
	free(in);
	free(out);
	return 0;
}
