// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace-cmd version 7 writer. It takes metadata as plain buffers and
 * each CPU's data as a region of some file, and writes one complete file
 * holding one buffer (the captured instance, written as the top buffer "")
 * to any writable fd. It knows nothing about tracefs.
 *
 * Every section size and offset is computed before the first byte goes
 * out, so the output is written strictly sequentially: no lseek, no
 * patching, which lets the fd be a pipe or a file a client opened.
 *
 * A file whose data is already in place (v7_file.in_place_end) is the
 * exception: the flyrecord section comes first, right after the header,
 * and the metadata sections, both OPTIONS sections and STRINGS are
 * appended after it; then the header and each CPU's chunk count are
 * written into their places. trace-cmd reads sections wherever the
 * options chain points, and gaps inside the flyrecord section are never
 * read.
 *
 * Layout (the one trace-cmd 3.1.6 writes, see docs/file-format.md; in place, the
 * flyrecord section moves to right after the header):
 *   header -> HEADER_INFO, FTRACE_EVENTS, EVENT_FORMATS, KALLSYMS, PRINTK,
 *   CMDLINES -> OPTIONS #1 (section pointers, clock, uname, version, trace
 *   id, CPU stats, CPU count; DONE -> #2) -> flyrecord section (per CPU:
 *   zero padding to a page boundary, then the data) -> OPTIONS #2 (BUFFER;
 *   DONE -> 0) -> STRINGS. The sections form a gap-free chain to EOF.
 *
 * All integers are little-endian. Not thread-safe per call; calls on
 * different fds may run in parallel (each makes its own compressor).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-out.h"
#include "lib/v7-writer.h"


/* A growable byte buffer whose first allocation failure sticks. */
struct buf {
	uint8_t *p;
	size_t n;
	size_t cap;
	int error;
};

static void buf_free(struct buf *b)
{
	free(b->p);
	*b = (struct buf){};
}

static uint8_t *buf_reserve(struct buf *b, size_t n)
{
	if (b->error)
		return NULL;
	if (n > SIZE_MAX - b->n) {
		b->error = -EOVERFLOW;
		return NULL;
	}
	if (b->n + n > b->cap) {
		size_t cap = MAX(b->cap * 2, MAX(b->n + n, (size_t)256));
		uint8_t *p = realloc(b->p, cap);

		if (!p) {
			b->error = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->n += n;
	return b->p + b->n - n;
}

static void buf_put(struct buf *b, const void *data, size_t n)
{
	uint8_t *p = buf_reserve(b, n);

	if (p && n > 0)
		memcpy(p, data, n);
}

static void buf_put_u16(struct buf *b, uint16_t v)
{
	uint8_t *p = buf_reserve(b, 2);

	if (p)
		put_le16(p, v);
}

static void buf_put_u32(struct buf *b, uint32_t v)
{
	uint8_t *p = buf_reserve(b, 4);

	if (p)
		put_le32(p, v);
}

static void buf_put_u64(struct buf *b, uint64_t v)
{
	uint8_t *p = buf_reserve(b, 8);

	if (p)
		put_le64(p, v);
}

static void buf_put_str(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s) + 1);
}

/* An option record: u16 id, u32 size, payload. */
static void buf_put_option(struct buf *b, uint16_t id, const void *payload, uint32_t n)
{
	buf_put_u16(b, id);
	buf_put_u32(b, n);
	buf_put(b, payload, n);
}

static void buf_put_option_str(struct buf *b, uint16_t id, const char *s)
{
	buf_put_option(b, id, s, (uint32_t)strlen(s) + 1);
}

static void buf_put_option_u32(struct buf *b, uint16_t id, uint32_t v)
{
	uint8_t p[4];

	put_le32(p, v);
	buf_put_option(b, id, p, sizeof(p));
}

static void buf_put_option_u64(struct buf *b, uint16_t id, uint64_t v)
{
	uint8_t p[8];

	put_le64(p, v);
	buf_put_option(b, id, p, sizeof(p));
}

/* The description strings, addressed by their offset in the table. */
struct strings {
	struct buf table;
};

static int32_t strings_add(struct strings *s, const char *str)
{
	int32_t id = (int32_t)s->table.n;

	buf_put_str(&s->table, str);
	return id;
}

/*
 * The bytes after a section's 16-byte header: `body`, then `tail`, a large
 * caller-owned blob (kallsyms, printk formats, cmdlines) that is referenced
 * rather than copied, or `tail_region`, one already sealed in a file (kallsyms).
 */
