// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel ring buffer's sub-buffer ("page") format, read without
 * libtraceevent: the header (u64 timestamp, 64-bit commit word whose low 27
 * bits are the data length, bit 31 "events missed", bit 30 "missed count
 * stored after the data") and the compressed event headers (5-bit type_len,
 * 27-bit time delta; 29 padding, 30 time extend, 31 absolute timestamp).
 *
 * Pure and bounds-checked: a damaged page is an error, never a read past
 * the buffer. Used by the offline tools and the benchmark's event counter,
 * never on the capture path (which does not parse pages at all). Assumes
 * a 64-bit little-endian kernel, as the writer does.
 */
#include <errno.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/rb-page.h"

#define PAGE_HDR_SIZE 16u
#define COMMIT_SIZE_MASK ((1u << 27) - 1)
#define COMMIT_MISSED_EVENTS (1u << 31)
#define COMMIT_MISSED_STORED (1u << 30)
#define TYPE_PADDING 29
#define TYPE_TIME_EXTEND 30
#define TYPE_TIME_STAMP 31
#define TS_SHIFT 27

/**
 * rb_page_parse() - read a sub-buffer's header.
 * @page: the sub-buffer
 * @page_size: its size
 * @ret: what the header says
 *
 * Return: 0, or -EBADMSG if the data length exceeds the page.
 */
int rb_page_parse(const uint8_t *page, uint32_t page_size, struct rb_page_info *ret)
{
	uint64_t commit;
	uint32_t size;

	if (page_size < PAGE_HDR_SIZE)
		return -EBADMSG;
	commit = get_le64(page + 8);
	size = (uint32_t)commit & COMMIT_SIZE_MASK;
	if (size > page_size - PAGE_HDR_SIZE)
		return -EBADMSG;
	*ret = (struct rb_page_info){
		.ts = get_le64(page),
		.data_size = size,
		.missed_events = (commit & COMMIT_MISSED_EVENTS) != 0,
	};
	if ((commit & COMMIT_MISSED_STORED) && size + 8 <= page_size - PAGE_HDR_SIZE)
		ret->n_missed = get_le64(page + PAGE_HDR_SIZE + size);
	return 0;
}

/**
 * rb_page_foreach_event() - call @fn for every event of a sub-buffer.
 * @page: the sub-buffer
 * @page_size: its size
 * @fn: callback; a non-zero return stops the walk and is returned
 * @userdata: passed to @fn
 *
 * Return: 0, what @fn returned, or -EBADMSG for a malformed page.
 */
int rb_page_foreach_event(const uint8_t *page, uint32_t page_size, rb_event_fn fn,
			  void *userdata)
{
	struct rb_page_info info;
	const uint8_t *p, *end;
	uint64_t ts;
	int r;

	r = rb_page_parse(page, page_size, &info);
	if (r < 0)
		return r;
	ts = info.ts;
	p = page + PAGE_HDR_SIZE;
	end = p + info.data_size;
	while (p < end) {
		uint32_t hdr, type_len, delta, len;
		struct rb_event e;

		if (end - p < 4)
			return -EBADMSG;
		hdr = get_le32(p);
		type_len = hdr & 31;
		delta = hdr >> 5;
		p += 4;
		switch (type_len) {
		case TYPE_PADDING:
			if (delta == 0) /* the rest of the page is padding */
				return 0;
			if (end - p < 4)
				return -EBADMSG;
			len = get_le32(p);
			if (len < 4 || len > (size_t)(end - p))
				return -EBADMSG;
			p += len;
			ts += delta;
			continue;
		case TYPE_TIME_EXTEND:
			if (end - p < 4)
				return -EBADMSG;
			ts += ((uint64_t)get_le32(p) << TS_SHIFT) + delta;
			p += 4;
			continue;
		case TYPE_TIME_STAMP:
			if (end - p < 4)
				return -EBADMSG;
			/* Absolute: the low 27 bits come from the delta, the top from the word. */
			ts = (ts & ~((UINT64_C(1) << 59) - 1)) |
			     ((uint64_t)get_le32(p) << TS_SHIFT) | delta;
			p += 4;
			continue;
		case 0:
			if (end - p < 4)
				return -EBADMSG;
			len = get_le32(p);
			p += 4;
			if (len < 4)
				return -EBADMSG;
			len -= 4; /* the length word counts itself */
			break;
		default:
			len = type_len * 4;
		}
		if (len > (size_t)(end - p))
			return -EBADMSG;
		ts += delta;
		e = (struct rb_event){ .ts = ts, .data = p, .size = len };
		r = fn(&e, userdata);
		if (r != 0)
			return r;
		p += ALIGN_UP(len, 4u);
	}
	return 0;
}

/**
 * rb_page_trim() - drop a sub-buffer's events older than @start, in place.
 * @page: the sub-buffer, rewritten
 * @page_size: its size
 * @start: the first timestamp to keep
 *
 * The page is cut right after the last event (or padding) older than
 * @start: its header timestamp becomes the time at that point, so the
 * deltas of everything kept still add up; time extends and absolute
 * stamps after the cut stay with the events they belong to. The flags
 * of the commit word (and a stored missed-events count) are kept.
 *
 * Return: the number of data bytes left (0: nothing at or after @start),
 * or -EBADMSG for a malformed page.
 */
