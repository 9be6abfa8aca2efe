// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A reader for trace-cmd v7 files: the file header, the options chain, the
 * metadata sections (decompressed) and each CPU's sub-buffers, from zstd
 * chunk streams or raw page-aligned regions. It is our own reader, not a
 * replacement for libtracecmd: the offline tools and the benchmark's event
 * counter use it where libtracecmd is too slow (~0.3 M events/s) or too
 * forgiving of damage.
 *
 * Everything read from the file is untrusted: every offset and length is
 * checked against the file size and named limits before use, and the
 * options chain may not loop. Not thread-safe; one reader per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-reader.h"

#define V7_OPTIONS_MAX 64          /* OPTIONS sections in one chain */
#define V7_CPUS_MAX 8192
/* CPUSTAT texts kept: ours has up to three per CPU (end, start, flight recorder). */
#define V7_CPUSTAT_MAX (4 * V7_CPUS_MAX)
#define V7_SECTION_RAW_MAX (256u << 20)
#define V7_PAGE_SIZE_MAX (1u << 20)

struct v7_reader {
	int fd;
	char error[256];       /* the first problem found, for verify */
	char *trace_clock;     /* informational options, NULL if absent */
	char *uname;
	char *version;
	char *date;
	uint64_t trace_id;
	uint32_t cpu_count;
	size_t n_cpustat;
	char **cpustat;
	bool strings_seen;
	uint64_t strings_offset; /* the first STRINGS section */
	uint64_t file_size;
	uint32_t page_size;
	bool compressed;
	char clock[64];
	uint64_t section_offset[V7_SEC_LAST_META + 1];
	size_t n_cpus;
	struct v7_reader_cpu *cpus;
};

static int fail_codev(struct v7_reader *r, int code, const char *fmt, va_list ap) _printf_(3, 0);
static int fail_codev(struct v7_reader *r, int code, const char *fmt, va_list ap)
{
	if (!r->error[0])
		vsnprintf(r->error, sizeof(r->error), fmt, ap);
	return code;
}

static int fail_code(struct v7_reader *r, int code, const char *fmt, ...) _printf_(3, 4);
static int fail_code(struct v7_reader *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_codev(r, code, fmt, ap);
	va_end(ap);
	return code;
}