struct section {
	uint16_t id;
	uint16_t flags;
	int32_t desc;
	struct buf body;
	struct v7_blob tail;
	struct v7_region tail_region;
};

static uint64_t section_size(const struct section *s)
{
	return s->body.n + s->tail.size + s->tail_region.size;
}

static void put_section_header(uint8_t *hdr, const struct section *s)
{
	put_le16(hdr, s->id);
	put_le16(hdr + 2, s->flags);
	put_le32(hdr + 4, (uint32_t)s->desc);
	put_le64(hdr + 8, section_size(s));
}

/*
 * Turns an uncompressed body (+ tail) into what the section holds: with
 * zstd, one block `u32 csize, u32 usize, frame` around all of it.
 */
static int section_seal(struct section *s, struct compressor *c, int level, struct buf *raw,
			struct v7_blob tail)
{
	size_t bound, csize, usize;
	uint8_t *p;
	int r;

	if (raw->error)
		return raw->error;
	if (!c) {
		s->body = *raw;
		s->tail = tail;
		*raw = (struct buf){};
		return 0;
	}
	usize = raw->n + tail.size;
	if (usize > UINT32_MAX)
		return -EFBIG;
	bound = compress_bound(usize);
	p = buf_reserve(&s->body, V7_BLOCK_HDR_SIZE + bound);
	if (!p)
		return s->body.error;
	r = compress_frame2(c, level, raw->p, raw->n, tail.data, tail.size,
			    p + V7_BLOCK_HDR_SIZE, bound, &csize);
	if (r < 0)
		return r;
	put_le32(p, (uint32_t)csize);
	put_le32(p + 4, (uint32_t)usize);
	s->body.n = V7_BLOCK_HDR_SIZE + csize;
	s->flags = V7_FLAG_COMPRESSED;
	buf_free(raw);
	return 0;
}

static void body_header_info(struct buf *b, const struct v7_file *f)
{
	buf_put(b, "header_page", sizeof("header_page"));
	buf_put_u64(b, f->header_page.size);
	buf_put(b, f->header_page.data, f->header_page.size);
	buf_put(b, "header_event", sizeof("header_event"));
	buf_put_u64(b, f->header_event.size);
	buf_put(b, f->header_event.data, f->header_event.size);
}

static void body_formats(struct buf *b, size_t n, const struct v7_blob *formats)
{
	buf_put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		buf_put_u64(b, formats[i].size);
		buf_put(b, formats[i].data, formats[i].size);
	}
}

static void body_event_formats(struct buf *b, const struct v7_file *f)
{
	buf_put_u32(b, (uint32_t)f->n_systems);
	for (size_t i = 0; i < f->n_systems; i++) {
		buf_put_str(b, f->systems[i].name);
		body_formats(b, f->systems[i].n_formats, f->systems[i].formats);
	}
}

static int write_section(struct v7_out *o, const struct section *s)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	int r;

	put_section_header(hdr, s);
	r = v7_out_write(o, hdr, sizeof(hdr));
	if (r >= 0)
		r = v7_out_write(o, s->body.p, s->body.n);
	if (r >= 0)
		r = v7_out_write(o, s->tail.data, s->tail.size);
	if (r >= 0 && s->tail_region.size > 0)
		r = v7_out_region(o, &s->tail_region);
	return r;
}

/* Is every CPU's data in memory blobs (none in a file)? */
static bool all_in_memory(const struct v7_file *f)
{
	for (size_t i = 0; i < f->n_data; i++)
		if (f->data[i].size > 0 && f->data[i].n_blobs == 0)
			return false;
	return true;
}

static int validate(const struct v7_file *f)
{
	if (f->page_size < 4096 || f->page_size > (1u << 20) ||
	    (f->page_size & (f->page_size - 1)) != 0)
		return -EINVAL;
	if (!f->clock || !f->trace_clock || !f->uname || !f->version)
		return -EINVAL;
	if (f->in_place_end && (f->compression != V7_COMPRESSION_ZSTD ||
				f->in_place_end < V7_IN_PLACE_DATA_MIN))
		return -EINVAL;
	for (size_t i = 0; i < f->n_data; i++) {
		const struct v7_cpu_data *d = &f->data[i];

		if (d->cpu >= f->n_cpus)
			return -EINVAL;
		if (f->compression == V7_COMPRESSION_NONE && d->size % f->page_size != 0)
			return -EINVAL;
		if (f->compression == V7_COMPRESSION_ZSTD && d->size > 0 && d->n_chunks == 0)
			return -EINVAL;
		if (f->in_place_end && d->size > 0 &&
		    (d->offset < V7_IN_PLACE_DATA_MIN + 4 || d->offset > f->in_place_end ||
		     d->size > f->in_place_end - d->offset))
			return -EINVAL;
		if (d->n_blobs > 0) {
			uint64_t sum = 0;

			for (size_t k = 0; k < d->n_blobs; k++)
				sum += d->blobs[k].size;
			if (sum != d->size)
				return -EINVAL;
		}
	}
	return 0;
}