int rb_page_trim(uint8_t *page, uint32_t page_size, uint64_t start)
{
	struct rb_page_info info;
	uint8_t *data = page + PAGE_HDR_SIZE, *p, *end;
	uint64_t ts, cut_ts, commit;
	size_t cut = 0, tail;
	int r;

	r = rb_page_parse(page, page_size, &info);
	if (r < 0)
		return r;
	ts = cut_ts = info.ts;
	p = data;
	end = data + info.data_size;
	while (p < end) {
		uint32_t hdr, type_len, delta, len;

		if (end - p < 4)
			return -EBADMSG;
		hdr = get_le32(p);
		type_len = hdr & 31;
		delta = hdr >> 5;
		switch (type_len) {
		case TYPE_PADDING:
			if (delta == 0) {
				p = end;
				cut = info.data_size;
				continue;
			}
			if (end - p < 8)
				return -EBADMSG;
			len = get_le32(p + 4);
			if (len < 4 || len > (size_t)(end - p - 4))
				return -EBADMSG;
			ts += delta;
			p += 4 + len;
			/* A discarded event: belongs to the side of the cut its time says. */
			if (ts < start) {
				cut = (size_t)(p - data);
				cut_ts = ts;
			}
			continue;
		case TYPE_TIME_EXTEND:
			if (end - p < 8)
				return -EBADMSG;
			ts += ((uint64_t)get_le32(p + 4) << TS_SHIFT) + delta;
			p += 8;
			continue;
		case TYPE_TIME_STAMP:
			if (end - p < 8)
				return -EBADMSG;
			ts = (ts & ~((UINT64_C(1) << 59) - 1)) |
			     ((uint64_t)get_le32(p + 4) << TS_SHIFT) | delta;
			p += 8;
			continue;
		case 0:
			if (end - p < 8)
				return -EBADMSG;
			len = get_le32(p + 4);
			if (len < 4)
				return -EBADMSG;
			len = 4 + len; /* the length word counts itself */
			break;
		default:
			len = 4 + type_len * 4;
		}
		if (ALIGN_UP(len, 4u) > (size_t)(end - p))
			return -EBADMSG;
		ts += delta;
		if (ts >= start)
			break;
		p += ALIGN_UP(len, 4u);
		cut = (size_t)(p - data);
		cut_ts = ts;
	}
	if (cut >= info.data_size)
		return 0;
	if (cut == 0)
		return (int)info.data_size;
	commit = get_le64(page + 8);
	tail = info.data_size - cut;
	/* A stored missed count follows the data: it moves with it. */
	if ((commit & COMMIT_MISSED_STORED) && info.data_size + 8 <= page_size - PAGE_HDR_SIZE)
		tail += 8;
	memmove(data, data + cut, tail);
	memset(data + tail, 0, page_size - PAGE_HDR_SIZE - tail);
	put_le64(page, cut_ts);
	put_le64(page + 8, (commit & ~(uint64_t)COMMIT_SIZE_MASK) | (info.data_size - cut));
	return (int)(info.data_size - cut);
}

struct cut {
	const uint8_t *data;
	uint64_t until;
	size_t keep;       /* data bytes up to the end of the last event kept */
	uint64_t last_ts;
};

static int cut_at(const struct rb_event *e, void *userdata)
{
	struct cut *c = userdata;

	if (e->ts > c->until)
		return 1;
	c->keep = (size_t)(e->data + ALIGN_UP(e->size, 4u) - c->data);
	c->last_ts = e->ts;
	return 0;
}

/**
 * rb_page_cut_after() - drop a sub-buffer's events newer than @until, in place.
 * @page: the sub-buffer, rewritten
 * @page_size: its size
 * @until: the last timestamp to keep (UINT64_MAX: keep all, to learn @ret_last_ts)
 * @ret_last_ts: receives the time of the last event kept (the header's if none)
 *
 * The data ends right after the last event at or before @until; what
 * followed is zeroed. The commit word's flags (and a stored missed-events
 * count, moved to the new end) are kept.
 *
 * Return: the number of data bytes left (0: no event at or before @until),
 * or -EBADMSG for a malformed page.
 */
int rb_page_cut_after(uint8_t *page, uint32_t page_size, uint64_t until, uint64_t *ret_last_ts)
{
	struct cut c = { .data = page + PAGE_HDR_SIZE, .until = until };
	struct rb_page_info info;
	uint8_t *data = page + PAGE_HDR_SIZE;
	size_t tail = 0;
	uint64_t commit;
	int r;

	r = rb_page_parse(page, page_size, &info);
	if (r < 0)
		return r;
	c.last_ts = info.ts;
	r = rb_page_foreach_event(page, page_size, cut_at, &c);
	if (r < 0)
		return r;
	*ret_last_ts = c.last_ts;
	if (c.keep >= info.data_size)
		return (int)info.data_size;
	commit = get_le64(page + 8);
	if ((commit & COMMIT_MISSED_STORED) && info.data_size + 8 <= page_size - PAGE_HDR_SIZE) {
		memmove(data + c.keep, data + info.data_size, 8);
		tail = 8;
	}
	memset(data + c.keep + tail, 0, page_size - PAGE_HDR_SIZE - c.keep - tail);
	put_le64(page + 8, (commit & ~(uint64_t)COMMIT_SIZE_MASK) | c.keep);
	return (int)c.keep;
}

static int count_event(const struct rb_event *e, void *userdata)
{
	(*(uint64_t *)userdata)++;
	return 0;
}

/**
 * rb_pages_count_events() - how many events whole sub-buffers hold.
 * @pages: sub-buffers, back to back
 * @n: their total size (a partial one at the end is left out)
 * @page_size: the sub-buffer size
 *
 * Return: the count, or -EBADMSG if a sub-buffer is malformed.
 */
int64_t rb_pages_count_events(const uint8_t *pages, size_t n, uint32_t page_size)
{
	uint64_t events = 0;

	for (size_t off = 0; page_size > 0 && off + page_size <= n; off += page_size)
		if (rb_page_foreach_event(pages + off, page_size, count_event, &events) < 0)
			return -EBADMSG;
	return (int64_t)events;
}
