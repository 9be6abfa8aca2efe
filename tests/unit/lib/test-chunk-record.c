// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Chunk records: a round trip through encode and decode, and every way a
 * header read from a file can lie (zero, past the end, over the limit, not
 * whole pages), each refused before anything is allocated for it.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"

#define PAGE 4096u

static void test_round_trip(void)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	size_t n_raw = 3 * PAGE, n_rec;
	uint8_t *raw = malloc(n_raw), *back = malloc(n_raw);
	uint8_t *rec = malloc(chunk_record_bound(n_raw));
	uint32_t csize, usize;

	assert(raw && back && rec && compressor_new(&c) == 0);
	for (size_t i = 0; i < n_raw; i++)
		raw[i] = (uint8_t)(i * 7 / 13);
	assert(chunk_record_encode(c, 3, raw, n_raw, rec, chunk_record_bound(n_raw), &n_rec) == 0);
	assert(n_rec > CHUNK_HDR_SIZE && n_rec < n_raw);
	assert(get_le32(rec) == n_rec - CHUNK_HDR_SIZE && get_le32(rec + 4) == n_raw);
	assert(chunk_record_check(rec, n_rec - CHUNK_HDR_SIZE, PAGE, &csize, &usize) == 0);
	assert(csize == n_rec - CHUNK_HDR_SIZE && usize == n_raw);
	assert(chunk_record_decode(rec, n_rec, PAGE, back, n_raw) == 0);
	assert(memcmp(raw, back, n_raw) == 0);

	/* The frame's checksum catches a flipped byte; a wrong size is refused. */
	rec[n_rec / 2] ^= 0x40;
	assert(chunk_record_decode(rec, n_rec, PAGE, back, n_raw) < 0);
	rec[n_rec / 2] ^= 0x40;
	assert(chunk_record_decode(rec, n_rec, PAGE, back, n_raw - PAGE) == -EBADMSG);
	assert(chunk_record_decode(rec, n_rec - 1, PAGE, back, n_raw) == -EBADMSG);
	assert(chunk_record_decode(rec, 4, PAGE, back, n_raw) == -EBADMSG);

	/* Nothing a record cannot claim is encoded. */
	assert(chunk_record_encode(c, 3, raw, 0, rec, chunk_record_bound(n_raw), &n_rec) == -EINVAL);
	assert(chunk_record_encode(c, 3, raw, n_raw, rec, 4, &n_rec) == -EINVAL);
	free(raw);
	free(back);
	free(rec);
}

static void header(uint8_t *h, uint32_t csize, uint32_t usize)
{
	put_le32(h, csize);
	put_le32(h + 4, usize);
}

static void test_check_bounds(void)
{
	uint32_t csize = 77, usize = 77;
	uint8_t h[CHUNK_HDR_SIZE];

	header(h, 100, 2 * PAGE);
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == 0);
	assert(csize == 100 && usize == 2 * PAGE);

	csize = usize = 77;
	header(h, 101, 2 * PAGE); /* frame runs past what follows */
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == -EBADMSG);
	header(h, 0, 2 * PAGE);
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == -EBADMSG);
	header(h, 100, 0);
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == -EBADMSG);
	header(h, 100, PAGE + 1); /* not whole sub-buffers */
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == -EBADMSG);
	header(h, 100, CHUNK_RAW_MAX + PAGE); /* claims more than any reader allocates */
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == -EBADMSG);
	header(h, 100, CHUNK_RAW_MAX);
	assert(chunk_record_check(h, 100, PAGE, &csize, &usize) == 0);
	header(h, 100, 2 * PAGE);
	assert(chunk_record_check(h, 100, 0, &csize, &usize) == -EBADMSG);
	header(h, UINT32_MAX, 2 * PAGE);
	assert(chunk_record_check(h, UINT64_MAX, PAGE, &csize, &usize) == 0);
}

/*
 * compressor_for_chunks(): a window over the whole chunk with the tables
 * of a small input. 256 KiB of noise, twice: only a window reaching
 * 256 KiB back finds the repeat; zstd's own parameters for the chunk find
 * it too, with a context as large or larger.
 */
static void test_chunk_window_and_tables(void)
{
	_cleanup_(compressor_freep) struct compressor *plain = NULL, *chunks = NULL;
	const size_t half = 256 * 1024, n = 2 * half, bound = compress_bound(n);
	uint8_t *src = malloc(n), *dst = malloc(bound), *back = malloc(n);
	size_t n_dst, got;
	uint64_t x = 88172645463325252ull;

	assert(src && dst && back);
	for (size_t i = 0; i < half; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		src[i] = (uint8_t)x;
	}
	memcpy(src + half, src, half);
	assert(compressor_new(&plain) == 0 && compressor_new(&chunks) == 0);
	assert(compressor_for_chunks(chunks) == 0);
	for (int level = 3; level >= 1; level -= 2) {
		assert(compress_frame(plain, level, src, n, dst, bound, &n_dst) == 0);
		assert(compress_frame(chunks, level, src, n, dst, bound, &n_dst) == 0);
		assert(n_dst < half + half / 16);
		assert(level != 3 || compressor_memory(chunks) < compressor_memory(plain) * 3 / 4);
		assert(decompress_frame(dst, n_dst, back, n, &got) == 0 && got == n);
		assert(memcmp(src, back, n) == 0);
	}
	/*
	 * Never more than zstd's own for the chunk: at level 1 those tables are
	 * the smaller (fresh contexts: zstd keeps a larger workspace it had).
	 */
	plain = compressor_free(plain);
	chunks = compressor_free(chunks);
	assert(compressor_new(&plain) == 0 && compressor_new(&chunks) == 0);
	assert(compressor_for_chunks(chunks) == 0);
	assert(compress_frame(plain, 1, src, n, dst, bound, &n_dst) == 0);
	assert(compress_frame(chunks, 1, src, n, dst, bound, &n_dst) == 0);
	assert(compressor_memory(chunks) <= compressor_memory(plain));
	free(src);
	free(dst);
	free(back);
}

int main(void)
{
	test_round_trip();
	test_check_bounds();
	test_chunk_window_and_tables();
	return 0;
}