/* The metadata sections, in file order. */
enum meta_index { M_HEADER_INFO, M_FTRACE, M_EVENTS, M_KALLSYMS, M_PRINTK, M_CMDLINES, _M_MAX };

/* The usual layout: header, metadata, OPTIONS #1, then the flyrecord section and its data. */
static int write_front_to_back(struct v7_out *o, const struct v7_file *f, const struct buf *header,
			       const struct section *fly, const uint64_t *data_off,
			       const struct section *meta, const struct section *opt1)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	struct stat st;
	int r;

	if (fstat(o->fd, &st) >= 0 && S_ISREG(st.st_mode))
		o->start = lseek(o->fd, 0, SEEK_CUR);
	if (all_in_memory(f))
		v7_out_direct_enter(o);
	r = v7_out_write(o, header->p, header->n);
	for (int i = 0; i < _M_MAX && r >= 0; i++)
		r = write_section(o, &meta[i]);
	if (r >= 0)
		r = write_section(o, opt1);
	if (r < 0)
		return r;
	put_section_header(hdr, fly);
	r = v7_out_write(o, hdr, sizeof(hdr));
	for (size_t i = 0; i < f->n_data && r >= 0; i++) {
		const struct v7_cpu_data *d = &f->data[i];

		if (d->size == 0)
			continue;
		r = v7_out_zeros(o, data_off[i] - o->pos);
		if (r >= 0 && f->compression == V7_COMPRESSION_ZSTD) {
			uint8_t count[4];

			put_le32(count, d->n_chunks);
			r = v7_out_write(o, count, sizeof(count));
		}
		if (r >= 0 && d->n_blobs > 0)
			r = v7_out_blobs(o, d->blobs, d->n_blobs);
		else if (r >= 0)
			r = v7_out_copy(o, d->fd, d->offset, d->size);
	}
	return r;
}

/*
 * The data is in place: the metadata and OPTIONS #1 are appended after it,
 * then the header, the flyrecord section's header and each CPU's count go
 * where they belong.
 */
static int write_in_place(struct v7_out *o, const struct v7_file *f, const struct buf *header,
			  const struct section *fly, uint64_t fly_off, const uint64_t *data_off,
			  const struct section *meta, const struct section *opt1)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	int r = 0;

	if (lseek(o->fd, (off_t)f->in_place_end, SEEK_SET) < 0)
		return -errno;
	o->start = 0;
	o->pos = o->kicked = f->in_place_end;
	for (int i = 0; i < _M_MAX && r >= 0; i++)
		r = write_section(o, &meta[i]);
	if (r >= 0)
		r = write_section(o, opt1);
	for (size_t i = 0; i < f->n_data && r >= 0; i++) {
		uint8_t count[4];

		if (f->data[i].size == 0)
			continue;
		put_le32(count, f->data[i].n_chunks);
		r = loop_pwrite(o->fd, count, sizeof(count), data_off[i]);
	}
	put_section_header(hdr, fly);
	if (r >= 0)
		r = loop_pwrite(o->fd, hdr, sizeof(hdr), fly_off);
	if (r >= 0)
		r = loop_pwrite(o->fd, header->p, header->n, 0);
	return r;
}

/*
 * The whole file, laid out before a byte is written: every section sealed
 * (compressed), every offset known. Built by layout_*(), written by
 * layout_emit().
 */
struct layout {
	struct compressor *c;
	struct strings strings;
	struct section meta[_M_MAX], opt1, fly, opt2, strs;
	int32_t desc_options, desc_fly, desc_options2, desc_strings;
	struct buf header;
	uint64_t meta_off[_M_MAX];
	uint64_t *data_off;        /* per data region: where its count (zstd) or data goes */
	uint64_t opt1_off, fly_off, opt2_off;
	uint32_t n_entries;        /* data regions that are not empty */
};

