// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zstd, behind a small interface: one compressor per thread (a ZSTD_CCtx is
 * not thread-safe), one whole frame per call. Every frame carries the zstd
 * content checksum, so a damaged chunk is a decode error for every reader
 * (libtracecmd uses ZSTD_decompressDCtx, which verifies it) instead of
 * silently wrong events, and our own verifier and crash recovery can check
 * chunks without any other framing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * For ZSTD_getCParams() only: the parameters zstd would pick for a level
 * and an input size. The shared library exports it (it has since 1.0);
 * every parameter set from it is part of the stable API.
 */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/io-util.h"

/* compress_fd()'s output buffer: what zstd flushes in one go (ZSTD_CStreamOutSize() is 128 KiB). */
#define COMPRESS_FD_OUT_BYTES (64u * 1024u)

struct compressor {
	ZSTD_CCtx *cctx;
	int level;
	bool chunk_tables; /* compressor_for_chunks() */
};

/* Sets @level, with compressor_for_chunks()'s parameters on top if it was called. */
static int set_level(struct compressor *c, int level)
{
	ZSTD_compressionParameters p, whole;

	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level)))
		return -EINVAL;
	c->level = level;
	if (!c->chunk_tables)
		return 0;
	p = ZSTD_getCParams(level, COMPRESS_CHUNK_TABLES_FOR, 0);
	/* Never larger than zstd's own for a whole chunk: at level 1 those are smaller. */
	whole = ZSTD_getCParams(level, 1u << COMPRESS_CHUNK_WINDOW_LOG, 0);
	p.hashLog = MIN(p.hashLog, whole.hashLog);
	p.chainLog = MIN(p.chainLog, whole.chainLog);
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, COMPRESS_CHUNK_WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_hashLog, (int)p.hashLog)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_chainLog, (int)p.chainLog)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_searchLog, (int)p.searchLog)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_minMatch, (int)p.minMatch)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_targetLength, (int)p.targetLength)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_strategy, (int)p.strategy)))
		return -EINVAL;
	return 0;
}

/**
 * compressor_new() - allocate a compression context.
 * @ret: the new compressor
 *
 * Return: 0 or -ENOMEM.
 */
int compressor_new(struct compressor **ret)
{
	struct compressor *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cctx = ZSTD_createCCtx();
	if (!c->cctx) {
		free(c);
		return -ENOMEM;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1)) ||
	    set_level(c, ZSTD_CLEVEL_DEFAULT) < 0) {
		compressor_free(c);
		return -EINVAL;
	}
	*ret = c;
	return 0;
}

/**
 * compressor_for_chunks() - give each frame a window over all of it, and small tables.
 * @c: a compressor for ring-buffer chunks of up to 1 << COMPRESS_CHUNK_WINDOW_LOG bytes
 *
 * zstd sizes its window and tables by the input: for a 512 KiB chunk at
 * level 3, a 512 KiB window and 768 KiB of tables. On ring-buffer pages the
 * window is what pays (a marker repeats hundreds of KiB later); large
 * tables only cost memory and cache misses, which the capture pays in full
 * (between two chunks, the traced programs have run on that CPU). So every
 * level gets the tables (and match finder) zstd picks for a
 * COMPRESS_CHUNK_TABLES_FOR input, and a window as large as the frame
 * (zstd shrinks it to the input). The same 120 MB of marker pages, in
 * 512 KiB chunks (bench/README.md):
 *
 *   level 3, zstd's own parameters   8.76 MB  context 1.30 MB
 *   level 3, tables for 128 KiB      8.77 MB           0.91 MB
 *   level 3, tables for 16 KiB       8.80 MB           0.71 MB, 4-5% less CPU in the daemon
 *   level 1, tables for 128 KiB      8.72 MB           0.55 MB
 *   level 1, tables for 16 KiB       8.53 MB           0.65 MB
 *
 * against 9.16 MB in 128 KiB chunks at level 3. Only at level 1 does zstd
 * pick smaller tables for the whole chunk (a 2^14 hash table, not 2^15);
 * those are kept, with the 16 KiB input's match length: 7-8% less CPU in
 * the daemon for the same size.
 *
 * Return: 0 or -EINVAL.
 */
int compressor_for_chunks(struct compressor *c)
{
	c->chunk_tables = true;
	return set_level(c, c->level);
}

struct compressor *compressor_free(struct compressor *c)
{
	if (!c)
		return NULL;
	ZSTD_freeCCtx(c->cctx);
	free(c);
	return NULL;
}

/* The context's memory now (its tables, sized by the last frame's parameters). */
size_t compressor_memory(const struct compressor *c)
{
	return ZSTD_sizeof_CCtx(c->cctx);
}

size_t compress_bound(size_t n)
{
	return ZSTD_compressBound(n);
}

/**
 * compress_frame() - compress @n_src bytes into one checksummed zstd frame.
 * @c: this thread's compressor
 * @level: zstd level
 * @src: input
 * @n_src: input size
 * @dst: output buffer
 * @n_dst: its size; compress_bound(@n_src) always suffices
 * @ret_size: the frame size
 *
 * Return: 0, -EINVAL for a bad level, or -ENOBUFS if @dst is too small.
 */
