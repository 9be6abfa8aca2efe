// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The chunk record's framing and bounds, once: the capture workers and
 * crash recovery encode records with chunk_record_encode(); the v7 reader,
 * recovery's spool scan and the flight recorder's trim check every header
 * they read with chunk_record_check() before they allocate or read a byte
 * of what it claims. Pure; thread-safe given one compressor per thread.
 */
#include <errno.h>

#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"

/**
 * chunk_record_bound() - the largest record that @n_raw raw bytes can make.
 * @n_raw: raw bytes
 *
 * Return: header plus zstd's bound.
 */
size_t chunk_record_bound(size_t n_raw)
{
	return CHUNK_HDR_SIZE + compress_bound(n_raw);
}

/**
 * chunk_record_encode() - compress @raw into one record at @dst.
 * @c: the calling thread's compressor
 * @level: zstd level
 * @raw: whole sub-buffers
 * @n_raw: their size, at most CHUNK_RAW_MAX
 * @dst: where the record goes
 * @n_dst: room there (chunk_record_bound(@n_raw) always suffices)
 * @ret_size: the record's size
 *
 * Return: 0, -EINVAL for a size a record cannot hold, or compress_frame()'s error.
 */
int chunk_record_encode(struct compressor *c, int level, const void *raw, size_t n_raw,
			uint8_t *dst, size_t n_dst, size_t *ret_size)
{
	size_t csize;
	int r;

	if (n_raw == 0 || n_raw > CHUNK_RAW_MAX || n_dst < CHUNK_HDR_SIZE)
		return -EINVAL;
	r = compress_frame(c, level, raw, n_raw, dst + CHUNK_HDR_SIZE, n_dst - CHUNK_HDR_SIZE,
			   &csize);
	if (r < 0)
		return r;
	put_le32(dst, (uint32_t)csize);
	put_le32(dst + 4, (uint32_t)n_raw);
	*ret_size = CHUNK_HDR_SIZE + csize;
	return 0;
}

/**
 * chunk_record_check() - read and bound a record header from untrusted bytes.
 * @hdr: CHUNK_HDR_SIZE bytes
 * @n_after: bytes available after the header (the frame must fit in them)
 * @page_size: the sub-buffer size the raw bytes must be a multiple of
 * @ret_csize: the frame's size
 * @ret_usize: the raw size it claims
 *
 * Return: 0, or -EBADMSG when a size is zero, too large or not whole pages.
 */
int chunk_record_check(const uint8_t *hdr, uint64_t n_after, uint32_t page_size,
		       uint32_t *ret_csize, uint32_t *ret_usize)
{
	uint32_t csize = get_le32(hdr), usize = get_le32(hdr + 4);

	if (csize == 0 || csize > n_after || usize == 0 || usize > CHUNK_RAW_MAX ||
	    page_size == 0 || usize % page_size)
		return -EBADMSG;
	*ret_csize = csize;
	*ret_usize = usize;
	return 0;
}

/**
 * chunk_record_decode() - decompress a whole record held in memory.
 * @rec: the record
 * @n_rec: its size
 * @page_size: sub-buffer size
 * @raw: destination
 * @n_raw: must equal the raw size the record claims
 *
 * Return: 0, -EBADMSG if the record is damaged or of another size, or -errno.
 */
int chunk_record_decode(const uint8_t *rec, size_t n_rec, uint32_t page_size, void *raw,
			size_t n_raw)
{
	uint32_t csize, usize;
	size_t got;
	int r;

	if (n_rec < CHUNK_HDR_SIZE)
		return -EBADMSG;
	r = chunk_record_check(rec, n_rec - CHUNK_HDR_SIZE, page_size, &csize, &usize);
	if (r < 0)
		return r;
	if (usize != n_raw || csize != n_rec - CHUNK_HDR_SIZE)
		return -EBADMSG;
	r = decompress_frame(rec + CHUNK_HDR_SIZE, csize, raw, n_raw, &got);
	if (r < 0)
		return r;
	return got == n_raw ? 0 : -EBADMSG;
}
