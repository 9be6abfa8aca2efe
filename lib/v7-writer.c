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
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-writer.h"

/* iovecs per writev() of in-memory data (IOV_MAX is 1024 on Linux). */
#define BLOB_IOV_MAX 256
#define WRITEBACK_KICK_BYTES (UINT64_C(8) << 20)

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

/*
 * Direct output: a file whose data is all in memory (a flight snapshot) is
 * written around the page cache (O_DIRECT) through an aligned staging
 * buffer, when it is a regular file. A file we write once and fsync before
 * calling it complete gains nothing from the cache: buffered, every byte
 * is copied into freshly allocated cache pages (on a VM whose host backs
 * guest memory lazily, about 4 ms per MiB here), and the server's own
 * cache is evicted for a file nobody reads back soon. Data in spool files
 * is copied in the kernel instead (copy_file_range), which measured as
 * fast as direct output and needs no stage.
 * Offsets and lengths stay multiples of V7_DIRECT_ALIGN; the last, partial
 * block goes out buffered once O_DIRECT is cleared again. Any refusal
 * (a file system without O_DIRECT, a device with larger blocks) falls back
 * to buffered writes for the rest of the file.
 */
#define DIRECT_STAGE_BYTES (512u * 1024u)

/* Where the output is, and who else counts the bytes (the daemon, to see progress). */
struct out {
	int fd;
	uint64_t pos;
	_Atomic uint64_t *progress;
	off_t start;       /* a regular file: where writing began; -1: writeback is not ours */
	uint64_t kicked;   /* output up to here has had its writeback started */
	int saved_flags;   /* the fd's status flags before O_DIRECT was set; -1: never set */
	uint8_t *stage;    /* direct output: bytes not written yet; NULL: buffered */
	size_t n_stage;
};

/*
 * Buffered output into a regular file starts its writeback every
 * WRITEBACK_KICK_BYTES, so the disk works while we write and the caller's
 * final fsync() has less left to wait for.
 */
static void advance(struct out *o, uint64_t n)
{
	o->pos += n;
	if (o->progress)
		atomic_fetch_add_explicit(o->progress, n, memory_order_relaxed);
	if (o->start >= 0 && !o->stage && o->pos - o->kicked >= WRITEBACK_KICK_BYTES) {
		(void)sync_file_range(o->fd, o->start + (off_t)o->kicked, (off_t)(o->pos - o->kicked),
				      SYNC_FILE_RANGE_WRITE);
		o->kicked = o->pos;
	}
}

/* Back to buffered writes: O_DIRECT cleared (the fd may be shared with a client). */
static void direct_leave(struct out *o)
{
	if (o->saved_flags >= 0)
		(void)fcntl(o->fd, F_SETFL, o->saved_flags);
	o->saved_flags = -1;
}

/*
 * Switches a regular file written from an aligned offset (o->start) to
 * O_DIRECT. Anything else (pipes, O_APPEND, a refusing file system, no
 * memory for the stage) stays buffered: direct output is an optimisation only.
 */
static void direct_enter(struct out *o)
{
	int flags = fcntl(o->fd, F_GETFL);

	if (o->start < 0 || o->start % V7_DIRECT_ALIGN != 0 || flags < 0 ||
	    (flags & (O_APPEND | O_DIRECT)))
		return;
	if (posix_memalign((void **)&o->stage, V7_DIRECT_ALIGN, DIRECT_STAGE_BYTES) != 0) {
		o->stage = NULL;
		return;
	}
	if (fcntl(o->fd, F_SETFL, flags | O_DIRECT) < 0) {
		o->stage = mfree(o->stage);
		return;
	}
	o->saved_flags = flags;
}

/*
 * Writes the whole blocks staged; a partial block stays staged unless @all.
 * A write refused with EINVAL (the file system or device will not take
 * these alignments) leaves O_DIRECT, and the rest goes out buffered.
 */
