// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Snapshot trimming over synthetic chunks: after a trim at an event's
 * time, the chunks hold exactly the events from that time on, in order,
 * compressed or not; later chunks are the same objects.
 */
#undef NDEBUG
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/output/snapshot-trim.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"
#include "tests/unit/v7-fixture.h"

#define PAGE 4096u
#define PAGES_PER_CHUNK 4u

/* The pages of @c as chunks of PAGES_PER_CHUNK, as a capture makes them. */
static void make_chunks(const struct cpu_pages *c, const struct trim_format *fmt,
			struct chunk_list *l)
{
	*l = (struct chunk_list){};
	l->chunks = calloc(c->n_pages, sizeof(*l->chunks));
	assert(l->chunks);
	for (size_t pg = 0; pg < c->n_pages; pg += PAGES_PER_CHUNK) {
		size_t n = MIN((size_t)PAGES_PER_CHUNK, c->n_pages - pg) * PAGE, csize = n;
		const uint8_t *raw = c->pages + pg * PAGE;
		struct chunk *k = chunk_new(fmt->zstd ? chunk_record_bound(n) : n);

		assert(k);
		if (fmt->zstd)
			assert(chunk_record_encode(fmt->zc, fmt->level, raw, n, k->data, k->size,
						   &csize) == 0);
		else
			memcpy(k->data, raw, n);
		k->size = (uint32_t)csize;
		k->raw_size = (uint32_t)n;
		k->first_ts = get_le64(raw);
		k->last_ts = get_le64(raw + n - PAGE);
		l->chunks[l->n++] = k;
		l->bytes += k->size;
		l->raw_bytes += n;
	}
}

struct seen {
	unsigned n;
	unsigned first_seq, last_seq;
	uint64_t first_ts;
	bool in_order;
};

static int see(const struct rb_event *e, void *userdata)
{
	struct seen *s = userdata;
	unsigned seq = get_le32(e->data + 12);

	if (s->n == 0) {
		s->first_seq = seq;
		s->first_ts = e->ts;
	} else if (seq != s->last_seq + 1) {
		s->in_order = false;
	}
	s->last_seq = seq;
	s->n++;
	return 0;
}

/* Every event the chunks hold, decoded as a reader would. */
static struct seen read_chunks(const struct chunk_list *l, const struct trim_format *fmt)
{
	struct seen s = { .in_order = true };
	uint64_t raw_bytes = 0, bytes = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct chunk *k = l->chunks[i];
		uint8_t *raw = malloc(k->raw_size);

		assert(raw);
		if (fmt->zstd)
			assert(chunk_record_decode(k->data, k->size, PAGE, raw, k->raw_size) >= 0);
		else
			memcpy(raw, k->data, k->raw_size);
		assert(k->first_ts == get_le64(raw));
		for (size_t off = 0; off < k->raw_size; off += PAGE)
			assert(rb_page_foreach_event(raw + off, PAGE, see, &s) >= 0);
		raw_bytes += k->raw_size;
		bytes += k->size;
		free(raw);
	}
	assert(raw_bytes == l->raw_bytes && bytes == l->bytes);
	return s;
}

static void test_trim(bool zstd, unsigned at)
{
	_cleanup_(compressor_freep) struct compressor *zc = NULL;
	struct cpu_pages c = {};
	struct chunk_list l;
	struct trim_format fmt = { .page_size = PAGE, .zstd = zstd, .level = 3 };
	struct chunk *last;
	struct seen s;

	assert(compressor_new(&zc) == 0 && compressor_for_chunks(zc) == 0);
	fmt.zc = zc;
	make_pages(&c, 0, 5000, PAGE);
	make_chunks(&c, &fmt, &l);
	last = chunk_ref(l.chunks[l.n - 1]);
	assert(snapshot_complete_from(&l, false) == 0);
	assert(snapshot_complete_from(&l, true) == event_ts(&c, 0));

	assert(snapshot_trim(&l, event_ts(&c, at), &fmt) == 0);
	s = read_chunks(&l, &fmt);
	assert(s.in_order && s.first_seq == at && s.last_seq == 4999 && s.n == 5000 - at);
	assert(s.first_ts == event_ts(&c, at));
	/* Only the first chunk left is rebuilt: the rest are shared as they were. */
	if (event_ts(&c, at) < last->first_ts)
		assert(l.chunks[l.n - 1] == last);
	chunk_unref(last);
	/* Trimming again at the same time changes nothing. */
	assert(snapshot_trim(&l, event_ts(&c, at), &fmt) == 0);
	assert(read_chunks(&l, &fmt).n == 5000 - at);
	chunk_list_done(&l);
	free(c.pages);
}

/* A start before every event keeps all; one after every event keeps the last chunk's tail. */
static void test_edges(void)
{
	_cleanup_(compressor_freep) struct compressor *zc = NULL;
	struct trim_format fmt = { .page_size = PAGE, .zstd = true, .level = 3 };
	struct cpu_pages c = {};
	struct chunk_list l;

	assert(compressor_new(&zc) == 0 && compressor_for_chunks(zc) == 0);
	fmt.zc = zc;
	make_pages(&c, 1, 3000, PAGE);
	make_chunks(&c, &fmt, &l);
	assert(snapshot_trim(&l, 1, &fmt) == 0);
	assert(read_chunks(&l, &fmt).n == 3000);
	assert(snapshot_trim(&l, event_ts(&c, 2999) + 1, &fmt) == 0);
	assert(read_chunks(&l, &fmt).n == 0);
	chunk_list_done(&l);
	/* An empty list stays empty. */
	l = (struct chunk_list){};
	assert(snapshot_trim(&l, 42, &fmt) == 0 && l.n == 0);
	assert(snapshot_complete_from(&l, true) == 0);
	free(c.pages);
}

int main(void)
{
	/* Within the first chunk, at a page's start, within a later chunk, on the last event. */
	static const unsigned at[] = { 1, 145, 1000, 4999 };

	for (size_t k = 0; k < ELEMENTSOF(at); k++) {
		test_trim(true, at[k]);
		test_trim(false, at[k]);
	}
	test_edges();
	return 0;
}