int compress_frame(struct compressor *c, int level, const void *src, size_t n_src,
		   void *dst, size_t n_dst, size_t *ret_size)
{
	size_t r;

	if (level != c->level && set_level(c, level) < 0)
		return -EINVAL;
	r = ZSTD_compress2(c->cctx, dst, n_dst, src, n_src);
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? -ENOBUFS : -EIO;
	*ret_size = r;
	return 0;
}

/**
 * compress_frame2() - compress @head then @tail as one frame, without joining them.
 * @c: this thread's compressor
 * @level: zstd level
 * @head: first part (a small header)
 * @n_head: its size
 * @tail: second part (a large blob: kallsyms is megabytes, not worth a copy)
 * @n_tail: its size
 * @dst: output buffer of at least compress_bound(@n_head + @n_tail) bytes
 * @n_dst: its size
 * @ret_size: the frame size
 *
 * Return: 0, -EINVAL for a bad level, -ENOBUFS if @dst is too small, or -EIO.
 */
int compress_frame2(struct compressor *c, int level, const void *head, size_t n_head,
		    const void *tail, size_t n_tail, void *dst, size_t n_dst, size_t *ret_size)
{
	ZSTD_outBuffer out = { .dst = dst, .size = n_dst };
	ZSTD_inBuffer in = { .src = head, .size = n_head };
	size_t r;

	if (level != c->level && set_level(c, level) < 0)
		return -EINVAL;
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	/* The known size lets zstd size its window to the input, and records it in the frame. */
	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(c->cctx, n_head + n_tail)))
		return -EIO;
	while (in.pos < in.size) {
		r = ZSTD_compressStream2(c->cctx, &out, &in, ZSTD_e_continue);
		if (ZSTD_isError(r))
			return -EIO;
		if (out.pos == out.size)
			return -ENOBUFS;
	}
	in = (ZSTD_inBuffer){ .src = tail, .size = n_tail };
	do {
		r = ZSTD_compressStream2(c->cctx, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(r))
			return -EIO;
		if (r > 0 && out.pos == out.size)
			return -ENOBUFS;
	} while (r > 0);
	*ret_size = out.pos;
	return 0;
}

/**
 * decompress_frame() - decompress exactly one frame, verifying its checksum.
 * @src: the frame
 * @n_src: its size
 * @dst: output buffer
 * @n_dst: output capacity (the chunk's declared raw size)
 * @ret_size: bytes produced
 *
 * Return: 0, or -EBADMSG for a damaged or oversized frame.
 */
int decompress_frame(const void *src, size_t n_src, void *dst, size_t n_dst, size_t *ret_size)
{
	size_t r;

	r = ZSTD_decompress(dst, n_dst, src, n_src);
	if (ZSTD_isError(r))
		return -EBADMSG;
	*ret_size = r;
	return 0;
}

/**
 * compress_fd() - compress @in_fd from its start to its end into one frame in @out_fd,
 *                 never holding the text or the frame.
 * @c: this thread's compressor; a @window_log stays set on it for its later frames,
 *     so give it one of its own (kallsyms.c does)
 * @level: zstd level
 * @window_log: 0, or the log2 of zstd's window: its tables are sized to match,
 *              so the context takes about 5 << @window_log bytes instead of the
 *              level's megabytes (its size is unknown, so zstd cannot size them)
 * @in_fd: the file (/proc/kallsyms: its size is unknown until read)
 * @drop: lines of it left out, or NULL (struct line_reader)
 * @skip: kept bytes passed over before the frame's first
 * @take: most kept bytes the frame takes after them (SIZE_MAX: to the end)
 * @max: most raw bytes accepted (of those kept)
 * @out_fd: where the frame goes, from @out_offset on (its file position is not used)
 * @out_offset: where in @out_fd
 * @ret_size: the frame's size
 * @ret_raw: bytes kept
 *
 * Return: 0, -EFBIG past @max, -EINVAL, -ENOMEM, -EIO, or a read's or write's -errno.
 */
