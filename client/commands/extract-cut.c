// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl extract's cutting (extract.c has the command): each CPU's
 * chunks of one file either copied whole, when every event lies inside
 * the window and after what the CPU has, or cut page by page at the event
 * (lib/rb-page.c) and compressed anew.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands/extract.h"
#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/rb-page.h"

/**
 * extract_compress_pending() - the pages a CPU has waiting, as one compressed chunk.
 * @x: the extract
 * @c: the CPU
 *
 * Return: 0 or -errno.
 */
int extract_compress_pending(struct extract *x, struct cpu_out *c)
{
	size_t bound = chunk_record_bound(c->n_raw), size;
	struct v7_blob *grown;
	uint8_t *rec;
	int r;

	if (c->n_raw == 0)
		return 0;
	rec = malloc(bound);
	grown = reallocarray(c->chunks, c->n_chunks + 1, sizeof(*c->chunks));
	if (!rec || !grown) {
		free(rec);
		return -ENOMEM;
	}
	c->chunks = grown;
	r = chunk_record_encode(x->zstd, EXTRACT_ZSTD_LEVEL, c->raw, c->n_raw, rec, bound, &size);
	if (r < 0) {
		free(rec);
		return r;
	}
	c->chunks[c->n_chunks++] = (struct v7_blob){ .data = rec, .size = size };
	c->bytes += size;
	c->n_raw = 0;
	return 0;
}

static int count_one(const struct rb_event *e, void *userdata)
{
	(*(uint64_t *)userdata)++;
	return 0;
}

/* One page of one CPU of one file: cut to the window and kept, or skipped. 1: stop the CPU. */
static int on_page(const uint8_t *page, uint32_t page_size, void *userdata)
{
	struct file_window *w = userdata;
	struct extract *x = w->x;
	struct cpu_out *c = w->cpu;
	struct rb_page_info info;
	uint64_t start, last, events = 0;
	int n;

	memcpy(x->page, page, page_size);
	if (w->shift_ns)
		put_le64(x->page, get_le64(x->page) + (uint64_t)w->shift_ns);
	if (rb_page_parse(x->page, page_size, &info) < 0)
		return -EBADMSG;
	/* A CPU's pages are in time order: once one starts after the window, all do. */
	if (info.ts > w->until_ts)
		return 1;
	start = MAX(w->since_ts, c->any ? c->last_ts + 1 : 0);
	n = rb_page_trim(x->page, page_size, start);
	if (n > 0)
		n = rb_page_cut_after(x->page, page_size, w->until_ts, &last);
	if (n <= 0)
		return n < 0 ? n : 0;
	if (rb_page_foreach_event(x->page, page_size, count_one, &events) < 0 || events == 0)
		return 0;
	/* The cuts keep the commit word's flags: the first parse's still holds. */
	if (info.missed_events)
		c->missed_pages++;
	if (c->n_raw + page_size > EXTRACT_CHUNK_RAW) {
		int r = extract_compress_pending(x, c);

		if (r < 0)
			return r;
	}
	memcpy(c->raw + c->n_raw, x->page, page_size);
	c->n_raw += page_size;
	c->events += events;
	c->last_ts = last;
	c->any = true;
	w->used = true;
	return 0;
}

/* What a chunk's pages hold, to tell whether it lies inside the window whole. */
struct chunk_span {
	uint64_t first_ts, last_ts, events, missed_pages;
};

static int span_event(const struct rb_event *e, void *userdata)
{
	struct chunk_span *s = userdata;

	if (s->events++ == 0)
		s->first_ts = e->ts;
	s->last_ts = e->ts;
	return 0;
}

/*
 * Is every event of @pages inside the window and newer than what the CPU
 * has, with times unmoved? Then the compressed record goes into the output
 * as it is.
 */
static bool chunk_inside(const struct file_window *w, const uint8_t *pages, size_t n_pages,
			 uint32_t page_size, struct chunk_span *s)
{
	struct rb_page_info info;

	*s = (struct chunk_span){};
	if (w->shift_ns != 0 || n_pages == 0)
		return false;
	for (size_t p = 0; p < n_pages; p += page_size) {
		if (rb_page_parse(pages + p, page_size, &info) < 0)
			return false;
		if (info.missed_events)
			s->missed_pages++;
		if (rb_page_foreach_event(pages + p, page_size, span_event, s) < 0)
			return false;
	}
	return s->events > 0 && s->first_ts >= w->since_ts && s->last_ts <= w->until_ts &&
	       (!w->cpu->any || s->first_ts > w->cpu->last_ts);
}

/**
 * extract_on_chunk() - one chunk of one CPU of one file (a v7_chunk_fn).
 * @record: the compressed record whole, NULL for an uncompressed file
 * @n_record: its size
 * @pages: its sub-buffers
 * @n_pages: their total size
 * @page_size: the sub-buffer size
 * @userdata: the file's struct file_window
 *
 * Copied whole if it lies inside the window, else cut page by page.
 *
 * Return: 0, 1 once the CPU's pages are past the window, or -errno.
 */
int extract_on_chunk(const uint8_t *record, size_t n_record, const uint8_t *pages, size_t n_pages,
		    uint32_t page_size, void *userdata)
{
	struct file_window *w = userdata;
	struct cpu_out *c = w->cpu;
	struct chunk_span s;
	struct v7_blob *grown;
	uint8_t *copy;
	int r;

	if (!record || !chunk_inside(w, pages, n_pages, page_size, &s)) {
		for (size_t p = 0; p < n_pages; p += page_size) {
			r = on_page(pages + p, page_size, w);
			if (r != 0)
				return r;
		}
		return 0;
	}
	/* What waits to be compressed comes first: each CPU's data stays in time order. */
	r = extract_compress_pending(w->x, c);
	if (r < 0)
		return r;
	copy = malloc(n_record);
	grown = reallocarray(c->chunks, c->n_chunks + 1, sizeof(*c->chunks));
	if (!copy || !grown) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, record, n_record);
	c->chunks = grown;
	c->chunks[c->n_chunks++] = (struct v7_blob){ .data = copy, .size = n_record };
	c->bytes += n_record;
	c->events += s.events;
	c->missed_pages += s.missed_pages;
	c->last_ts = s.last_ts;
	c->any = true;
	c->copied++;
	w->used = true;
	return 0;
}
