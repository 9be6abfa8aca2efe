// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One CPU's capture stream of one session: the data path from the
 * kernel's trace_pipe_raw to a spool file or a flight recorder's ring.
 *
 * splice() trace_pipe_raw -> the stream's pipe, in whole sub-buffers, then
 *   - "none": splice() pipe -> spool file, raw pages;
 *   - "zstd": read() the pipe into the stream's pending batch and, when it
 *     is full or has waited CAPTURE_FRESH_USEC (capture_stream_freshen(),
 *     from an idle worker), compress it as chunks of whole sub-buffers,
 *     each an independent zstd frame with a checksum, appended to the
 *     spool as a chunk record (chunk-record.c) -
 *     exactly what a v7 file holds, so the file is later assembled by
 *     copying the spool as it is. Raw pages never reach the disk and
 *     nothing is compressed twice.
 *
 * Into a compressed spool, the pending batch is a hold (store/hold.h): a
 * shared mapping of a tmpfs file that outlives the daemon, whose header
 * says which spool the batch follows and how much (capture-store.c keeps
 * it exact), so the next start recovers it in order and once.
 *
 * Flight recorder (memory backend): the stream has a chunk ring instead of
 * a spool. Sub-buffers always go through the pending batch and each chunk
 * (compressed, or raw with "none") is pushed to the ring, which evicts the
 * oldest. A flush drains the kernel and pushes what is pending, then
 * publishes a cut like a rotation.
 *
 * A rotation (segments of a continuous session) compresses what is
 * pending into the current spool, publishes the cut (totals stored so far)
 * and switches to the next spool. Sub-buffers are consumed from the kernel
 * exactly once, so every event lands in exactly one segment.
 *
 * Threads: the session creates and frees a stream; between its hand-over
 * to a worker (capture.c) and `finished`, only that worker calls the
 * functions below that move data. Progress is published through atomic
 * counters and the session's notify eventfd. Nothing here needs a kernel:
 * any pipe can stand in for trace_pipe_raw (tests/unit/daemon/capture/test-capture-stream.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture-stream-internal.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/store/hold.h"
#include "daemon/store/spool.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"
#include "lib/time-util.h"

/* Every chunk (a sub-buffer at least) fits in the window compressor_for_chunks() gives. */
_Static_assert(CHUNK_TARGET_BYTES <= 1u << COMPRESS_CHUNK_WINDOW_LOG, "chunk past the window");
_Static_assert(SUBBUF_KB_MAX * 1024u <= 1u << COMPRESS_CHUNK_WINDOW_LOG, "sub-buffer past the window");

/* A rotation drains what the kernel holds, but not for ever on a busy CPU. */
#define ROTATE_BYTES_MAX (64u * 1024u * 1024u)
#define ROTATE_READS_MAX 64


/**
 * capture_ring_chunk_target() - the raw bytes a flight ring's chunks aim at.
 * @budget: the ring's byte budget
 *
 * A ring evicts whole chunks, so small rings get small ones: even where
 * nothing compresses, one is at most 1/CHUNKS_PER_RING_MIN of the history.
 *
 * Return: at most CHUNK_TARGET_BYTES (whole sub-buffers, at least one, are taken).
 */
size_t capture_ring_chunk_target(uint64_t budget)
{
	return (size_t)MIN((uint64_t)CHUNK_TARGET_BYTES, budget / CHUNKS_PER_RING_MIN);
}

/**
 * capture_stream_new() - prepare one CPU's stream of one session.
 * @c: configuration; @c->trace_fd is taken over even on failure
 * @ret: the stream, not yet reading
 *
 * Return: 0, -EINVAL for a sub-buffer larger than a pipe can hold, or -errno.
 */
int capture_stream_new(const struct capture_stream_config *c, struct capture_stream **ret)
{
	struct capture_stream *s;
	size_t chunk_target;
	int size;

	s = calloc(1, sizeof(*s));
	if (!s) {
		safe_close(c->trace_fd);
		safe_close(c->stats_fd);
		return -ENOMEM;
	}
	*s = (struct capture_stream){
		.cpu = c->cpu,
		.trace_fd = c->trace_fd,
		.stats_fd = c->stats_fd,
		.pipe_fd = { -EBADF, -EBADF },
		.spool_fd = c->spool_fd,
		.ring = c->ring,
		.notify_fd = c->notify_fd,
		.subbuf_size = c->subbuf_size,
		.zstd = c->zstd,
		.level = c->level,
		.notify_bytes = c->notify_bytes,
		.progress = c->progress,
		.drain_only = c->drain_only,
		.rt_priority = MIN(c->rt_priority, (unsigned)FTRACED_RT_PRIORITY_MAX),
		.region_bytes = c->spool_region_bytes,
		.mirror = c->mirror,
		.next_notify = 1, /* the first stored bytes: the session learns that events fire */
	};
	/* Only a record's spool is mirrored, and only with zstd; a zeroed config has none. */
	if (!c->zstd || c->ring || !c->mirror.broken)
		s->mirror.fd = -EBADF;
	if (c->subbuf_size == 0 || c->subbuf_size > CAPTURE_PIPE_BYTES) {
		capture_stream_free(s);
		return -EINVAL;
	}
	chunk_target = c->ring ? capture_ring_chunk_target(chunk_ring_budget(c->ring)) :
				 CHUNK_TARGET_BYTES;
	s->chunk_bytes = MAX(1u, chunk_target / c->subbuf_size) * c->subbuf_size;
	s->chunk_max = s->chunk_bytes;
	/*
	 * A compressed ring's chunks are 1/CHUNKS_PER_RING_MIN of its budget as
	 * stored, not raw: they start there as if nothing compressed, and grow
	 * with what the last one compressed to, up to a file's chunk (whose
	 * window sets the ratio: 128 KiB chunks held 9% fewer markers per MiB).
	 */
	if (c->ring && c->zstd) {
		s->chunk_stored_max = chunk_ring_budget(c->ring) / CHUNKS_PER_RING_MIN;
		s->chunk_max = MAX(s->chunk_bytes,
				   CHUNK_TARGET_BYTES / c->subbuf_size * c->subbuf_size);
	}
	/*
	 * Chunks are compressed back to back while zstd's tables are warm
	 * (CAPTURE_BATCH_BYTES). When every wake-up finds at least a batch in
	 * the ring, the batch is already there, in memory the ring has paid
	 * for: taking it a chunk at a time compresses the same chunks in a
	 * row, and the stream holds one chunk instead of a batch. Otherwise
	 * (small rings, watermark unknown) the stream collects the batch.
	 */
	s->batch_bytes = c->wake_bytes >= CAPTURE_BATCH_BYTES ? s->chunk_max :
			 MAX(1u, CAPTURE_BATCH_BYTES / s->chunk_max) * s->chunk_max;
	/* One record a batch (a spool's batch is a chunk): a hold's header tells it exactly. */
	if (s->zstd && !s->ring && c->spool_id && c->hold_dir_fd > 0 &&
	    s->batch_bytes == s->chunk_bytes) {
		int r = hold_new(c->hold_dir_fd, c->cpu, c->subbuf_size, s->batch_bytes, &s->hold);

		if (r >= 0) {
			atomic_store_explicit(&s->hold->hdr->spool_id, c->spool_id,
					      memory_order_release);
			s->pending = s->hold->data;
		} else {
			/* Full or gone (tmpfs): the batch in our memory, as before holds. */
			log_warning_errno(r, "CPU %u: what the worker takes and has not stored is "
					  "not kept beyond the daemon's life (no room for its hold): "
					  "%m", c->cpu);
		}
	}
	if (!s->pending && (s->zstd || s->ring)) {
		s->pending = malloc(s->batch_bytes);
		if (!s->pending) {
			capture_stream_free(s);
			return -ENOMEM;
		}
	}
	if (pipe2(s->pipe_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		int r = negative_errno();

		capture_stream_free(s);
		return r;
	}
	/* A bigger pipe moves more sub-buffers per splice(); the default may not even hold one. */
	size = fcntl(s->pipe_fd[1], F_SETPIPE_SZ, (int)CAPTURE_PIPE_BYTES);
	if (size < 0)
		size = fcntl(s->pipe_fd[1], F_GETPIPE_SZ);
	if (size < (int)c->subbuf_size) {
		capture_stream_free(s);
		return -ENOBUFS;
	}
	/* Whatever is spliced is read into the batch right after: no more than it holds. */
	s->splice_bytes = (size_t)size / c->subbuf_size * c->subbuf_size;
	if (s->pending)
		s->splice_bytes = MIN(s->splice_bytes, (size_t)s->batch_bytes);
	*ret = s;
	return 0;
}

/**
 * capture_stream_free() - free a stream that is not (or no longer) in a worker.
 * @s: stream or NULL
 *
 * Return: NULL.
 */
struct capture_stream *capture_stream_free(struct capture_stream *s)
{
	if (!s)
		return NULL;
	safe_close(s->trace_fd);
	safe_close(s->stats_fd);
	close_pair(s->pipe_fd);
	if (s->hold)
		s->hold = hold_free(s->hold);
	else
		free(s->pending);
	free(s);
	return NULL;
}

/**
 * capture_stream_cut() - where the last rotation cut the stream.
 * @s: stream
 * @ret: the cut; generation 0 means there was none yet
 */
void capture_stream_cut(const struct capture_stream *s, struct capture_cut *ret)
{
	uint32_t gen = atomic_load_explicit(&s->cut_generation, memory_order_acquire);

	*ret = (struct capture_cut){
		.generation = gen,
		.bytes_stored = s->cut_bytes_stored,
		.chunks = s->cut_chunks,
	};
}

void capture_stream_counters(const struct capture_stream *s, struct capture_counters *ret)
{
	*ret = (struct capture_counters){
		.bytes_raw = atomic_load_explicit(&s->bytes_raw, memory_order_relaxed),
		.bytes_stored = atomic_load_explicit(&s->bytes_stored, memory_order_relaxed),
		.chunks = atomic_load_explicit(&s->chunks, memory_order_relaxed),
		.discarded = atomic_load_explicit(&s->discarded, memory_order_relaxed),
		.clears = atomic_load_explicit(&s->clears, memory_order_relaxed),
		.cleared = atomic_load_explicit(&s->cleared, memory_order_relaxed),
		.error = atomic_load_explicit(&s->error, memory_order_relaxed),
		.finished = atomic_load_explicit(&s->finished, memory_order_acquire),
	};
}

/*
 * Moves @n bytes of whole sub-buffers from the stream's pipe to its spool.
 * zstd: straight into the pending batch, compressed each time it is full
 * (a wake-up may bring only a few sub-buffers; see CAPTURE_BATCH_BYTES).
 * none: spliced on, never copied.
 */
static int store_from_pipe(struct capture_scratch *w, struct capture_stream *s, size_t n)
{
	int r;

	if (s->zstd || s->ring) {
		for (size_t left = n; left > 0;) {
			size_t want = MIN(left, (size_t)s->batch_bytes - s->n_pending);

			/* One clock read a batch: its age is capture_stream_freshen()'s. */
			if (s->n_pending == 0)
				s->pending_since = monotonic_usec();
			r = loop_read_exact(s->pipe_fd[0], s->pending + s->n_pending, want);
			if (r < 0)
				return r;
			s->n_pending += want;
			capture_store_held(s);
			left -= want;
			if (s->n_pending == s->batch_bytes) {
				r = capture_store_flush(w, s);
				if (r < 0)
					return r;
			}
		}
		atomic_fetch_add_explicit(&s->bytes_raw, n, memory_order_relaxed);
		return 0;
	}
	for (size_t left = n; left > 0;) {
		ssize_t k = splice(s->pipe_fd[0], NULL, s->spool_fd, NULL, left, SPLICE_F_MOVE);

		if (k <= 0) {
			size_t whole;

			if (k < 0 && errno == EINTR)
				continue;
			r = k < 0 ? -errno : -EIO;
			/*
			 * A full disk can stop us half-way: the whole sub-buffers that
			 * made it are good data; a torn one past them is never copied.
			 */
			whole = (n - left) / s->subbuf_size * s->subbuf_size;
			s->torn = n - left - whole;
			atomic_fetch_add_explicit(&s->bytes_raw, whole, memory_order_relaxed);
			capture_store_stored(s, whole, 0);
			return r;
		}
		left -= (size_t)k;
	}
	atomic_fetch_add_explicit(&s->bytes_raw, n, memory_order_relaxed);
	capture_store_stored(s, n, 0);
	return 0;
}

/*
 * Splices full sub-buffers until the kernel has none left (returns 0) or
 * @max_bytes (0: no limit) have been moved (returns 1).
 */
static int drain_full_pages(struct capture_scratch *w, struct capture_stream *s,
			    uint64_t max_bytes)
{
	for (uint64_t moved = 0; max_bytes == 0 || moved < max_bytes;) {
		ssize_t n = splice(s->trace_fd, NULL, s->pipe_fd[1], NULL, s->splice_bytes,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		int r;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		if (n == 0)
			return 0;
		if ((size_t)n % s->subbuf_size != 0)
			return -EPROTO; /* splice moves whole sub-buffers; anything else is a bug */
		r = store_from_pipe(w, s, (size_t)n);
		if (r < 0)
			return r;
		moved += (uint64_t)n;
	}
	return 1;
}

/* read() one sub-buffer into @buf, padding a short one; 0 when nothing is left. */
static ssize_t read_partial(struct capture_stream *s, uint8_t *buf)
{
	for (;;) {
		ssize_t k = read(s->trace_fd, buf, s->subbuf_size);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (k > 0)
			memset(buf + k, 0, s->subbuf_size - (size_t)k);
		return k;
	}
}

/*
 * Splice refuses a partly filled sub-buffer; read() hands it over (as a
 * whole sub-buffer whose commit field says how much is valid) - after
 * tracing was turned off, or while it is on (a rotation's cut: the events
 * read are consumed, later ones stay for the next read). At most @max_reads
 * sub-buffers, so a busy CPU cannot keep the worker here. Then what is
 * pending is compressed.
 */
static int drain_partial_pages(struct capture_scratch *w, struct capture_stream *s,
			       unsigned max_reads)
{
	unsigned reads = 0;
	ssize_t k = 0;
	int r;

	if (s->zstd || s->ring) {
		while (reads++ < max_reads) {
			if (s->n_pending + s->subbuf_size > s->batch_bytes) {
				r = capture_store_flush(w, s);
				if (r < 0)
					return r;
			}
			k = read_partial(s, s->pending + s->n_pending);
			if (k <= 0)
				break;
			s->n_pending += s->subbuf_size;
			capture_store_held(s);
			atomic_fetch_add_explicit(&s->bytes_raw, s->subbuf_size,
						  memory_order_relaxed);
		}
		return k < 0 ? (int)k : capture_store_flush(w, s);
	}
	while (reads++ < max_reads && (k = read_partial(s, w->raw)) > 0) {
		r = loop_write(s->spool_fd, w->raw, s->subbuf_size);
		if (r < 0) {
			capture_store_discarded(s, w->raw, s->subbuf_size);
			return r;
		}
		atomic_fetch_add_explicit(&s->bytes_raw, s->subbuf_size, memory_order_relaxed);
		capture_store_stored(s, s->subbuf_size, 0);
	}
	return k < 0 ? (int)k : 0;
}

/*
 * The kernel's count of events handed to readers on this CPU so far, and
 * of those it lost (overwritten or dropped).
 */
static struct spool_start read_start_counters(struct capture_stream *s)
{
	struct cpu_counters c;
	char buf[1024];
	ssize_t n;

	if (s->stats_fd < 0)
		return SPOOL_START_UNKNOWN;
	n = pread(s->stats_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return SPOOL_START_UNKNOWN;
	buf[n] = '\0';
	if (instance_parse_cpu_counters(buf, &c) < 0 || !strstr(buf, "read events:"))
		return SPOOL_START_UNKNOWN;
	return (struct spool_start){ .read = c.read, .overrun = c.overrun, .dropped = c.dropped };
}

/*
 * A spool begins with its header: what the kernel had handed out on this
 * CPU before this spool took over. Called by the worker at the exact cut,
 * so everything consumed later is in this spool (unless lost in flight,
 * which is what recovery checks with it).
 */
static int write_spool_header(struct capture_stream *s, int spool_fd)
{
	struct spool_start start = read_start_counters(s);
	int r;

	r = spool_write_header(spool_fd, &start, &s->spool_pos);
	if (r < 0)
		return r;
	s->spool_data = s->spool_pos;
	if (s->hold) /* nothing pending: a new spool, none of its records stored yet */
		atomic_store_explicit(&s->hold->hdr->stored, 0, memory_order_release);
	s->kicked = s->dropped = s->spool_pos;
	s->mirror_kicked = s->mirror_dropped = s->mirror.base + s->spool_pos;
	s->spool_limit = spool_region_end(s->region_bytes, s->spool_pos);
	return 0;
}

/*
 * Every sub-buffer the stream holds but will never store: what is pending,
 * a sub-buffer torn by a failed splice (its head is at the spool's end, its
 * tail still in the pipe) and whole ones left in the pipe. Their events are
 * counted as discarded, so no summary says nothing was lost.
 */
static void discard_held(struct capture_stream *s)
{
	uint8_t *page = malloc(s->subbuf_size);
	off_t end;

	capture_store_discarded(s, s->pending, s->n_pending);
	s->n_pending = 0;
	capture_store_held(s); /* counted as lost: recovery must not bring them back */
	if (!page)
		return;
	if (s->torn > 0 && (end = lseek(s->spool_fd, 0, SEEK_CUR)) >= (off_t)s->torn &&
	    pread(s->spool_fd, page, s->torn, end - (off_t)s->torn) == (ssize_t)s->torn &&
	    loop_read_exact(s->pipe_fd[0], page + s->torn, s->subbuf_size - s->torn) >= 0)
		capture_store_discarded(s, page, s->subbuf_size);
	s->torn = 0;
	while (loop_read_exact(s->pipe_fd[0], page, s->subbuf_size) >= 0)
		capture_store_discarded(s, page, s->subbuf_size);
	free(page);
}

/**
 * capture_stream_fail() - stop reading a stream after an error, and tell its session.
 * @s: stream
 * @error: -errno (a full spool file system, say)
 *
 * What the spool holds stays valid: the counters only ever cover complete
 * chunk records. Events read from the kernel and not stored are counted as
 * discarded. The worker stops polling the stream's trace fd.
 */
void capture_stream_fail(struct capture_stream *s, int error)
{
	int expected = 0;

	atomic_compare_exchange_strong(&s->error, &expected, error);
	log_error_errno(error, "CPU %u: capture stopped: %m", s->cpu);
	if (!s->dead)
		discard_held(s);
	s->dead = true;
	capture_store_notify(s);
}

/**
 * capture_stream_rotate() - cut the stream, and continue into @spool_fd.
 * @s: stream
 * @w: the worker's scratch
 * @spool_fd: the next spool (borrowed); -EBADF for a ring (a flush)
 * @spool_id: its trace id, for the hold (0: a ring)
 *
 * What the kernel holds now (it wakes us only at its watermark,
 * buffer_percent, so at a low rate that can be everything since the last cut) and
 * what is pending go to the current spool, then the next spool takes
 * over. The cut is published and the session notified.
 */
void capture_stream_rotate(struct capture_stream *s, struct capture_scratch *w, int spool_fd,
			   uint64_t spool_id)
{
	int r;

	if (!s->dead) {
		r = drain_full_pages(w, s, ROTATE_BYTES_MAX);
		if (r >= 0)
			r = drain_partial_pages(w, s, ROTATE_READS_MAX);
		if (r < 0)
			capture_stream_fail(s, r);
	}
	s->cut_bytes_stored = atomic_load_explicit(&s->bytes_stored, memory_order_relaxed);
	s->cut_chunks = atomic_load_explicit(&s->chunks, memory_order_relaxed);
	if (!s->ring) {
		/* Nothing pending now (or dead, and counted): the hold is the next spool's. */
		if (s->hold)
			atomic_store_explicit(&s->hold->hdr->spool_id, spool_id,
					      memory_order_release);
		if (!s->dead) {
			r = write_spool_header(s, spool_fd);
			if (r < 0)
				capture_stream_fail(s, r);
		}
		s->spool_fd = spool_fd;
	}
	atomic_fetch_add_explicit(&s->cut_generation, 1, memory_order_release);
	capture_store_notify(s);
}

/**
 * capture_stream_read_now() - read what the kernel holds now, partial sub-buffers too (-s).
 * @s: stream being read
 * @w: the worker's scratch
 *
 * As a rotation's drain, without its cut: the events read are consumed,
 * later ones stay for the next read or the watermark's wake-up.
 */
void capture_stream_read_now(struct capture_stream *s, struct capture_scratch *w)
{
	int r;

	if (s->dead)
		return;
	r = drain_full_pages(w, s, ROTATE_BYTES_MAX);
	if (r >= 0)
		r = drain_partial_pages(w, s, ROTATE_READS_MAX);
	if (r < 0)
		capture_stream_fail(s, r);
}

/**
 * capture_stream_finish() - the final drain: everything the kernel holds, then finished.
 * @s: stream, no longer polled
 * @w: the worker's scratch
 *
 * After this the session may free the stream.
 */
void capture_stream_finish(struct capture_stream *s, struct capture_scratch *w)
{
	int r = 0;

	if (!s->dead) {
		r = drain_full_pages(w, s, /* max_bytes= */ 0);
		if (r >= 0)
			r = drain_partial_pages(w, s, UINT_MAX);
		if (r < 0)
			capture_stream_fail(s, r);
	}
	atomic_store_explicit(&s->finished, true, memory_order_release);
	capture_store_notify(s);
}

/* Events the kernel took on this CPU, as its counters tell (a clear resets them). */
static uint64_t taken(const struct cpu_counters *c)
{
	return c->read + c->overrun + c->entries;
}

/*
 * Another process clearing the buffer (": > trace") resets the kernel's
 * counters, and loses what the buffer held: nothing in the counters says
 * so afterwards. Read at every turn that moved data, they are caught
 * going back. The estimate of what was lost: what the buffer held at the
 * turn before, plus what came in after it at the rate events came in
 * before, less what the counters counted since the clear. One small read
 * per turn, next to the splices of a batch.
 */
static void watch_counters(struct capture_stream *s)
{
	uint64_t usec = monotonic_usec();
	struct cpu_counters now;
	char buf[1024];
	ssize_t n;

	if (s->stats_fd < 0)
		return;
	n = pread(s->stats_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (instance_parse_cpu_counters(buf, &now) < 0)
		return;
	if (now.read < s->seen.read || now.overrun < s->seen.overrun) {
		double came = s->events_per_usec * (double)(usec - s->seen_usec);
		uint64_t lost = s->seen.entries;

		if (came > (double)taken(&now))
			lost += (uint64_t)(came - (double)taken(&now));
		atomic_fetch_add_explicit(&s->clears, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->cleared, lost, memory_order_relaxed);
		capture_store_notify(s);
	} else if (s->seen_usec && usec > s->seen_usec) {
		s->events_per_usec = (double)(taken(&now) - taken(&s->seen)) /
				     (double)(usec - s->seen_usec);
	}
	s->seen = now;
	s->seen_usec = usec;
}

/**
 * capture_stream_drain() - move whole sub-buffers the kernel holds into the spool or ring.
 * @s: stream being read
 * @w: the worker's scratch
 * @max_bytes: moves about this much at most (0: until the kernel has none left)
 *
 * Return: 0 when the kernel has no whole sub-buffer left, 1 when the turn
 * is over first, or -errno (the caller fails the stream).
 */
int capture_stream_drain(struct capture_stream *s, struct capture_scratch *w, uint64_t max_bytes)
{
	uint64_t before = atomic_load_explicit(&s->bytes_raw, memory_order_relaxed);
	int r = drain_full_pages(w, s, max_bytes);

	if (r >= 0 && atomic_load_explicit(&s->bytes_raw, memory_order_relaxed) != before)
		watch_counters(s);
	return r;
}

/**
 * capture_stream_freshen() - store a pending batch that has waited CAPTURE_FRESH_USEC.
 * @s: stream held by the calling worker
 * @w: the worker's scratch
 * @now: CLOCK_MONOTONIC usec
 * @deadline: lowered to when the batch still pending must be stored (0: none yet)
 *
 * The batch fills at the rate events come; below a batch a second it
 * would sit in the worker's heap, which a kill -9 takes with it. Stored
 * now, it is in the spool's pages, which the next start recovers. Only
 * streams into a spool: a flight ring lives in the heap anyway, and a
 * snapshot brings it up to date (capture_pool_flush()).
 *
 * Return: 0, or -errno (the caller fails the stream).
 */
int capture_stream_freshen(struct capture_stream *s, struct capture_scratch *w, uint64_t now,
			   uint64_t *deadline)
{
	uint64_t due;

	if (s->dead || s->ring || s->n_pending == 0)
		return 0;
	due = s->pending_since + CAPTURE_FRESH_USEC;
	if (now >= due)
		return capture_store_flush(w, s);
	if (*deadline == 0 || due < *deadline)
		*deadline = due;
	return 0;
}

/**
 * capture_stream_begin() - a stream starts reading: its spool's header at the exact start.
 * @s: stream, just handed to its worker
 *
 * Return: 0 or -errno (the caller fails the stream).
 */
int capture_stream_begin(struct capture_stream *s)
{
	watch_counters(s);
	return s->ring ? 0 : write_spool_header(s, s->spool_fd);
}

int capture_stream_trace_fd(const struct capture_stream *s)
{
	return s->trace_fd;
}

unsigned capture_stream_cpu(const struct capture_stream *s)
{
	return s->cpu;
}

bool capture_stream_has_ring(const struct capture_stream *s)
{
	return s->ring;
}

bool capture_stream_dead(const struct capture_stream *s)
{
	return s->dead;
}

bool capture_stream_drain_only(const struct capture_stream *s)
{
	return s->drain_only;
}

unsigned capture_stream_rt_priority(const struct capture_stream *s)
{
	return s->rt_priority;
}

/**
 * capture_scratch_init() - a worker's buffers and zstd context.
 * @w: scratch to fill in
 *
 * Return: 0 or -ENOMEM (capture_scratch_done() then cleans up).
 */
int capture_scratch_init(struct capture_scratch *w)
{
	int r;

	*w = (struct capture_scratch){};
	r = compressor_new(&w->zc);
	if (r >= 0)
		r = compressor_for_chunks(w->zc);
	if (r < 0)
		return r;
	/* One sub-buffer of the largest size, for the final drain in "none" mode. */
	w->raw_cap = SUBBUF_KB_MAX * 1024u;
	w->raw = malloc(w->raw_cap);
	w->out_cap = chunk_record_bound(MAX(CHUNK_TARGET_BYTES, SUBBUF_KB_MAX * 1024u));
	w->out = malloc(w->out_cap);
	return w->raw && w->out ? 0 : -ENOMEM;
}

/**
 * capture_scratch_done() - free what capture_scratch_init() made; idempotent.
 * @w: scratch
 */
void capture_scratch_done(struct capture_scratch *w)
{
	w->zc = compressor_free(w->zc);
	w->raw = mfree(w->raw);
	w->out = mfree(w->out);
}
