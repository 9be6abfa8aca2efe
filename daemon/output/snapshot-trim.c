// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A flight recorder snapshot trimmed to a common start (--trim): each
 * CPU's chunks lose what is older than the latest time from which every
 * CPU is complete, so no CPU seems idle where it only lost its older
 * data. Owns nothing but the arithmetic over a chunk list and its pages
 * (rb-page.c); the segment's assembler calls it. Pure: unit-tested
 * without the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/output/snapshot-trim.h"
#include "lib/chunk-record.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"

/**
 * snapshot_complete_from() - from when a CPU's chunks hold everything.
 * @l: the CPU's chunks, oldest first
 * @older_lost: data before the first chunk was dropped (evicted, or overwritten)
 *
 * Return: the first chunk's timestamp, or 0 for "since capture began".
 */
uint64_t snapshot_complete_from(const struct chunk_list *l, bool older_lost)
{
	return older_lost && l->n > 0 ? l->chunks[0]->first_ts : 0;
}

static void drop_first(struct chunk_list *l)
{
	l->bytes -= l->chunks[0]->size;
	l->raw_bytes -= l->chunks[0]->raw_size;
	chunk_unref(l->chunks[0]);
	memmove(l->chunks, l->chunks + 1, (l->n - 1) * sizeof(*l->chunks));
	l->n--;
}

/* A chunk of @raw (a chunk record with zstd, else the sub-buffers as they are), or NULL. */
static struct chunk *make_chunk(const struct trim_format *fmt, const uint8_t *raw, size_t n)
{
	struct chunk *c;
	size_t csize;

	if (!fmt->zstd) {
		c = chunk_new(n);
		if (c)
			memcpy(c->data, raw, n);
	} else {
		c = chunk_new(chunk_record_bound(n));
		if (c && chunk_record_encode(fmt->zc, fmt->level, raw, n, c->data, c->size,
					     &csize) < 0)
			c = chunk_unref(c);
		if (c)
			c->size = (uint32_t)csize;
	}
	if (c) {
		c->raw_size = (uint32_t)n;
		c->first_ts = get_le64(raw);
		c->last_ts = get_le64(raw + n - fmt->page_size);
	}
	return c;
}

/**
 * snapshot_trim() - drop a CPU's events older than @start.
 * @l: its chunks, oldest first; changed in place
 * @start: the first timestamp to keep
 * @fmt: how its chunks are made
 *
 * Whole chunks first, then whole pages and events of the first chunk
 * left, which is rebuilt (recompressed with zstd); later chunks are
 * shared, untouched.
 *
 * Return: 0, or -errno (a chunk that does not decode, out of memory).
 */
int snapshot_trim(struct chunk_list *l, uint64_t start, const struct trim_format *fmt)
{
	uint32_t page_size = fmt->page_size;
	_cleanup_free_ uint8_t *raw = NULL;
	struct chunk *first, *rebuilt;
	size_t n_raw, keep_from = 0;
	bool changed = false;
	uint64_t next_ts;
	int r;

	while (l->n > 1 && l->chunks[1]->first_ts < start)
		drop_first(l);
	if (l->n == 0)
		return 0;
	first = l->chunks[0];
	n_raw = first->raw_size;
	raw = malloc(n_raw);
	if (!raw)
		return -ENOMEM;
	if (fmt->zstd) {
		r = chunk_record_decode(first->data, first->size, page_size, raw, n_raw);
		if (r < 0)
			return r;
	} else {
		memcpy(raw, first->data, n_raw);
	}
	/* Pages whose successor starts before @start end before it too. */
	next_ts = l->n > 1 ? l->chunks[1]->first_ts : UINT64_MAX;
	for (size_t off = 0; off < n_raw; off += page_size) {
		uint64_t after = off + page_size < n_raw ? get_le64(raw + off + page_size) : next_ts;
		struct rb_page_info info;

		if (after < start) {
			keep_from = off + page_size;
			continue;
		}
		r = rb_page_parse(raw + off, page_size, &info);
		if (r >= 0)
			r = rb_page_trim(raw + off, page_size, start);
		if (r < 0)
			return r;
		if (r == 0)
			keep_from = off + page_size;
		changed = (uint32_t)r != info.data_size;
		break;
	}
	if (keep_from == 0 && !changed)
		return 0; /* nothing was older than @start */
	if (keep_from == n_raw) {
		drop_first(l);
		return 0;
	}
	rebuilt = make_chunk(fmt, raw + keep_from, n_raw - keep_from);
	if (!rebuilt)
		return -ENOMEM;
	l->bytes += (uint64_t)rebuilt->size - first->size;
	l->raw_bytes -= first->raw_size - rebuilt->raw_size;
	chunk_unref(first);
	l->chunks[0] = rebuilt;
	return 0;
}