static int direct_flush(struct out *o, bool all)
{
	size_t whole = o->n_stage / V7_DIRECT_ALIGN * V7_DIRECT_ALIGN, done = 0;
	int r;

	while (o->saved_flags >= 0 && done < whole) {
		ssize_t k = write(o->fd, o->stage + done, whole - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL) {
			direct_leave(o);
			break;
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		done += (size_t)k;
	}
	memmove(o->stage, o->stage + done, o->n_stage - done);
	o->n_stage -= done;
	if (all || o->saved_flags < 0) {
		direct_leave(o);
		r = loop_write(o->fd, o->stage, o->n_stage);
		if (r < 0)
			return r;
		o->n_stage = 0;
		o->stage = mfree(o->stage);
	}
	return 0;
}

static int write_all(struct out *o, const void *p, size_t n)
{
	const uint8_t *q = p;
	int r;

	if (!o->stage) {
		r = loop_write(o->fd, p, n);
		if (r >= 0)
			advance(o, n);
		return r;
	}
	while (n > 0) {
		size_t k = MIN(n, DIRECT_STAGE_BYTES - o->n_stage);

		memcpy(o->stage + o->n_stage, q, k);
		o->n_stage += k;
		advance(o, k);
		q += k;
		n -= k;
		if (o->n_stage == DIRECT_STAGE_BYTES) {
			r = direct_flush(o, /* all= */ false);
			if (r < 0)
				return r;
			if (!o->stage)
				return write_all(o, q, n);
		}
	}
	return 0;
}

/* The end of the output: what is staged goes out, the fd's flags as they were. */
static int out_finish(struct out *o)
{
	return o->stage ? direct_flush(o, /* all= */ true) : 0;
}

static int write_zeros(struct out *o, uint64_t n)
{
	static const uint8_t zeros[4096];

	while (n > 0) {
		size_t k = (size_t)MIN(n, (uint64_t)sizeof(zeros));
		int r = write_all(o, zeros, k);

		if (r < 0)
			return r;
		n -= k;
	}
	return 0;
}

/*
 * Copies a region of @in_fd to the current position of @out_fd. In-kernel
 * copies first (copy_file_range shares extents or at least avoids user
 * space; sendfile works for any output), then plain pread/write.
 */
static int copy_region(struct out *o, int in_fd, uint64_t offset, uint64_t n)
{
	bool try_cfr = true, try_sendfile = true;
	off_t off = (off_t)offset;
	uint8_t *bounce = NULL;
	int r = 0;

	while (n > 0) {
		size_t want = (size_t)MIN(n, WRITEBACK_KICK_BYTES);
		ssize_t k;

		if (try_cfr) {
			k = copy_file_range(in_fd, &off, o->fd, NULL, want, 0);
			if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP ||
				      errno == ENOSYS || errno == EBADF)) {
				try_cfr = false;
				continue;
			}
		} else if (try_sendfile) {
			k = sendfile(o->fd, in_fd, &off, want);
			if (k < 0 && (errno == EINVAL || errno == ENOSYS)) {
				try_sendfile = false;
				continue;
			}
		} else {
			if (!bounce) {
				bounce = malloc(1u << 16);
				if (!bounce)
					return -ENOMEM;
			}
			k = pread(in_fd, bounce, MIN(want, (size_t)(1u << 16)), off);
			if (k > 0) {
				r = loop_write(o->fd, bounce, (size_t)k);
				if (r < 0)
					break;
				off += k;
			}
		}
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* a FIFO, non-blocking: its reader is behind */
				r = wait_writable(o->fd);
				if (r < 0)
					break;
				continue;
			}
			r = -errno;
			break;
		}
		if (k == 0) {
			r = -ENODATA; /* the spool is shorter than its accounting says */
			break;
		}
		n -= (uint64_t)k;
		advance(o, (uint64_t)k);
	}
	free(bounce);
	return r;
}

/* Writes memory blobs in order, many per system call (through the stage when direct). */
static int write_blobs(struct out *o, const struct v7_blob *blobs, size_t n)
{
	struct iovec iov[BLOB_IOV_MAX];

	for (; o->stage && n > 0; blobs++, n--) {
		int r = write_all(o, blobs->data, blobs->size);

		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n;) {
		size_t k = 0, bytes = 0;
		int r;

		for (; i < n && k < ELEMENTSOF(iov); i++, k++) {
			iov[k] = (struct iovec){ .iov_base = (void *)blobs[i].data,
						 .iov_len = blobs[i].size };
			bytes += blobs[i].size;
		}
		r = loop_writev(o->fd, iov, k);
		if (r < 0)
			return r;
		advance(o, bytes);
	}
	return 0;
}

/*
 * Writes a region of another file: copied in the kernel, or read into the
 * stage when the output is direct (a copy would pass the staged bytes).
 */
