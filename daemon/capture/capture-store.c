// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a capture stream's chunks go: appended to its spool (and the
 * record's mirror), or pushed to a flight recorder's ring (and, for a
 * kernel-backend drain, copied to a file), each pending batch compressed
 * chunk by chunk; with the counting of what was stored or discarded and
 * the notifications that tell the session. Called by the worker that
 * holds the stream (capture-stream.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture-stream-internal.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/base/log.h"
#include "daemon/store/hold.h"
#include "lib/chunk-record.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"

/*
 * An in-place spool (see spool.c) is the file readers will get: its
 * writeback is started every so often, and what was started the time
 * before, on disk by now, leaves the page cache. Closing the file then
 * has little left to wait for: collapsing a range writes back and drops
 * every cached page after it, which took 18 ms for a 160 MB segment
 * without this and 3 ms with it (bench/README.md). And a trace written
 * once does not crowd the machine's page cache.
 */
#define SPOOL_WRITEBACK_BYTES (UINT64_C(2) << 20)

/*
 * The hold's header says how much of the batch there is (after the bytes
 * came: a kill between leaves them out, counted as lost by recovery).
 */
void capture_store_held(struct capture_stream *s)
{
	if (s->hold)
		atomic_store_explicit(&s->hold->hdr->n_pending, s->n_pending, memory_order_release);
}

/*
 * The batch is in the spool: the hold is emptied before it says how much
 * the spool holds. Killed between, recovery finds the spool holding more
 * than the hold says came before its batch, so it takes nothing twice.
 */
static void hold_stored(struct capture_stream *s)
{
	if (!s->hold)
		return;
	atomic_store_explicit(&s->hold->hdr->n_pending, 0, memory_order_release);
	atomic_store_explicit(&s->hold->hdr->stored, s->spool_pos - s->spool_data,
			      memory_order_release);
}

void capture_store_notify(struct capture_stream *s)
{
	uint64_t one = 1;

	(void)!write(s->notify_fd, &one, sizeof(one));
}

/* Events in whole sub-buffers the stream read and could not store. */
void capture_store_discarded(struct capture_stream *s, const uint8_t *pages, size_t n)
{
	int64_t events = pages ? rb_pages_count_events(pages, n, s->subbuf_size) : 0;

	if (events > 0)
		atomic_fetch_add_explicit(&s->discarded, (uint64_t)events, memory_order_relaxed);
}

/*
 * Counts bytes and chunks that reached the spool; tells the session of the
 * first, then every notify_bytes.
 */
void capture_store_stored(struct capture_stream *s, uint64_t bytes, uint64_t chunks)
{
	uint64_t total;

	total = atomic_fetch_add_explicit(&s->bytes_stored, bytes, memory_order_relaxed) + bytes;
	if (s->progress)
		atomic_fetch_add_explicit(s->progress, bytes, memory_order_relaxed);
	if (chunks)
		atomic_fetch_add_explicit(&s->chunks, chunks, memory_order_relaxed);
	if (s->notify_bytes && total >= s->next_notify) {
		s->next_notify = total + s->notify_bytes;
		capture_store_notify(s);
	}
}

/* Into the flight recorder's ring: a chunk record (or raw sub-buffers) and its time span. */
static int push_chunk(struct capture_stream *s, const uint8_t *record, size_t n,
		      const uint8_t *raw, size_t n_raw)
{
	return chunk_ring_append(s->ring, record, n, (uint32_t)n_raw, get_le64(raw),
				 get_le64(raw + n_raw - s->subbuf_size));
}

/*
 * Starts the writeback of what was written since the last call, once that
 * is SPOOL_WRITEBACK_BYTES, and drops from the page cache what the call
 * before started: a file finished in place is collapsed, which writes back
 * and drops every cached page after the hole.
 */
static void start_writeback(int fd, uint64_t *kicked, uint64_t *dropped, uint64_t pos)
{
	if (pos - *kicked < SPOOL_WRITEBACK_BYTES)
		return;
	/* Pages still being written back stay: the kernel drops clean ones only. */
	if (*kicked > *dropped)
		(void)posix_fadvise(fd, (off_t)*dropped, (off_t)(*kicked - *dropped),
				    POSIX_FADV_DONTNEED);
	*dropped = *kicked;
	(void)sync_file_range(fd, (off_t)*kicked, (off_t)(pos - *kicked), SYNC_FILE_RANGE_WRITE);
	*kicked = pos;
}

/* The chunk record just stored at @pos in the spool goes into the mirror too. */
static void mirror_append(struct capture_stream *s, const uint8_t *record, size_t n, uint64_t pos)
{
	uint64_t at = s->mirror.base + pos;
	int r;

	if (atomic_load_explicit(s->mirror.broken, memory_order_relaxed)) {
		s->mirror.fd = -EBADF;
		return;
	}
	r = at > s->mirror.end || n > s->mirror.end - at ? -EFBIG :
	    loop_pwrite(s->mirror.fd, record, n, at);
	if (r < 0) {
		log_warning_errno(r, "CPU %u: cannot write the output file as the capture goes, "
				  "it is written from the spool at the stop: %m", s->cpu);
		atomic_store_explicit(s->mirror.broken, true, memory_order_relaxed);
		s->mirror.fd = -EBADF;
		return;
	}
	start_writeback(s->mirror.fd, &s->mirror_kicked, &s->mirror_dropped, at + n);
}

/*
 * Appends a chunk record to the spool (and the mirror). In place, never
 * into the next CPU's region, and with the writeback of every
 * SPOOL_WRITEBACK_BYTES started as it goes.
 */
static int spool_append(struct capture_stream *s, const uint8_t *record, size_t n)
{
	uint64_t pos = s->spool_pos;
	int r;

	if (s->spool_limit && n > s->spool_limit - s->spool_pos)
		return -EFBIG;
	r = loop_write(s->spool_fd, record, n);
	if (r < 0)
		return r;
	s->spool_pos += n;
	if (s->spool_limit)
		start_writeback(s->spool_fd, &s->kicked, &s->dropped, s->spool_pos);
	if (s->mirror.fd >= 0)
		mirror_append(s, record, n, pos);
	return 0;
}

/*
 * A drain into a ring keeps a copy of each chunk in a file: the ring it
 * empties is gone for good, so a crash before the snapshot is written
 * leaves the copy to recover. Without it the snapshot still goes on.
 */
static void copy_chunk(struct capture_stream *s, const uint8_t *record, size_t n)
{
	int r = loop_write(s->spool_fd, record, n);

	if (r < 0) {
		log_warning_errno(r, "CPU %u: cannot keep a copy of the drain for recovery, "
				  "draining without: %m", s->cpu);
		s->spool_fd = -EBADF;
	}
}

/*
 * A compressed ring's next chunk: as many whole sub-buffers as would store
 * in chunk_stored_max at the ratio @raw bytes just stored in @stored had.
 */
static void ring_chunk_adapt(struct capture_stream *s, size_t raw, size_t stored)
{
	uint64_t next;

	if (!s->chunk_stored_max || stored == 0)
		return;
	next = s->chunk_stored_max * raw / stored;
	next = MIN(next, (uint64_t)s->chunk_max) / s->subbuf_size * s->subbuf_size;
	s->chunk_bytes = (uint32_t)MAX(next, (uint64_t)s->subbuf_size);
}

/*
 * Stores the stream's pending sub-buffers chunk by chunk: each is framed as
 * a v7 chunk record (zstd) or left raw (ring without compression), then
 * appended to the spool or pushed to the ring.
 */
int capture_store_flush(struct capture_scratch *w, struct capture_stream *s)
{
	for (size_t off = 0, len; off < s->n_pending; off += len) {
		const uint8_t *raw = s->pending + off, *record = raw;
		size_t n;
		int r;

		/* A ring's chunk size follows its ratio (ring_chunk_adapt()). */
		len = MIN((size_t)s->chunk_bytes, s->n_pending - off);
		n = len;
		if (s->zstd) {
			r = chunk_record_encode(w->zc, s->level, raw, len, w->out, w->out_cap, &n);
			if (r < 0)
				return r;
			record = w->out;
		}
		r = s->ring ? push_chunk(s, record, n, raw, len) : spool_append(s, record, n);
		if (r >= 0 && s->ring)
			ring_chunk_adapt(s, len, n);
		if (r >= 0 && s->ring && s->spool_fd >= 0)
			copy_chunk(s, record, n);
		if (r < 0) {
			/* What was not stored stays pending: capture_stream_fail() counts it. */
			memmove(s->pending, s->pending + off, s->n_pending - off);
			s->n_pending -= off;
			if (off > 0)
				hold_stored(s); /* the rest is counted by capture_stream_fail() */
			return r;
		}
		capture_store_stored(s, n, 1);
	}
	s->n_pending = 0;
	hold_stored(s);
	return 0;
}