static void layout_done(struct layout *l)
{
	for (int i = 0; i < _M_MAX; i++)
		buf_free(&l->meta[i].body);
	buf_free(&l->opt1.body);
	buf_free(&l->opt2.body);
	buf_free(&l->strs.body);
	buf_free(&l->strings.table);
	buf_free(&l->header);
	free(l->data_off);
	compressor_free(l->c);
}

/* The metadata sections' bodies, each sealed (compressed) into its section; their names. */
static int layout_metadata(struct layout *l, const struct v7_file *f)
{
	static const struct {
		uint16_t id;
		const char *desc;
	} meta_ids[_M_MAX] = {
		[M_HEADER_INFO] = { V7_SEC_HEADER_INFO, "headers" },
		[M_FTRACE] = { V7_SEC_FTRACE_EVENTS, "ftrace events" },
		[M_EVENTS] = { V7_SEC_EVENT_FORMATS, "events format" },
		[M_KALLSYMS] = { V7_SEC_KALLSYMS, "kallsyms" },
		[M_PRINTK] = { V7_SEC_PRINTK, "printk" },
		[M_CMDLINES] = { V7_SEC_CMDLINES, "command lines" },
	};
	bool zstd = f->compression == V7_COMPRESSION_ZSTD || f->metadata_zstd;
	struct buf raw = {};
	int r = 0;

	for (int i = 0; i < _M_MAX; i++) {
		l->meta[i].id = meta_ids[i].id;
		l->meta[i].desc = strings_add(&l->strings, meta_ids[i].desc);
	}
	l->desc_options = strings_add(&l->strings, "options");
	l->desc_fly = strings_add(&l->strings, "buffer flyrecord ");
	l->desc_options2 = strings_add(&l->strings, "options");
	l->desc_strings = strings_add(&l->strings, "strings");
	for (int i = 0; i < _M_MAX && r >= 0; i++) {
		struct v7_blob tail = {};

		switch (i) {
		case M_HEADER_INFO:
			body_header_info(&raw, f);
			break;
		case M_FTRACE:
			body_formats(&raw, f->n_ftrace_formats, f->ftrace_formats);
			break;
		case M_EVENTS:
			body_event_formats(&raw, f);
			break;
		case M_KALLSYMS:
			if (zstd && f->kallsyms_sealed.size > 0) {
				l->meta[i].tail_region = f->kallsyms_sealed;
				l->meta[i].flags = V7_FLAG_COMPRESSED;
				continue;
			}
			/* fall through */
		case M_PRINTK: {
			const struct v7_blob *b = i == M_KALLSYMS ? &f->kallsyms : &f->printk;

			if (b->size > UINT32_MAX) {
				r = -EFBIG;
				break;
			}
			buf_put_u32(&raw, (uint32_t)b->size);
			tail = *b;
			break;
		}
		case M_CMDLINES:
			buf_put_u64(&raw, f->cmdlines.size);
			tail = f->cmdlines;
			break;
		}
		if (r >= 0)
			r = section_seal(&l->meta[i], l->c, f->level, &raw, tail);
	}
	buf_free(&raw);
	return r;
}

/*
 * The file header, the metadata sections' offsets, and OPTIONS #1, which
 * has a fixed size, so it is laid out before its DONE target is known.
 * Return: where OPTIONS #1 ends.
 */
