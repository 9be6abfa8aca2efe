// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The capture data path without a kernel: a pipe stands in for
 * trace_pipe_raw. Synthetic sub-buffers go in; what the stream stores
 * (spool of chunk records, raw spool, or a flight recorder's ring) must
 * hold every event exactly once, in whole sub-buffers, with the counters
 * and the rotation cut telling the truth.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture-stream.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/store/hold.h"
#include "daemon/store/spool.h"
#include "ftraced/macro.h"
#include "lib/chunk-record.h"
#include "lib/rb-page.h"
#include "tests/unit/v7-fixture.h"

#define PAGE 4096u
/* What a default pipe holds: the source is refilled in rounds of this many pages. */
#define PAGES_PER_ROUND 8u

struct rig {
	int src[2];          /* [1]: the test writes sub-buffers; [0]: the stream's trace fd */
	int spool_fd;
	int notify_fd;
	_Atomic uint64_t progress;
	struct capture_scratch scratch;
	struct capture_stream *stream;
};

/*
 * @wake_bytes: what the kernel would hold at each wake-up (0: unknown);
 * @notify_bytes: progress notifications every this many bytes stored (0: none).
 */
static void rig_init_full(struct rig *g, bool zstd, struct chunk_ring *ring, uint64_t wake_bytes,
			  uint64_t notify_bytes)
{
	struct capture_stream_config c;

	assert(pipe2(g->src, O_CLOEXEC | O_NONBLOCK) == 0);
	g->spool_fd = ring ? -EBADF : memfd_create("spool", MFD_CLOEXEC);
	g->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert(g->notify_fd >= 0 && (ring || g->spool_fd >= 0));
	g->progress = 0;
	c = (struct capture_stream_config){
		.cpu = 0,
		.trace_fd = g->src[0],
		.stats_fd = -EBADF,
		.spool_fd = g->spool_fd,
		.ring = ring,
		.notify_fd = g->notify_fd,
		.subbuf_size = PAGE,
		.zstd = zstd,
		.level = 3,
		.progress = &g->progress,
		.wake_bytes = wake_bytes,
		.notify_bytes = notify_bytes,
	};
	assert(capture_scratch_init(&g->scratch) == 0);
	assert(capture_stream_new(&c, &g->stream) == 0);
	assert(capture_stream_begin(g->stream) == 0);
}

static void rig_init(struct rig *g, bool zstd, struct chunk_ring *ring)
{
	rig_init_full(g, zstd, ring, 0, 0);
}

/* Feeds @n_pages pages of @c, from @first, draining as a worker would. */
static void feed(struct rig *g, const struct cpu_pages *c, size_t first, size_t n_pages)
{
	for (size_t pg = first; pg < first + n_pages;) {
		size_t k = MIN((size_t)PAGES_PER_ROUND, first + n_pages - pg);

		assert(write(g->src[1], c->pages + pg * PAGE, k * PAGE) == (ssize_t)(k * PAGE));
		assert(capture_stream_drain(g->stream, &g->scratch, 0) == 0);
		pg += k;
	}
}

static void rig_done(struct rig *g)
{
	g->stream = capture_stream_free(g->stream); /* closes src[0] */
	safe_close(g->src[1]);
	safe_close(g->spool_fd);
	safe_close(g->notify_fd);
	capture_scratch_done(&g->scratch);
}

static void test_spool(bool zstd)
{
	struct capture_counters n;
	struct cpu_pages c = {};
	struct spool_scan scan;
	struct rig g;

	make_pages(&c, 0, 20000, PAGE);
	rig_init(&g, zstd, NULL);
	feed(&g, &c, 0, c.n_pages);
	capture_stream_counters(g.stream, &n);
	/* zstd: part of it is still pending, not stored. */
	assert(n.bytes_raw == c.n_pages * PAGE && !n.finished && n.error == 0);
	capture_stream_finish(g.stream, &g.scratch);
	capture_stream_counters(g.stream, &n);
	assert(n.finished && n.error == 0);
	assert(g.progress == n.bytes_stored);
	spool_scan(g.spool_fd, 0, zstd, PAGE, &scan);
	assert(scan.bytes == n.bytes_stored && scan.events == 20000);
	assert(zstd ? scan.chunks == n.chunks && n.bytes_stored < n.bytes_raw :
	       n.bytes_stored == n.bytes_raw);
	/* A file's chunks are CHUNK_TARGET_BYTES, but for the last. */
	assert(!zstd || n.chunks == (n.bytes_raw + CHUNK_TARGET_BYTES - 1) / CHUNK_TARGET_BYTES);
	rig_done(&g);
	free(c.pages);
}

/*
 * Each wake-up brings a whole batch: the stream compresses chunk by chunk
 * as the data comes (holding one chunk, not a batch), and stores the same.
 * In a flight ring of 2 MiB a chunk stores at most 1/16 of it: the first
 * is that much raw, and the next ones grow with what it compressed to, up
 * to a file's chunk.
 */
static void test_ring_chunk_at_a_time(void)
{
	const uint64_t budget = 16 * 128 * 1024, chunk = budget / CHUNKS_PER_RING_MIN;
	struct chunk_ring_stats st;
	struct chunk_ring *ring;
	struct capture_counters n;
	struct cpu_pages c = {};
	struct chunk_list l;
	struct rig g;

	assert(capture_ring_chunk_target(budget) == chunk && chunk < CAPTURE_BATCH_BYTES);
	assert(capture_ring_chunk_target(UINT64_MAX) == CHUNK_TARGET_BYTES);
	assert(chunk_ring_new(budget, &ring) == 0);
	make_pages(&c, 0, 24000, PAGE);
	rig_init_full(&g, true, ring, CAPTURE_BATCH_BYTES, 0);
	feed(&g, &c, 0, c.n_pages);
	capture_stream_counters(g.stream, &n);
	chunk_ring_stats(ring, &st);
	/* Every whole chunk is stored already: less than one waits. */
	assert(n.bytes_raw == c.n_pages * PAGE);
	assert(n.bytes_raw - st.raw_bytes - st.evicted_raw_bytes < CHUNK_TARGET_BYTES);
	assert(st.evicted_chunks == 0 && n.chunks == st.chunks);
	assert(chunk_ring_collect(ring, &l) == 0);
	/* The first is 1/16 raw; the second grows by its ratio; both store about 1/16. */
	assert(l.n > 1 && l.chunks[0]->raw_size == chunk);
	assert(l.chunks[1]->raw_size == (uint64_t)chunk * chunk / l.chunks[0]->size / PAGE * PAGE);
	assert(l.chunks[1]->raw_size > chunk);
	for (size_t i = 0; i < l.n; i++)
		assert(l.chunks[i]->size <= chunk + chunk / 4 &&
		       l.chunks[i]->raw_size <= CHUNK_TARGET_BYTES);
	chunk_list_done(&l);
	capture_stream_finish(g.stream, &g.scratch);
	capture_stream_counters(g.stream, &n);
	assert(n.finished && n.error == 0 && n.bytes_raw == c.n_pages * PAGE);
	rig_done(&g);
	chunk_ring_free(ring);
	free(c.pages);
}

static void test_rotation(void)
{
	struct cpu_pages c = {};
	struct spool_scan first, second;
	struct capture_cut cut;
	struct capture_counters n;
	int next = memfd_create("next", MFD_CLOEXEC);
	size_t half;
	struct rig g;

	make_pages(&c, 0, 30000, PAGE);
	half = c.n_pages / 2;
	rig_init(&g, true, NULL);
	feed(&g, &c, 0, half);
	/* The cut takes what is pending into the first spool, then the next one takes over. */
	capture_stream_rotate(g.stream, &g.scratch, next, 0);
	capture_stream_cut(g.stream, &cut);
	assert(cut.generation == 1);
	feed(&g, &c, half, c.n_pages - half);
	capture_stream_finish(g.stream, &g.scratch);
	capture_stream_counters(g.stream, &n);
	spool_scan(g.spool_fd, 0, true, PAGE, &first);
	spool_scan(next, 0, true, PAGE, &second);
	assert(first.bytes == cut.bytes_stored && first.chunks == cut.chunks);
	assert(second.bytes == n.bytes_stored - cut.bytes_stored);
	/* Every event in exactly one of them. */
	assert(first.events + second.events == 30000);
	assert(first.events > 0 && second.events > 0);
	rig_done(&g);
	close(next);
	free(c.pages);
}

/*
 * Less than a batch, then nothing: the pending sub-buffers are stored once
 * they have waited CAPTURE_FRESH_USEC, not before, and not again.
 */
static void test_freshen(void)
{
	uint64_t deadline = 0, later = 0;
	struct capture_counters n;
	struct cpu_pages c = {};
	struct spool_scan scan;
	struct rig g;

	make_pages(&c, 0, 1000, PAGE);
	assert(c.n_pages * PAGE < CAPTURE_BATCH_BYTES);
	rig_init(&g, true, NULL);
	assert(capture_stream_freshen(g.stream, &g.scratch, 0, &deadline) == 0 && deadline == 0);
	feed(&g, &c, 0, c.n_pages);
	assert(capture_stream_freshen(g.stream, &g.scratch, 0, &deadline) == 0);
	assert(deadline > CAPTURE_FRESH_USEC);
	assert(capture_stream_freshen(g.stream, &g.scratch, deadline - 1, &later) == 0);
	assert(later == deadline);
	capture_stream_counters(g.stream, &n);
	assert(n.bytes_raw == c.n_pages * PAGE && n.bytes_stored == 0);
	later = 0;
	assert(capture_stream_freshen(g.stream, &g.scratch, deadline, &later) == 0 && later == 0);
	spool_scan(g.spool_fd, 0, true, PAGE, &scan);
	assert(scan.events == 1000 && scan.chunks == 1);
	assert(capture_stream_freshen(g.stream, &g.scratch, UINT64_MAX, &later) == 0 && later == 0);
	capture_stream_finish(g.stream, &g.scratch);
	spool_scan(g.spool_fd, 0, true, PAGE, &scan);
	assert(scan.events == 1000 && scan.chunks == 1);
	rig_done(&g);
	free(c.pages);
}

/*
 * Into a compressed spool, the batch is a hold whose header tracks it: how
 * much is held, and how much of the spool came before. A reader after a
 * crash finds exactly what the spool lacks, and nothing once it is stored.
 */
static void test_hold(void)
{
	char dir[] = "/tmp/test-hold-XXXXXX";
	uint64_t deadline = 0;
	struct capture_stream_config c;
	struct cpu_pages p = {};
	struct spool_scan scan;
	uint8_t *held = NULL;
	size_t n_held = 0;
	struct rig g;
	int dir_fd;

	assert(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(dir_fd >= 0);
	make_pages(&p, 0, 1000, PAGE);
	assert(pipe2(g.src, O_CLOEXEC | O_NONBLOCK) == 0);
	g.spool_fd = memfd_create("spool", MFD_CLOEXEC);
	g.notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c = (struct capture_stream_config){
		.trace_fd = g.src[0], .stats_fd = -EBADF, .spool_fd = g.spool_fd,
		.notify_fd = g.notify_fd, .subbuf_size = PAGE, .zstd = true, .level = 1,
		.hold_dir_fd = dir_fd, .spool_id = 42,
	};
	assert(capture_scratch_init(&g.scratch) == 0);
	assert(capture_stream_new(&c, &g.stream) == 0);
	assert(capture_stream_begin(g.stream) == 0);
	feed(&g, &p, 0, p.n_pages);
	/* Held: found for its spool, CPU and the spool's size, and only then. */
	assert(hold_find(dir_fd, 42, 0, PAGE, 0, &held, &n_held) == 1);
	assert(n_held == p.n_pages * PAGE && memcmp(held, p.pages, n_held) == 0);
	free(held);
	assert(hold_find(dir_fd, 43, 0, PAGE, 0, &held, &n_held) == 0);
	assert(hold_find(dir_fd, 42, 1, PAGE, 0, &held, &n_held) == 0);
	assert(hold_find(dir_fd, 42, 0, PAGE, 1, &held, &n_held) == 0);
	/* Stored: the spool holds it, the hold nothing. */
	assert(capture_stream_freshen(g.stream, &g.scratch, 0, &deadline) == 0);
	assert(capture_stream_freshen(g.stream, &g.scratch, deadline, &deadline) == 0);
	spool_scan(g.spool_fd, 0, true, PAGE, &scan);
	assert(scan.events == 1000);
	assert(hold_find(dir_fd, 42, 0, PAGE, scan.bytes, &held, &n_held) == 0);
	/* No spool left: pruned; the directory is empty again. */
	hold_dir_prune(dir_fd, -EBADF);
	rig_done(&g);
	assert(rmdir(dir) == 0);
	close(dir_fd);
	free(p.pages);
}

static int count_event(const struct rb_event *e, void *userdata)
{
	(*(uint64_t *)userdata)++;
	return 0;
}

static void test_ring(void)
{
	struct chunk_ring *ring;
	struct capture_counters n;
	struct cpu_pages c = {};
	struct chunk_list l;
	struct capture_cut cut;
	uint64_t events = 0;
	uint8_t *raw;
	struct rig g;

	assert(chunk_ring_new(UINT64_MAX, &ring) == 0);
	make_pages(&c, 0, 5000, PAGE);
	rig_init(&g, true, ring);
	feed(&g, &c, 0, c.n_pages);
	/* A flush (a snapshot) pushes what is pending and publishes a cut. */
	capture_stream_rotate(g.stream, &g.scratch, -EBADF, 0);
	capture_stream_cut(g.stream, &cut);
	capture_stream_counters(g.stream, &n);
	assert(cut.generation == 1 && n.bytes_raw == c.n_pages * PAGE);
	assert(chunk_ring_collect(ring, &l) == 0);
	assert(l.raw_bytes == c.n_pages * PAGE && l.bytes == n.bytes_stored && l.n == n.chunks);
	assert(l.chunks[0]->first_ts == c.first_ts);
	for (size_t i = 0; i < l.n; i++) {
		raw = malloc(l.chunks[i]->raw_size);
		assert(raw);
		assert(chunk_record_decode(l.chunks[i]->data, l.chunks[i]->size, PAGE, raw,
					   l.chunks[i]->raw_size) == 0);
		for (size_t off = 0; off < l.chunks[i]->raw_size; off += PAGE)
			assert(rb_page_foreach_event(raw + off, PAGE, count_event, &events) >= 0);
		free(raw);
	}
	assert(events == 5000);
	chunk_list_done(&l);
	rig_done(&g);
	chunk_ring_free(ring);
	free(c.pages);
}

static void test_failure_is_reported(void)
{
	struct capture_counters n;
	struct cpu_pages c = {};
	uint64_t v = 0;
	struct rig g;
	int ro;

	make_pages(&c, 0, 1000, PAGE);
	rig_init(&g, false, NULL);
	/* The spool refuses the data (a read-only fd in its place stands in for a bad disk). */
	ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert(ro >= 0 && dup3(ro, g.spool_fd, O_CLOEXEC) == g.spool_fd);
	close(ro);
	assert(write(g.src[1], c.pages, PAGE) == PAGE);
	assert(capture_stream_drain(g.stream, &g.scratch, 0) < 0);
	capture_stream_fail(g.stream, -EBADF);
	capture_stream_counters(g.stream, &n);
	assert(n.error == -EBADF && capture_stream_dead(g.stream) && n.bytes_stored == 0);
	assert(read(g.notify_fd, &v, sizeof(v)) == sizeof(v) && v >= 1);
	rig_done(&g);
	free(c.pages);
}

/* Notifications pending on the rig's eventfd (0 if none), cleared. */
static uint64_t notifications(struct rig *g)
{
	uint64_t v = 0;

	if (read(g->notify_fd, &v, sizeof(v)) != sizeof(v))
		assert(errno == EAGAIN);
	return v;
}

/*
 * The session hears of the first stored bytes (it keeps the symbols fresh
 * once events fire, session-symbols.c), then every notify_bytes.
 */
static void test_progress_notifications(void)
{
	const uint64_t every = 16 * PAGE;
	struct cpu_pages c = {};
	struct rig g;

	make_pages(&c, 0, 5000, PAGE);
	assert(c.n_pages >= 20);
	rig_init_full(&g, false, NULL, 0, every);
	assert(notifications(&g) == 0);
	feed(&g, &c, 0, 1);
	assert(notifications(&g) == 1);
	feed(&g, &c, 1, 15);
	assert(notifications(&g) == 0);
	feed(&g, &c, 16, 1); /* 17 pages stored: the first page plus 16 */
	assert(notifications(&g) == 1);
	feed(&g, &c, 17, 3);
	assert(notifications(&g) == 0);
	rig_done(&g);
	free(c.pages);
}

int main(void)
{
	test_spool(true);
	test_ring_chunk_at_a_time();
	test_spool(false);
	test_rotation();
	test_freshen();
	test_hold();
	test_ring();
	test_failure_is_reported();
	test_progress_notifications();
	return 0;
}