static int fail(struct v7_reader *r, const char *fmt, ...) _printf_(2, 3);
static int fail(struct v7_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_codev(r, -EBADMSG, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static bool in_file(const struct v7_reader *r, uint64_t off, uint64_t n)
{
	return off <= r->file_size && n <= r->file_size - off;
}

/* For lib/v7-cursor.c: the file, and the first problem found, kept for v7_reader_error(). */
int v7_reader_fd(const struct v7_reader *r)
{
	return r->fd;
}

bool v7_reader_in_file(const struct v7_reader *r, uint64_t off, uint64_t n)
{
	return in_file(r, off, n);
}

int v7_reader_fail(struct v7_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_codev(r, -EBADMSG, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Reads the 16-byte header of the section at @off; its body must fit in the file. */
static int read_section_header(struct v7_reader *r, uint64_t off, uint16_t *ret_id,
			       uint16_t *ret_flags, uint64_t *ret_size)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	uint64_t size;
	int err;

	if (!in_file(r, off, V7_SECTION_HDR_SIZE))
		return fail(r, "section header at %" PRIu64 " is past the end of the file", off);
	err = loop_pread_exact(r->fd, hdr, sizeof(hdr), off);
	if (err < 0)
		return err;
	size = get_le64(hdr + 8);
	if (!in_file(r, off + V7_SECTION_HDR_SIZE, size))
		return fail(r, "section at %" PRIu64 " runs past the end of the file (size %" PRIu64 ")", off, size);
	*ret_id = get_le16(hdr);
	*ret_flags = get_le16(hdr + 2);
	*ret_size = size;
	return 0;
}

/*
 * Sections form a gap-free chain from the end of the file header to EOF;
 * libtracecmd walks it to find the STRINGS sections, and a truncated or
 * padded file breaks it.
 */
static int walk_sections(struct v7_reader *r, uint64_t pos)
{
	unsigned n = 0;

	while (pos < r->file_size) {
		uint16_t id, flags;
		uint64_t size;
		int err;

		if (++n > 1000000)
			return fail(r, "more than a million sections");
		err = read_section_header(r, pos, &id, &flags, &size);
		if (err < 0)
			return err;
		if (id > 22)
			return fail(r, "unknown section id %u at %" PRIu64, id, pos);
		if (id == V7_SEC_STRINGS && !r->strings_seen) {
			r->strings_seen = true;
			r->strings_offset = pos;
		}
		pos += V7_SECTION_HDR_SIZE + size;
	}
	return pos == r->file_size ? 0 : -EBADMSG;
}

static int read_header(struct v7_reader *r, uint64_t *ret_options, uint64_t *ret_end)
{
	uint8_t h[128];
	size_t n = (size_t)MIN((uint64_t)sizeof(h), r->file_size), pos;
	const uint8_t *comp_name, *comp_version;
	int err;

	if (n < 10 + 2 + 2 + 4)
		return fail(r, "file too short for a header");
	err = loop_pread_exact(r->fd, h, n, 0);
	if (err < 0)
		return err;
	if (memcmp(h, V7_MAGIC, V7_MAGIC_SIZE) != 0 ||
	    memcmp(h + V7_MAGIC_SIZE, V7_VERSION_STRING, sizeof(V7_VERSION_STRING)) != 0)
		return fail(r, "not a trace-cmd version 7 file");
	if (h[12] != 0 || h[13] != 8) /* little-endian, 64-bit long: what we can read */
		return fail_code(r, -EPROTONOSUPPORT, "big-endian or 32-bit files are not supported");
	r->page_size = get_le32(h + 14);
	if (r->page_size < 4096 || r->page_size > V7_PAGE_SIZE_MAX ||
	    (r->page_size & (r->page_size - 1)))
		return fail(r, "bad page size %u in the header", r->page_size);
	pos = 18;
	comp_name = h + pos;
	if (!memchr(comp_name, '\0', n - pos))
		return fail(r, "unterminated compression name");
	pos += strlen((const char *)comp_name) + 1;
	comp_version = h + pos;
	if (pos >= n || !memchr(comp_version, '\0', n - pos))
		return fail(r, "unterminated compression version");
	pos += strlen((const char *)comp_version) + 1;
	if (pos + 8 > n)
		return fail(r, "header ends before the options offset");
	if (strcmp((const char *)comp_name, "zstd") == 0)
		r->compressed = true;
	else if (strcmp((const char *)comp_name, "none") != 0)
		return fail_code(r, -EPROTONOSUPPORT, "compression '%s' is not supported", (const char *)comp_name);
	*ret_options = get_le64(h + pos);
	*ret_end = pos + 8;
	return 0;
}

static int parse_buffer_option(struct v7_reader *r, const uint8_t *p, uint32_t n)
{
	const uint8_t *end = p + n, *name, *s;
	uint8_t sec[V7_SECTION_HDR_SIZE];
	struct v7_reader_cpu *cpus;
	uint32_t count, page_size;
	bool top, compressed;
	int err;

	if (n < 8)
		return fail(r, "BUFFER option too short");
	/*
	 * The flyrecord section's offset: its flag says whether the data is
	 * compressed, which trace-cmd reads from there, not from the header
	 * (ftraced's uncompressed files keep their metadata compressed).
	 */
	if (!in_file(r, get_le64(p), sizeof(sec)))
		return fail(r, "BUFFER option: its flyrecord section lies outside the file");
	err = loop_pread_exact(r->fd, sec, sizeof(sec), get_le64(p));
	if (err < 0)
		return err;
	compressed = get_le16(sec + 2) & V7_FLAG_COMPRESSED;
	if (compressed && !r->compressed)
		return fail(r, "BUFFER option: compressed data in a file that says 'none'");
	p += 8; /* the CPU entries say where the data is */
	name = p;
	s = memchr(p, '\0', (size_t)(end - p));
	if (!s || (size_t)(s - p) >= sizeof(cpus->buffer))
		return fail(r, "BUFFER option: unterminated buffer name");
	top = s == p;
	p = s + 1;
	s = memchr(p, '\0', (size_t)(end - p));
	if (!s || (size_t)(s - p) >= sizeof(r->clock))
		return fail(r, "BUFFER option: unterminated clock");
	if (top)
		memcpy(r->clock, p, (size_t)(s - p + 1));
	p = s + 1;
	if (end - p < 8)
		return fail(r, "BUFFER option too short for its CPU count");
	/* The top buffer uses the file header's page size; named ones their own. */
	page_size = top ? r->page_size : get_le32(p);
	count = get_le32(p + 4);
	p += 8;
	if (page_size < 4096 || page_size > V7_PAGE_SIZE_MAX || (page_size & (page_size - 1)))
		return fail(r, "BUFFER option: bad page size %u", page_size);
	if (count > V7_CPUS_MAX || r->n_cpus + count > V7_CPUS_MAX ||
	    (uint64_t)count * 20 > (uint64_t)(end - p))
		return fail(r, "BUFFER option: %u CPU entries do not fit", count);
	cpus = realloc(r->cpus, MAX(r->n_cpus + count, (size_t)1) * sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	r->cpus = cpus;
	for (uint32_t i = 0; i < count; i++, p += 20) {
		struct v7_reader_cpu *c = &r->cpus[r->n_cpus];

		*c = (struct v7_reader_cpu){
			.cpu = get_le32(p),
			.offset = get_le64(p + 4),
			.size = get_le64(p + 12),
			.page_size = page_size,
			.compressed = compressed,
		};
		strcpy(c->buffer, (const char *)name);
		if (!in_file(r, c->offset, c->size))
			return fail(r, "CPU %u data (%" PRIu64 " bytes at %" PRIu64 ") lies outside the file", c->cpu, c->size, c->offset);
		if (!compressed && (c->offset % page_size || c->size % page_size))
			return fail(r, "CPU %u uncompressed data is not page aligned", c->cpu);
		r->n_cpus++;
	}
	return 0;
}

static char *option_text(const uint8_t *p, uint32_t n)
{
	char *t = malloc((size_t)n + 1);

	if (t) {
		memcpy(t, p, n);
		t[n] = '\0'; /* texts carry their NUL; a missing one is added */
	}
	return t;
}

/* The options `info` shows; unknown ones are skipped as libtracecmd does. */
static int keep_option(struct v7_reader *r, uint16_t id, const uint8_t *p, uint32_t n)
{
	char **slot = NULL, **grown;

	switch (id) {
	case V7_OPT_CPUSTAT:
		if (r->n_cpustat >= V7_CPUSTAT_MAX)
			return 0;
		grown = realloc(r->cpustat, (r->n_cpustat + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		r->cpustat = grown;
		slot = &r->cpustat[r->n_cpustat++];
		*slot = NULL;
		break;
	case V7_OPT_TRACECLOCK:
		slot = &r->trace_clock;
		break;
	case V7_OPT_UNAME:
		slot = &r->uname;
		break;
	case V7_OPT_VERSION:
		slot = &r->version;
		break;
	case V7_OPT_DATE:
		slot = &r->date;
		break;
	case V7_OPT_CPUCOUNT:
		if (n == 4)
			r->cpu_count = get_le32(p);
		return 0;
	case V7_OPT_TRACEID:
		if (n == 8)
			r->trace_id = get_le64(p);
		return 0;
	default:
		return 0;
	}
	free(*slot);
	*slot = option_text(p, n);
	return *slot ? 0 : -ENOMEM;
}

static int read_options(struct v7_reader *r, uint64_t off)
{
	for (int k = 0; off != 0; k++) {
		uint16_t section_id, flags;
		uint64_t size, next = 0;
		uint8_t *body;
		size_t pos;
		int err;

		if (k >= V7_OPTIONS_MAX)
			return fail_code(r, -ELOOP, "the options chain loops");
		err = read_section_header(r, off, &section_id, &flags, &size);
		if (err < 0)
			return err;
		if (section_id != V7_OPT_DONE || flags != 0 || size > V7_SECTION_RAW_MAX)
			return fail(r, "options chain points at section %u at %" PRIu64 ", not an OPTIONS section", section_id, off);
		body = malloc(MAX(size, (uint64_t)1));
		if (!body)
			return -ENOMEM;
		err = loop_pread_exact(r->fd, body, size, off + V7_SECTION_HDR_SIZE);
		for (pos = 0; err >= 0;) {
			uint16_t id;
			uint32_t n;

			if (size - pos < 6) {
				err = fail(r, "OPTIONS section at %" PRIu64 " does not end in DONE", off);
				break;
			}
			id = get_le16(body + pos);
			n = get_le32(body + pos + 2);
			pos += 6;
			if (n > size - pos) {
				err = fail(r, "option %u at %" PRIu64 " runs past its section", id, off);
				break;
			}
			if (id == V7_OPT_DONE) {
				if (n != 8)
					err = fail(r, "DONE option with a payload of %u bytes", n);
				else
					next = get_le64(body + pos);
				break;
			}
			if (id == V7_OPT_BUFFER)
				err = parse_buffer_option(r, body + pos, n);
			else if (id >= V7_OPT_DATE && id <= V7_OPT_TRACEID)
				err = keep_option(r, id, body + pos, n);
			else if (id >= V7_SEC_FIRST_META && id <= V7_SEC_LAST_META && n == 8)
				r->section_offset[id] = get_le64(body + pos);
			pos += n;
		}
		free(body);
		if (err < 0)
			return err;
		off = next;
	}
	return 0;
}

/**
 * v7_reader_open() - parse a v7 file's header and options chain.
 * @fd: the file (read with pread; the reader does not take it over)
 * @ret: the reader
 * @error: receives the first problem found, or NULL
 * @n_error: its size
 *
 * Return: 0; -EBADMSG for a damaged or truncated file; -EPROTONOSUPPORT for
 * a valid file we cannot read (big-endian, zlib); -ELOOP for a looping
 * options chain; or -errno.
 */
int v7_reader_open(int fd, struct v7_reader **ret, char *error, size_t n_error)
{
	struct v7_reader *r;
	uint64_t options = 0, header_end = 0;
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->file_size = (uint64_t)st.st_size;
	err = read_header(r, &options, &header_end);
	if (err >= 0)
		err = walk_sections(r, header_end);
	if (err >= 0)
		err = options == 0 ? 0 : read_options(r, options);
	if (err >= 0 && options == 0)
		err = fail(r, "the header's options offset is 0 (the file was never finished)");
	if (err >= 0 && r->section_offset[V7_SEC_FIRST_META] == 0)
		err = fail(r, "no HEADER_INFO section: no reader can open it");
	if (err < 0) {
		if (error)
			snprintf(error, n_error, "%s", r->error[0] ? r->error : strerror(-err));
		v7_reader_free(r);
		return err;
	}
	*ret = r;
	return 0;
}

struct v7_reader *v7_reader_free(struct v7_reader *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_cpustat; i++)
		free(r->cpustat[i]);
	free(r->cpustat);
	free(r->trace_clock);
	free(r->uname);
	free(r->version);
	free(r->date);
	free(r->cpus);
	free(r);
	return NULL;
}

/* The first problem a walk found ("" if none): what verify reports. */
const char *v7_reader_error(const struct v7_reader *r)
{
	return r->error;
}

/* trace-cmd and ftraced write a STRINGS section last: without one, the file was cut short. */
bool v7_reader_has_strings(const struct v7_reader *r)
{
	return r->strings_seen;
}

/* Informational options; NULL (or 0) when the file has none. */
const char *v7_reader_option(const struct v7_reader *r, enum v7_reader_option which)
{
	switch (which) {
	case V7_READER_TRACE_CLOCK:
		return r->trace_clock;
	case V7_READER_UNAME:
		return r->uname;
	case V7_READER_VERSION:
		return r->version;
	case V7_READER_DATE:
		return r->date;
	}
	return NULL;
}

uint64_t v7_reader_trace_id(const struct v7_reader *r)
{
	return r->trace_id;
}

uint32_t v7_reader_cpu_count(const struct v7_reader *r)
{
	return r->cpu_count;
}

size_t v7_reader_n_cpustat(const struct v7_reader *r)
{
	return r->n_cpustat;
}

const char *v7_reader_cpustat(const struct v7_reader *r, size_t i)
{
	return i < r->n_cpustat ? r->cpustat[i] : NULL;
}

uint32_t v7_reader_page_size(const struct v7_reader *r)
{
	return r->page_size;
}

bool v7_reader_compressed(const struct v7_reader *r)
{
	/* The data's: every buffer of ours is alike; a file without data, by its header. */
	return r->n_cpus ? r->cpus[0].compressed : r->compressed;
}

/* Does the file say zstd (its metadata then is, and its data may be)? */
bool v7_reader_metadata_compressed(const struct v7_reader *r)
{
	return r->compressed;
}

const char *v7_reader_clock(const struct v7_reader *r)
{
	return r->clock;
}

size_t v7_reader_n_cpus(const struct v7_reader *r)
{
	return r->n_cpus;
}

const struct v7_reader_cpu *v7_reader_cpu(const struct v7_reader *r, size_t i)
{
	return i < r->n_cpus ? &r->cpus[i] : NULL;
}

/**
 * v7_reader_section() - the (decompressed) body of a metadata section.
 * @r: reader
 * @id: section id, 16 (HEADER_INFO) to 21 (CMDLINES), or 15 (the first STRINGS)
 * @ret: the body (caller frees)
 * @ret_size: its size
 *
 * Return: 0, -ENOENT if the file has no such section, -EBADMSG if damaged.
 */
int v7_reader_section(struct v7_reader *r, uint16_t id, uint8_t **ret, size_t *ret_size)
{
	uint16_t found_id, flags;
	uint64_t off, size;
	uint8_t *body, *raw;
	size_t usize, got;
	int err;

	if (id != V7_SEC_STRINGS && (id < V7_SEC_FIRST_META || id > V7_SEC_LAST_META))
		return -EINVAL;
	off = id == V7_SEC_STRINGS ? r->strings_offset : r->section_offset[id];
	if (off == 0)
		return -ENOENT;
	err = read_section_header(r, off, &found_id, &flags, &size);
	if (err < 0)
		return err;
	if (found_id != id || size > V7_SECTION_RAW_MAX)
		return fail(r, "section %u at %" PRIu64 " is damaged", id, off);
	body = malloc(MAX(size, (uint64_t)1));
	if (!body)
		return -ENOMEM;
	err = loop_pread_exact(r->fd, body, size, off + V7_SECTION_HDR_SIZE);
	if (err < 0 || !(flags & 1)) {
		if (err < 0) {
			free(body);
			return err;
		}
		*ret = body;
		*ret_size = size;
		return 0;
	}
	/* Compressed: exactly one block, u32 csize, u32 usize, frame. */
	if (size < 8 || get_le32(body) != size - 8 || get_le32(body + 4) > V7_SECTION_RAW_MAX) {
		free(body);
		return fail(r, "section %u at %" PRIu64 ": bad compressed block header", id, off);
	}
	usize = get_le32(body + 4);
	raw = malloc(MAX(usize, (size_t)1));
	if (!raw) {
		free(body);
		return -ENOMEM;
	}
	err = decompress_frame(body + 8, size - 8, raw, usize, &got);
	free(body);
	if (err < 0 || got != usize) {
		free(raw);
		return fail(r, "section %u at %" PRIu64 ": compressed block does not decompress (checksum)", id, off);
	}
	*ret = raw;
	*ret_size = usize;
	return 0;
}