static uint64_t layout_front(struct layout *l, const struct v7_file *f)
{
	bool zstd = f->compression == V7_COMPRESSION_ZSTD || f->metadata_zstd;
	struct section *opt1 = &l->opt1;
	uint64_t pos;

	buf_put(&l->header, V7_MAGIC, V7_MAGIC_SIZE);
	buf_put_str(&l->header, V7_VERSION_STRING);
	buf_put(&l->header, "\0\x08", 2); /* little-endian, 8-byte long */
	buf_put_u32(&l->header, f->page_size);
	buf_put_str(&l->header, zstd ? "zstd" : "none");
	buf_put_str(&l->header, zstd ? compress_version() : "");
	pos = l->header.n + 8;
	if (f->in_place_end) {
		l->fly_off = pos;
		pos = f->in_place_end;
	}
	for (int i = 0; i < _M_MAX; i++) {
		l->meta_off[i] = pos;
		pos += V7_SECTION_HDR_SIZE + section_size(&l->meta[i]);
	}
	l->opt1_off = pos;
	opt1->id = V7_OPT_DONE;
	opt1->desc = l->desc_options;
	buf_put_option_u64(&opt1->body, V7_SEC_HEADER_INFO, l->meta_off[M_HEADER_INFO]);
	buf_put_option_u64(&opt1->body, V7_SEC_FTRACE_EVENTS, l->meta_off[M_FTRACE]);
	buf_put_option_u64(&opt1->body, V7_SEC_EVENT_FORMATS, l->meta_off[M_EVENTS]);
	buf_put_option_u64(&opt1->body, V7_SEC_KALLSYMS, l->meta_off[M_KALLSYMS]);
	buf_put_option_u64(&opt1->body, V7_SEC_PRINTK, l->meta_off[M_PRINTK]);
	buf_put_option_str(&opt1->body, V7_OPT_TRACECLOCK, f->trace_clock);
	buf_put_option_str(&opt1->body, V7_OPT_UNAME, f->uname);
	if (f->date)
		buf_put_option_str(&opt1->body, V7_OPT_DATE, f->date);
	buf_put_option_str(&opt1->body, V7_OPT_VERSION, f->version);
	buf_put_option_u64(&opt1->body, V7_OPT_TRACEID, f->trace_id);
	for (size_t i = 0; f->cpustat && i < f->n_cpustat; i++)
		if (f->cpustat[i])
			buf_put_option_str(&opt1->body, V7_OPT_CPUSTAT, f->cpustat[i]);
	for (size_t i = 0; f->procmaps && i < f->n_procmaps; i++)
		buf_put_option_str(&opt1->body, V7_OPT_PROCMAPS, f->procmaps[i]);
	buf_put_option_u64(&opt1->body, V7_SEC_CMDLINES, l->meta_off[M_CMDLINES]);
	buf_put_option_u32(&opt1->body, V7_OPT_CPUCOUNT, f->n_cpus);
	return pos + V7_SECTION_HDR_SIZE + opt1->body.n + 2 + 4 + 8; /* + DONE */
}

/*
 * The flyrecord section: each CPU's data on a page boundary after @pos,
 * or (in place) where it already is. Return: where the section ends.
 */
static uint64_t layout_data(struct layout *l, const struct v7_file *f, uint64_t pos)
{
	bool zstd = f->compression == V7_COMPRESSION_ZSTD;

	if (f->in_place_end) {
		/* The counts go right before the records, which are where they are. */
		for (size_t i = 0; i < f->n_data; i++) {
			if (f->data[i].size == 0)
				continue;
			l->data_off[i] = f->data[i].offset - 4;
			l->n_entries++;
		}
		l->fly.body.n = f->in_place_end - l->fly_off - V7_SECTION_HDR_SIZE;
	} else {
		l->fly_off = pos;
		pos += V7_SECTION_HDR_SIZE;
		for (size_t i = 0; i < f->n_data; i++) {
			if (f->data[i].size == 0)
				continue;
			pos = ALIGN_UP(pos, (uint64_t)f->page_size);
			l->data_off[i] = pos;
			pos += f->data[i].size + (zstd ? 4 : 0);
			l->n_entries++;
		}
		l->fly.body.n = pos - l->fly_off - V7_SECTION_HDR_SIZE; /* streamed, not buffered */
	}
	l->fly.id = V7_OPT_BUFFER;
	l->fly.flags = zstd ? V7_FLAG_COMPRESSED : 0;
	l->fly.desc = l->desc_fly;
	return pos;
}

/*
 * OPTIONS #1's DONE, OPTIONS #2 (the BUFFER option, which points back at
 * the flyrecord section), STRINGS, and the header's pointer to OPTIONS #1.
 */