static int write_region(struct out *o, const struct v7_region *reg)
{
	uint64_t off = reg->offset, n = reg->size;
	int r;

	while (o->stage && n > 0) {
		size_t want = (size_t)MIN(n, (uint64_t)(DIRECT_STAGE_BYTES - o->n_stage));
		ssize_t k = pread(reg->fd, o->stage + o->n_stage, want, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENODATA;
		o->n_stage += (size_t)k;
		advance(o, (uint64_t)k);
		off += (uint64_t)k;
		n -= (uint64_t)k;
		if (o->n_stage == DIRECT_STAGE_BYTES) {
			r = direct_flush(o, /* all= */ false);
			if (r < 0)
				return r;
		}
	}
	return n > 0 ? copy_region(o, reg->fd, off, n) : 0;
}

static int write_section(struct out *o, const struct section *s)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	int r;

	put_section_header(hdr, s);
	r = write_all(o, hdr, sizeof(hdr));
	if (r >= 0)
		r = write_all(o, s->body.p, s->body.n);
	if (r >= 0)
		r = write_all(o, s->tail.data, s->tail.size);
	if (r >= 0 && s->tail_region.size > 0)
		r = write_region(o, &s->tail_region);
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
static int write_front_to_back(struct out *o, const struct v7_file *f, const struct buf *header,
			       const struct section *fly, const uint64_t *data_off,
			       const struct section *meta, const struct section *opt1)
{
	uint8_t hdr[V7_SECTION_HDR_SIZE];
	struct stat st;
	int r;

	if (fstat(o->fd, &st) >= 0 && S_ISREG(st.st_mode))
		o->start = lseek(o->fd, 0, SEEK_CUR);
	if (all_in_memory(f))
		direct_enter(o);
	r = write_all(o, header->p, header->n);
	for (int i = 0; i < _M_MAX && r >= 0; i++)
		r = write_section(o, &meta[i]);
	if (r >= 0)
		r = write_section(o, opt1);
	if (r < 0)
		return r;
	put_section_header(hdr, fly);
	r = write_all(o, hdr, sizeof(hdr));
	for (size_t i = 0; i < f->n_data && r >= 0; i++) {
		const struct v7_cpu_data *d = &f->data[i];

		if (d->size == 0)
			continue;
		r = write_zeros(o, data_off[i] - o->pos);
		if (r >= 0 && f->compression == V7_COMPRESSION_ZSTD) {
			uint8_t count[4];

			put_le32(count, d->n_chunks);
			r = write_all(o, count, sizeof(count));
		}
		if (r >= 0 && d->n_blobs > 0)
			r = write_blobs(o, d->blobs, d->n_blobs);
		else if (r >= 0)
			r = copy_region(o, d->fd, d->offset, d->size);
	}
	return r;
}

/*
 * The data is in place: the metadata and OPTIONS #1 are appended after it,
 * then the header, the flyrecord section's header and each CPU's count go
 * where they belong.
 */
static int write_in_place(struct out *o, const struct v7_file *f, const struct buf *header,
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

/* Room left before the text's frame for the frame of the u32 size (about 17 bytes). */
#define SEAL_HEAD_MAX 64u

/**
 * v7_seal_kallsyms() - write a compressed KALLSYMS section body, reading the text as it goes.
 * @c: this thread's compressor (compress_fd() leaves @window_log set on it)
 * @level: zstd level for the text
 * @window_log: see compress_fd()
 * @text_fd: the text (/proc/kallsyms), read from its start; its size is unknown until read
 * @max: most text bytes accepted
 * @out_fd: a file of its own for the body, written from offset 0
 * @ret: where in @out_fd the body is, for v7_file.kallsyms_sealed
 * @ret_n_text: the text's size
 *
 * The body is one block, u32 csize, u32 usize, then two frames: the u32
 * size that starts the section, and the text. zstd (and every reader)
 * decompresses concatenated frames as one. The text is compressed as it
 * is read, after room for the first frame, which is made once its size is
 * known and written right before it; the body starts where that frame's
 * block header lands. Neither the text nor its frame is ever in memory.
 *
 * Return: 0, -EFBIG, -EINVAL, -ENOMEM, -EIO, or a read's or write's -errno.
 */
int v7_seal_kallsyms(struct compressor *c, int level, unsigned window_log, int text_fd,
		     size_t max, int out_fd, struct v7_region *ret, size_t *ret_n_text)
{
	const uint64_t text_off = V7_BLOCK_HDR_SIZE + SEAL_HEAD_MAX;
	uint8_t size_le[4], head[V7_BLOCK_HDR_SIZE + SEAL_HEAD_MAX];
	size_t n_text_frame, n_text, n_head;
	int r;

	r = compress_fd(c, level, window_log, text_fd, MIN(max, (size_t)UINT32_MAX - 4), out_fd,
			text_off, &n_text_frame, &n_text);
	if (r < 0)
		return r;
	if (n_text_frame > UINT32_MAX - SEAL_HEAD_MAX)
		return -EFBIG;
	put_le32(size_le, (uint32_t)n_text);
	r = compress_frame(c, 1, size_le, sizeof(size_le), head + V7_BLOCK_HDR_SIZE,
			   SEAL_HEAD_MAX, &n_head);
	if (r < 0)
		return r == -ENOBUFS ? -EIO : r;
	put_le32(head, (uint32_t)(n_head + n_text_frame));
	put_le32(head + 4, (uint32_t)(sizeof(size_le) + n_text));
	/* The block header and the first frame, right up against the text's frame. */
	r = loop_pwrite(out_fd, head, V7_BLOCK_HDR_SIZE + n_head, text_off - V7_BLOCK_HDR_SIZE - n_head);
	if (r < 0)
		return r;
	*ret = (struct v7_region){ .fd = out_fd, .offset = text_off - V7_BLOCK_HDR_SIZE - n_head,
				   .size = V7_BLOCK_HDR_SIZE + n_head + n_text_frame };
	*ret_n_text = n_text;
	return 0;
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
	struct compressor *c = NULL;
	struct section meta[_M_MAX] = {}, opt1 = {}, fly = {}, opt2 = {}, strs = {};
	struct strings strings = {};
	struct buf raw = {}, header = {};
	uint64_t meta_off[_M_MAX], *data_off = NULL;
	struct out o = { .fd = fd, .progress = f->progress, .start = -1, .saved_flags = -1 };
	uint64_t pos = 0, opt1_off, fly_off = 0, opt2_off;
	int32_t desc_options, desc_fly, desc_options2, desc_strings;
	bool zstd = f->compression == V7_COMPRESSION_ZSTD;
	uint32_t n_entries = 0;
	int r;

	r = validate(f);
	if (r < 0)
		return r;
	if (zstd) {
		r = compressor_new(&c);
		if (r < 0)
			return r;
	}

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
	for (int i = 0; i < _M_MAX; i++) {
		meta[i].id = meta_ids[i].id;
		meta[i].desc = strings_add(&strings, meta_ids[i].desc);
	}
	desc_options = strings_add(&strings, "options");
	desc_fly = strings_add(&strings, "buffer flyrecord ");
	desc_options2 = strings_add(&strings, "options");
	desc_strings = strings_add(&strings, "strings");

	/* Metadata bodies, each sealed (compressed) into its section. */
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
				meta[i].tail_region = f->kallsyms_sealed;
				meta[i].flags = V7_FLAG_COMPRESSED;
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
			r = section_seal(&meta[i], c, f->level, &raw, tail);
	}
	if (r < 0)
		goto out;

	/* File header. */
	buf_put(&header, V7_MAGIC, V7_MAGIC_SIZE);
	buf_put_str(&header, V7_VERSION_STRING);
	buf_put(&header, "\0\x08", 2); /* little-endian, 8-byte long */
	buf_put_u32(&header, f->page_size);
	buf_put_str(&header, zstd ? "zstd" : "none");
	buf_put_str(&header, zstd ? compress_version() : "");
	pos = header.n + 8;
	if (f->in_place_end) {
		fly_off = pos;
		pos = f->in_place_end;
	}

	for (int i = 0; i < _M_MAX; i++) {
		meta_off[i] = pos;
		pos += V7_SECTION_HDR_SIZE + section_size(&meta[i]);
	}

	/* OPTIONS #1 has a fixed size, so it is laid out before its DONE target is known. */
	opt1_off = pos;
	opt1.id = V7_OPT_DONE;
	opt1.desc = desc_options;
	buf_put_option_u64(&opt1.body, V7_SEC_HEADER_INFO, meta_off[M_HEADER_INFO]);
	buf_put_option_u64(&opt1.body, V7_SEC_FTRACE_EVENTS, meta_off[M_FTRACE]);
	buf_put_option_u64(&opt1.body, V7_SEC_EVENT_FORMATS, meta_off[M_EVENTS]);
	buf_put_option_u64(&opt1.body, V7_SEC_KALLSYMS, meta_off[M_KALLSYMS]);
	buf_put_option_u64(&opt1.body, V7_SEC_PRINTK, meta_off[M_PRINTK]);
	buf_put_option_str(&opt1.body, V7_OPT_TRACECLOCK, f->trace_clock);
	buf_put_option_str(&opt1.body, V7_OPT_UNAME, f->uname);
	if (f->date)
		buf_put_option_str(&opt1.body, V7_OPT_DATE, f->date);
	buf_put_option_str(&opt1.body, V7_OPT_VERSION, f->version);
	buf_put_option_u64(&opt1.body, V7_OPT_TRACEID, f->trace_id);
	for (size_t i = 0; f->cpustat && i < f->n_cpustat; i++)
		if (f->cpustat[i])
			buf_put_option_str(&opt1.body, V7_OPT_CPUSTAT, f->cpustat[i]);
	buf_put_option_u64(&opt1.body, V7_SEC_CMDLINES, meta_off[M_CMDLINES]);
	buf_put_option_u32(&opt1.body, V7_OPT_CPUCOUNT, f->n_cpus);
	pos += V7_SECTION_HDR_SIZE + opt1.body.n + 2 + 4 + 8; /* + DONE */

	data_off = calloc(MAX(f->n_data, (size_t)1), sizeof(*data_off));
	if (!data_off) {
		r = -ENOMEM;
		goto out;
	}
	if (f->in_place_end) {
		/* The counts go right before the records, which are where they are. */
		for (size_t i = 0; i < f->n_data; i++) {
			if (f->data[i].size == 0)
				continue;
			data_off[i] = f->data[i].offset - 4;
			n_entries++;
		}
		fly.body.n = f->in_place_end - fly_off - V7_SECTION_HDR_SIZE;
	} else {
		/* Flyrecord: each CPU's data starts on a page boundary. */
		fly_off = pos;
		pos += V7_SECTION_HDR_SIZE;
		for (size_t i = 0; i < f->n_data; i++) {
			if (f->data[i].size == 0)
				continue;
			pos = ALIGN_UP(pos, (uint64_t)f->page_size);
			data_off[i] = pos;
			pos += f->data[i].size + (zstd ? 4 : 0);
			n_entries++;
		}
		fly.body.n = pos - fly_off - V7_SECTION_HDR_SIZE; /* streamed, not buffered */
	}
	fly.id = V7_OPT_BUFFER;
	fly.flags = zstd ? V7_FLAG_COMPRESSED : 0;
	fly.desc = desc_fly;

	opt2_off = pos;
	buf_put_u16(&opt1.body, V7_OPT_DONE);
	buf_put_u32(&opt1.body, 8);
	buf_put_u64(&opt1.body, opt2_off);

	/* OPTIONS #2: the BUFFER option, which points back at the flyrecord section. */
	buf_put_u64(&raw, fly_off);
	buf_put_str(&raw, "");
	buf_put_str(&raw, f->clock);
	buf_put_u32(&raw, f->page_size);
	buf_put_u32(&raw, n_entries);
	for (size_t i = 0; i < f->n_data; i++) {
		if (f->data[i].size == 0)
			continue;
		buf_put_u32(&raw, f->data[i].cpu);
		buf_put_u64(&raw, data_off[i]);
		buf_put_u64(&raw, f->data[i].size + (zstd ? 4 : 0));
	}
	if (raw.error || raw.n > UINT32_MAX) {
		r = raw.error ?: -EFBIG;
		goto out;
	}
	opt2.id = V7_OPT_DONE;
	opt2.desc = desc_options2;
	buf_put_option(&opt2.body, V7_OPT_BUFFER, raw.p, (uint32_t)raw.n);
	buf_put_option_u64(&opt2.body, V7_OPT_DONE, 0);
	buf_free(&raw);

	strs.id = V7_SEC_STRINGS;
	strs.desc = desc_strings;
	r = section_seal(&strs, c, f->level, &strings.table, (struct v7_blob){});
	if (r < 0)
		goto out;
	buf_put_u64(&header, opt1_off);
	if (f->in_place_end && header.n + V7_SECTION_HDR_SIZE > V7_IN_PLACE_DATA_MIN) {
		r = -EINVAL; /* a compression version string longer than any zstd's */
		goto out;
	}

	r = header.error ?: opt1.body.error ?: opt2.body.error;
	if (r < 0)
		goto out;

	/* Everything is sized: write it. */
	if (f->in_place_end)
		r = write_in_place(&o, f, &header, &fly, fly_off, data_off, meta, &opt1);
	else
		r = write_front_to_back(&o, f, &header, &fly, data_off, meta, &opt1);
	if (r >= 0 && o.pos != opt2_off)
		r = -EIO; /* our own layout arithmetic disagrees with what went out */
	if (r >= 0)
		r = write_section(&o, &opt2);
	if (r >= 0)
		r = write_section(&o, &strs);
	if (r >= 0)
		r = out_finish(&o);
	if (r >= 0 && ret_size)
		*ret_size = o.pos;
out:
	direct_leave(&o);
	free(o.stage);
	for (int i = 0; i < _M_MAX; i++)
		buf_free(&meta[i].body);
	buf_free(&opt1.body);
	buf_free(&opt2.body);
	buf_free(&strs.body);
	buf_free(&strings.table);
	buf_free(&raw);
	buf_free(&header);
	free(data_off);
	compressor_free(c);
	return r;
}
