// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A KALLSYMS section's body, sealed (compressed) straight from the text's
 * fd as it is read: the kernel's own symbols, which do not change within a
 * boot, in a frame of their own that later bodies reuse, and the rest
 * (modules, BPF) compressed anew. The v7 writer takes the body by
 * reference (v7_file.kallsyms_sealed).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-writer.h"

/* Room left before the text's frame for the frame of the u32 size (about 17 bytes). */
#define SEAL_HEAD_MAX 64u

/* @n bytes of @from at @from_off into @to at @to_off: a frame made before, reused. */
static int copy_region(int from, uint64_t from_off, size_t n, int to, uint64_t to_off)
{
	_cleanup_free_ uint8_t *buf = malloc(64 * 1024);
	int r;

	if (!buf)
		return -ENOMEM;
	for (size_t done = 0; done < n; ) {
		size_t k = MIN(n - done, (size_t)64 * 1024);

		r = loop_pread_exact(from, buf, k, from_off + done);
		if (r >= 0)
			r = loop_pwrite(to, buf, k, to_off + done);
		if (r < 0)
			return r;
		done += k;
	}
	return 0;
}

/**
 * v7_seal_kallsyms() - write a compressed KALLSYMS section body, reading the text as it goes.
 * @c: this thread's compressor (compress_fd() leaves @window_log set on it)
 * @level: zstd level for the text (after the head, if @head)
 * @window_log: see compress_fd()
 * @text_fd: the text (/proc/kallsyms), read from its start; its size is unknown until read
 * @drop: its lines left out of the section (symbols no address can name), or NULL
 * @max: most text bytes accepted
 * @head: NULL, or the text's first part, which does not change (the kernel's
 *        own symbols, before any module's): its own frame, made at its level
 *        or reused from an earlier body; on return, where it is in @out_fd
 * @out_fd: a file of its own for the body, written from offset 0
 * @ret: where in @out_fd the body is, for v7_file.kallsyms_sealed
 * @ret_n_text: the text's size
 *
 * The body is one block, u32 csize, u32 usize, then the frames: the u32
 * size that starts the section, the head's if any, and the rest of the
 * text. zstd (and every reader) decompresses concatenated frames as one.
 * The text is compressed as it is read, after room for the first frame,
 * which is made once its size is known and written right before it; the
 * body starts where that frame's block header lands. Neither the text nor
 * its frames are ever in memory.
 *
 * Return: 0, -EFBIG, -EINVAL, -ENOMEM, -EIO (also: the head read differently
 * than said), or a read's or write's -errno.
 */
int v7_seal_kallsyms(struct compressor *c, int level, unsigned window_log, int text_fd,
		     line_drop_fn drop, size_t max, struct v7_seal_head *head, int out_fd,
		     struct v7_region *ret, size_t *ret_n_text)
{
	const uint64_t text_off = V7_BLOCK_HDR_SIZE + SEAL_HEAD_MAX;
	uint8_t size_le[4], head_frame[V7_BLOCK_HDR_SIZE + SEAL_HEAD_MAX];
	size_t n_head_frame = 0, n_head = 0, n_text_frame, n_text, n_first;
	int r;

	max = MIN(max, (size_t)UINT32_MAX - 4);
	if (head && head->reuse.size > 0) {
		r = copy_region(head->reuse.fd, head->reuse.offset, head->reuse.size, out_fd,
				text_off);
		n_head_frame = head->reuse.size;
		n_head = head->n_text;
	} else if (head) {
		r = compress_fd(c, head->level, window_log, text_fd, drop, 0, head->n_text, max,
				out_fd, text_off, &n_head_frame, &n_head);
		if (r >= 0 && n_head != head->n_text)
			r = -EIO;
	} else {
		r = 0;
	}
	if (r < 0)
		return r;
	if (head)
		head->reuse = (struct v7_region){ .fd = out_fd, .offset = text_off,
						  .size = n_head_frame };
	r = compress_fd(c, level, window_log, text_fd, drop, n_head, SIZE_MAX, max - n_head,
			out_fd, text_off + n_head_frame, &n_text_frame, &n_text);
	if (r < 0)
		return r;
	n_text_frame += n_head_frame;
	n_text += n_head;
	if (n_text_frame > UINT32_MAX - SEAL_HEAD_MAX)
		return -EFBIG;
	put_le32(size_le, (uint32_t)n_text);
	r = compress_frame(c, 1, size_le, sizeof(size_le), head_frame + V7_BLOCK_HDR_SIZE,
			   SEAL_HEAD_MAX, &n_first);
	if (r < 0)
		return r == -ENOBUFS ? -EIO : r;
	put_le32(head_frame, (uint32_t)(n_first + n_text_frame));
	put_le32(head_frame + 4, (uint32_t)(sizeof(size_le) + n_text));
	/* The block header and the first frame, right up against the text's frames. */
	r = loop_pwrite(out_fd, head_frame, V7_BLOCK_HDR_SIZE + n_first,
			text_off - V7_BLOCK_HDR_SIZE - n_first);
	if (r < 0)
		return r;
	*ret = (struct v7_region){ .fd = out_fd, .offset = text_off - V7_BLOCK_HDR_SIZE - n_first,
				   .size = V7_BLOCK_HDR_SIZE + n_first + n_text_frame };
	*ret_n_text = n_text;
	return 0;
}