static int layout_back(struct layout *l, const struct v7_file *f)
{
	bool zstd = f->compression == V7_COMPRESSION_ZSTD; /* the data's */
	struct buf raw = {};
	int r;

	buf_put_u16(&l->opt1.body, V7_OPT_DONE);
	buf_put_u32(&l->opt1.body, 8);
	buf_put_u64(&l->opt1.body, l->opt2_off);
	buf_put_u64(&raw, l->fly_off);
	buf_put_str(&raw, "");
	buf_put_str(&raw, f->clock);
	buf_put_u32(&raw, f->page_size);
	buf_put_u32(&raw, l->n_entries);
	for (size_t i = 0; i < f->n_data; i++) {
		if (f->data[i].size == 0)
			continue;
		buf_put_u32(&raw, f->data[i].cpu);
		buf_put_u64(&raw, l->data_off[i]);
		buf_put_u64(&raw, f->data[i].size + (zstd ? 4 : 0));
	}
	if (raw.error || raw.n > UINT32_MAX) {
		r = raw.error ?: -EFBIG;
		buf_free(&raw);
		return r;
	}
	l->opt2.id = V7_OPT_DONE;
	l->opt2.desc = l->desc_options2;
	buf_put_option(&l->opt2.body, V7_OPT_BUFFER, raw.p, (uint32_t)raw.n);
	buf_put_option_u64(&l->opt2.body, V7_OPT_DONE, 0);
	buf_free(&raw);

	l->strs.id = V7_SEC_STRINGS;
	l->strs.desc = l->desc_strings;
	r = section_seal(&l->strs, l->c, f->level, &l->strings.table, (struct v7_blob){});
	if (r < 0)
		return r;
	buf_put_u64(&l->header, l->opt1_off);
	if (f->in_place_end && l->header.n + V7_SECTION_HDR_SIZE > V7_IN_PLACE_DATA_MIN)
		return -EINVAL; /* a compression version string longer than any zstd's */
	return l->header.error ?: l->opt1.body.error ?: l->opt2.body.error;
}

static int layout_build(struct layout *l, const struct v7_file *f)
{
	uint64_t pos;
	int r;

	if (f->compression == V7_COMPRESSION_ZSTD || f->metadata_zstd) {
		r = compressor_new(&l->c);
		if (r < 0)
			return r;
	}
	r = layout_metadata(l, f);
	if (r < 0)
		return r;
	l->data_off = calloc(MAX(f->n_data, (size_t)1), sizeof(*l->data_off));
	if (!l->data_off)
		return -ENOMEM;
	pos = layout_front(l, f);
	l->opt2_off = layout_data(l, f, pos);
	return layout_back(l, f);
}

/* Everything is sized: it goes out, front to back (or in place), then the end. */
static int layout_emit(const struct layout *l, const struct v7_file *f, int fd,
		       uint64_t *ret_size)
{
	struct v7_out o = { .fd = fd, .progress = f->progress, .start = -1, .saved_flags = -1 };
	int r;

	if (f->in_place_end)
		r = write_in_place(&o, f, &l->header, &l->fly, l->fly_off, l->data_off, l->meta,
				   &l->opt1);
	else
		r = write_front_to_back(&o, f, &l->header, &l->fly, l->data_off, l->meta,
					&l->opt1);
	if (r >= 0 && o.pos != l->opt2_off)
		r = -EIO; /* our own layout arithmetic disagrees with what went out */
	if (r >= 0)
		r = write_section(&o, &l->opt2);
	if (r >= 0)
		r = write_section(&o, &l->strs);
	if (r >= 0)
		r = v7_out_finish(&o);
	if (r >= 0 && ret_size)
		*ret_size = o.pos;
	v7_out_direct_leave(&o);
	free(o.stage);
	return r;
}

/**
 * v7_size() - the size v7_write() would give the file, nothing written.
 * @f: what would go in it
 * @ret_size: receives the size in bytes
 *
 * Lays the file out as v7_write() does (zstd sections are compressed), so
 * the size is exact: how a budget learns what a file's metadata costs.
 *
 * Return: 0, or -EINVAL for an inconsistent @f, -ENOMEM.
 */
int v7_size(const struct v7_file *f, uint64_t *ret_size)
{
	struct layout l = {};
	int r;

	r = validate(f);
	if (r >= 0)
		r = layout_build(&l, f);
	if (r >= 0)
		*ret_size = l.opt2_off + 2 * V7_SECTION_HDR_SIZE + section_size(&l.opt2) +
			    section_size(&l.strs);
	layout_done(&l);
	return r;
}

/**
 * v7_write() - write a complete trace-cmd v7 file.
 * @fd: output, written sequentially from its current position
 * @f: what goes in it
 * @ret_size: bytes written (may be NULL)
 *
 * Return: 0, -EINVAL for an inconsistent @f, -ENODATA if a data region is
 * shorter than declared, or the -errno of a failed write.
 */
int v7_write(int fd, const struct v7_file *f, uint64_t *ret_size)
{
	struct layout l = {};
	int r;

	r = validate(f);
	if (r >= 0)
		r = layout_build(&l, f);
	if (r >= 0)
		r = layout_emit(&l, f, fd, ret_size);
	layout_done(&l);
	return r;
}