int compress_fd(struct compressor *c, int level, unsigned window_log, int in_fd,
		line_drop_fn drop, size_t skip, size_t take, size_t max, int out_fd,
		uint64_t out_offset, size_t *ret_size, size_t *ret_raw)
{
	uint8_t in_buf[64 * 1024];
	_cleanup_free_ uint8_t *out_buf = malloc(COMPRESS_FD_OUT_BYTES);
	_cleanup_free_ struct line_reader *lr = malloc(sizeof(*lr));
	size_t raw = 0, written = 0, z = 0;
	bool eof = false;
	int r;

	if (!out_buf || !lr)
		return -ENOMEM;
	if (lseek(in_fd, 0, SEEK_SET) < 0)
		return negative_errno();
	line_reader_init(lr, in_fd, drop);
	c->level = level;
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level)) ||
	    (window_log > 0 &&
	     (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog, (int)window_log)) ||
	      ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_hashLog, (int)window_log - 1)) ||
	      ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_chainLog, (int)window_log - 1)))))
		return -EINVAL;
	/* What comes before the part wanted is read and let go. */
	while (skip > 0) {
		ssize_t n = line_reader_read(lr, in_buf, MIN(skip, sizeof(in_buf)));

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO; /* shorter than what was skipped: it changed meanwhile */
		skip -= (size_t)n;
	}
	while (!eof) {
		ssize_t n = take > raw ? line_reader_read(lr, in_buf, MIN(take - raw, sizeof(in_buf)))
				       : 0;
		ZSTD_inBuffer in = { .src = in_buf, .size = n > 0 ? (size_t)n : 0 };

		if (n < 0)
			return (int)n;
		if ((raw += in.size) > max)
			return -EFBIG;
		eof = n == 0;
		do {
			ZSTD_outBuffer out = { .dst = out_buf, .size = COMPRESS_FD_OUT_BYTES };

			z = ZSTD_compressStream2(c->cctx, &out, &in, eof ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(z))
				return -EIO;
			r = loop_pwrite(out_fd, out_buf, out.pos, out_offset + written);
			if (r < 0)
				return r;
			written += out.pos;
		} while (in.pos < in.size || (eof && z > 0));
	}
	*ret_size = written;
	*ret_raw = raw;
	return 0;
}

DEFINE_CLEANUP(ZSTD_DCtx *, ZSTD_freeDCtx)

/**
 * frames_equal_fd() - do zstd frames in a file decompress to what another file reads?
 * @frames_fd: the frames, one or more back to back, read with pread()
 * @offset: where they start in @frames_fd
 * @size: their total size
 * @skip: decompressed bytes at the start that are not compared (at most one buffer)
 * @in_fd: read from its start to its end (/proc/kallsyms)
 * @drop: lines of it left out (as compress_fd() left them out), or NULL
 *
 * Both are streamed COMPRESS_FD_OUT_BYTES at a time, neither is held
 * whole: telling that a text is what was compressed before costs its read
 * and a decompression, not a compression (kallsyms.c).
 *
 * Return: 1 if equal, 0 if not, -EBADMSG for damaged or truncated frames,
 * -EINVAL, -ENOMEM, or a read's -errno.
 */
/* Up to @n bytes through the filter: fewer only at the end. */
static ssize_t line_reader_read_full(struct line_reader *lr, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = line_reader_read(lr, buf + got, n - got);

		if (k < 0)
			return k;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

int frames_equal_fd(int frames_fd, uint64_t offset, uint64_t size, size_t skip, int in_fd,
		    line_drop_fn drop)
{
	_cleanup_(ZSTD_freeDCtxp) ZSTD_DCtx *dctx = ZSTD_createDCtx();
	_cleanup_free_ uint8_t *buf = malloc(3 * COMPRESS_FD_OUT_BYTES);
	_cleanup_free_ struct line_reader *lr = malloc(sizeof(*lr));
	uint8_t *zin = buf, *zout = buf + COMPRESS_FD_OUT_BYTES;
	uint8_t *text = buf + 2 * COMPRESS_FD_OUT_BYTES;
	ZSTD_inBuffer in = { .src = zin };
	uint64_t read_so_far = 0;
	size_t hint = 1, from;
	bool out_full = false;
	ssize_t k;

	if (!dctx || !buf || !lr)
		return -ENOMEM;
	if (skip > COMPRESS_FD_OUT_BYTES)
		return -EINVAL;
	if (lseek(in_fd, 0, SEEK_SET) < 0)
		return negative_errno();
	line_reader_init(lr, in_fd, drop);
	for (;;) {
		ZSTD_outBuffer out = { .dst = zout, .size = COMPRESS_FD_OUT_BYTES };

		if (in.pos == in.size && read_so_far < size) {
			size_t want = (size_t)MIN((uint64_t)COMPRESS_FD_OUT_BYTES, size - read_so_far);
			int r = loop_pread_exact(frames_fd, zin, want, offset + read_so_far);

			if (r < 0)
				return r;
			in = (ZSTD_inBuffer){ .src = zin, .size = want };
			read_so_far += want;
		} else if (in.pos == in.size && (!out_full || hint == 0)) {
			break; /* every frame read, and zstd has nothing more to give */
		}
		hint = ZSTD_decompressStream(dctx, &out, &in);
		if (ZSTD_isError(hint))
			return -EBADMSG;
		out_full = out.pos == out.size;
		from = MIN(skip, out.pos);
		skip -= from;
		if (out.pos == from)
			continue;
		k = line_reader_read_full(lr, text, out.pos - from);
		if (k < 0)
			return (int)k;
		if ((size_t)k != out.pos - from || memcmp(text, zout + from, out.pos - from) != 0)
			return 0;
	}
	if (hint != 0)
		return -EBADMSG; /* the last frame ends early */
	k = line_reader_read_full(lr, text, 1);
	return k < 0 ? (int)k : k == 0;
}

const char *compress_version(void)
{
	return ZSTD_versionString();
}
