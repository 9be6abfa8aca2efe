// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A pull-style walk over one CPU region of a v7 file: the reader's
 * foreach_* walks are built on it, and a reader that hands out one event at a
 * time (the babeltrace2 plugin's iterators) holds one per CPU. Same checks as
 * the rest of the reader: every size is bounded by the region and CHUNK_RAW_MAX.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/v7-cursor.h"
#include "lib/v7-reader.h"

/*
 * One CPU region's sub-buffers, pulled a chunk at a time: what a reader that
 * cannot take callbacks (an iterator handing out one event at a time) walks.
 */
struct v7_cursor {
	struct v7_reader *r;
	const struct v7_reader_cpu *c;
	uint64_t off, end;     /* next chunk record; end of the region */
	uint32_t count, k;     /* chunk records in a compressed region; next one */
	uint8_t *in, *out;     /* the record whole (header, then frame); its pages */
	size_t in_cap, out_cap;
};

struct v7_cursor *v7_cursor_free(struct v7_cursor *cur)
{
	if (!cur)
		return NULL;
	free(cur->in);
	free(cur->out);
	free(cur);
	return NULL;
}

int v7_cursor_new(struct v7_reader *r, size_t i, struct v7_cursor **ret)
{
	const struct v7_reader_cpu *c = v7_reader_cpu(r, i);
	_cleanup_(v7_cursor_freep) struct v7_cursor *cur = NULL;
	uint8_t word[4];
	int err;

	if (!c)
		return -EINVAL;
	cur = calloc(1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	*cur = (struct v7_cursor){ .r = r, .c = c, .off = c->offset, .end = c->offset + c->size };
	if (c->compressed && c->size > 0) {
		if (c->size < 4)
			return v7_reader_fail(r, "CPU %u: chunk stream too short", c->cpu);
		err = loop_pread_exact(v7_reader_fd(r), word, 4, cur->off);
		if (err < 0)
			return err;
		cur->count = get_le32(word);
		cur->off += 4;
		/*
		 * trace-cmd before 3.2 stores the stream length without the count
		 * word; libtracecmd uses the size only as a bound, so allow those 4 bytes.
		 */
		if (v7_reader_in_file(r, c->offset, c->size + 4))
			cur->end += 4;
	}
	*ret = TAKE_PTR(cur);
	return 0;
}

static int cursor_grow(struct v7_cursor *cur, size_t n_in, size_t n_out)
{
	if (n_in <= cur->in_cap && n_out <= cur->out_cap)
		return 0;
	free(cur->in);
	free(cur->out);
	cur->in_cap = MAX(cur->in_cap, n_in);
	cur->out_cap = MAX(cur->out_cap, n_out);
	cur->in = malloc(cur->in_cap);
	cur->out = malloc(cur->out_cap);
	if (!cur->in || !cur->out) {
		cur->in_cap = cur->out_cap = 0;
		return -ENOMEM;
	}
	return 0;
}

static int cursor_next_chunk(struct v7_cursor *cur, const uint8_t **ret_record,
			     size_t *ret_n_record, const uint8_t **ret_pages, size_t *ret_n_pages)
{
	struct v7_reader *r = cur->r;
	const struct v7_reader_cpu *c = cur->c;
	uint8_t word[CHUNK_HDR_SIZE];
	uint32_t csize, usize;
	size_t got;
	int err;

	if (cur->k >= cur->count)
		return 0;
	if (cur->end - cur->off < CHUNK_HDR_SIZE)
		return v7_reader_fail(r, "CPU %u: chunk %u runs past the CPU data", c->cpu, cur->k);
	err = loop_pread_exact(v7_reader_fd(r), word, CHUNK_HDR_SIZE, cur->off);
	if (err < 0)
		return err;
	cur->off += CHUNK_HDR_SIZE;
	if (chunk_record_check(word, cur->end - cur->off, c->page_size, &csize, &usize) < 0)
		return v7_reader_fail(r, "CPU %u: chunk %u has bad sizes (%u -> %u)", c->cpu, cur->k,
			    get_le32(word), get_le32(word + 4));
	err = cursor_grow(cur, CHUNK_HDR_SIZE + (size_t)csize, usize);
	if (err < 0)
		return err;
	/* The record whole (header, then frame), for a caller that copies it. */
	memcpy(cur->in, word, CHUNK_HDR_SIZE);
	err = loop_pread_exact(v7_reader_fd(r), cur->in + CHUNK_HDR_SIZE, csize, cur->off);
	if (err < 0)
		return err;
	cur->off += csize;
	err = decompress_frame(cur->in + CHUNK_HDR_SIZE, csize, cur->out, usize, &got);
	if (err < 0 || got != usize)
		return v7_reader_fail(r, "CPU %u: chunk %u at %" PRIu64 " does not decompress (checksum or "
			    "damage)", c->cpu, cur->k, cur->off - csize - 8);
	cur->k++;
	*ret_record = cur->in;
	*ret_n_record = CHUNK_HDR_SIZE + (size_t)csize;
	*ret_pages = cur->out;
	*ret_n_pages = usize;
	return 1;
}

/* An uncompressed region's pages, a run at a time, without a record. */
static int cursor_next_run(struct v7_cursor *cur, const uint8_t **ret_pages, size_t *ret_n_pages)
{
	uint32_t page_size = cur->c->page_size;
	size_t run = (size_t)page_size * MAX(1u, V7_READER_RAW_RUN / page_size);
	size_t n = (size_t)MIN((uint64_t)run, cur->end - cur->off) / page_size * page_size;
	int err;

	if (n == 0)
		return 0;
	err = cursor_grow(cur, 0, run);
	if (err < 0)
		return err;
	err = loop_pread_exact(v7_reader_fd(cur->r), cur->out, n, cur->off);
	if (err < 0)
		return err;
	cur->off += n;
	*ret_pages = cur->out;
	*ret_n_pages = n;
	return 1;
}

/**
 * v7_cursor_next() - the next chunk of a CPU region: its record and its sub-buffers.
 * @cur: cursor
 * @ret_record, @ret_n_record: the compressed record whole (NULL, 0 for an
 *      uncompressed file); valid until the next call
 * @ret_pages, @ret_n_pages: the sub-buffers, a whole number of pages; valid
 *      until the next call
 *
 * Return: 1 with a chunk, 0 at the end of the region, -EBADMSG for damaged
 * data (v7_reader_error() says what), or -errno.
 */
int v7_cursor_next(struct v7_cursor *cur, const uint8_t **ret_record, size_t *ret_n_record,
		   const uint8_t **ret_pages, size_t *ret_n_pages)
{
	if (cur->c->size == 0)
		return 0;
	if (cur->c->compressed)
		return cursor_next_chunk(cur, ret_record, ret_n_record, ret_pages, ret_n_pages);
	*ret_record = NULL;
	*ret_n_record = 0;
	return cursor_next_run(cur, ret_pages, ret_n_pages);
}

static int foreach_raw_page(struct v7_reader *r, const struct v7_reader_cpu *c, v7_page_fn fn,
			    void *userdata)
{
	uint8_t *page = malloc(c->page_size);
	int err = 0;

	if (!page)
		return -ENOMEM;
	for (uint64_t off = 0; off < c->size && err == 0; off += c->page_size) {
		err = loop_pread_exact(v7_reader_fd(r), page, c->page_size, c->offset + off);
		if (err == 0)
			err = fn(page, c->page_size, userdata);
	}
	free(page);
	return err;
}

static int foreach_chunk(struct v7_reader *r, size_t i, v7_chunk_fn fn, void *userdata)
{
	_cleanup_(v7_cursor_freep) struct v7_cursor *cur = NULL;
	const uint8_t *record, *pages;
	size_t n_record, n_pages;
	int err;

	err = v7_cursor_new(r, i, &cur);
	while (err >= 0) {
		err = v7_cursor_next(cur, &record, &n_record, &pages, &n_pages);
		if (err <= 0)
			break;
		err = fn(record, n_record, pages, n_pages, v7_reader_cpu(r, i)->page_size, userdata);
		if (err != 0)
			break;
	}
	return err;
}

struct page_walk {
	v7_page_fn fn;
	void *userdata;
};

static int chunk_pages(const uint8_t *record, size_t n_record, const uint8_t *pages,
		       size_t n_pages, uint32_t page_size, void *userdata)
{
	const struct page_walk *w = userdata;
	int err = 0;

	for (size_t p = 0; p < n_pages && err == 0; p += page_size)
		err = w->fn(pages + p, page_size, w->userdata);
	return err;
}

static int foreach_chunk_page(struct v7_reader *r, size_t i, v7_page_fn fn, void *userdata)
{
	struct page_walk w = { fn, userdata };

	return foreach_chunk(r, i, chunk_pages, &w);
}

/**
 * v7_reader_foreach_chunk() - call @fn for every chunk of one CPU region, in order.
 * @r: reader
 * @i: index into the list of CPU regions (not the CPU number)
 * @fn: callback with the compressed record whole (header and frame; NULL for an
 *      uncompressed file) and its sub-buffers; a non-zero return stops the walk
 * @userdata: passed to @fn
 *
 * Return: 0, what @fn returned, -EBADMSG for damaged data, or -errno.
 */
int v7_reader_foreach_chunk(struct v7_reader *r, size_t i, v7_chunk_fn fn, void *userdata)
{
	const struct v7_reader_cpu *c = v7_reader_cpu(r, i);

	if (!c)
		return -EINVAL;
	if (c->size == 0)
		return 0;
	/* Both through the cursor: an uncompressed region comes in runs without a record. */
	return foreach_chunk(r, i, fn, userdata);
}

/**
 * v7_reader_foreach_page() - call @fn for every sub-buffer of one CPU region, in order.
 * @r: reader
 * @i: index into the list of CPU regions of all buffers (not the CPU number)
 * @fn: callback; a non-zero return stops the walk and is returned
 * @userdata: passed to @fn
 *
 * Return: 0, what @fn returned, -EBADMSG for damaged data, or -errno.
 */
int v7_reader_foreach_page(struct v7_reader *r, size_t i, v7_page_fn fn, void *userdata)
{
	const struct v7_reader_cpu *c = v7_reader_cpu(r, i);

	if (!c)
		return -EINVAL;
	if (c->size == 0)
		return 0;
	return c->compressed ? foreach_chunk_page(r, i, fn, userdata) :
			       foreach_raw_page(r, c, fn, userdata);
}
