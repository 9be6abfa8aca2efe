// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Capture workers: one thread per CPU, shared by every session. A worker
 * waits in its own epoll on the trace_pipe_raw fd of each stream (one
 * stream = one session on that CPU) plus a wake-up eventfd, so the number
 * of threads is bounded by the CPU count and an idle worker sleeps.
 *
 * Data path of a stream: splice() trace_pipe_raw -> the stream's pipe, in
 * whole sub-buffers, then
 *   - "none": splice() pipe -> spool file, raw pages;
 *   - "zstd": read() the pipe into the stream's pending batch (about
 *     512 KiB) and, when it is full, compress it as chunks of whole
 *     sub-buffers (about 128 KiB), each an independent zstd frame with a
 *     checksum, appended to the spool as `u32 csize, u32 usize, frame` -
 *     exactly the v7 chunk record, so the file is later assembled by
 *     copying the spool as it is. Raw pages never reach the disk and
 *     nothing is compressed twice.
 *
 * Flight recorder (memory backend): the stream has a chunk ring instead of
 * a spool. Sub-buffers always go through the pending batch and each chunk
 * (compressed, or raw with "none") is pushed to the ring, which evicts the
 * oldest. A flush (capture_pool_flush(), for a snapshot) drains the kernel
 * and pushes what is pending, then publishes a cut like a rotation.
 *
 * Rotation (segments of a continuous session): capture_pool_rotate() makes
 * the worker compress what is pending into the current spool, publish the
 * cut (totals stored so far) and switch to the next spool. Sub-buffers are
 * consumed from the kernel exactly once, so every event lands in exactly
 * one segment, and capture never pauses.
 *
 * Ownership: the main thread creates a stream, hands it to the pool with
 * capture_pool_add() and asks for it back with capture_pool_finish(). From
 * add to finished, only the worker touches the stream's fds and buffers;
 * it publishes progress through atomic counters and, once the final drain
 * is done, sets `finished` and signals the stream's notify eventfd. After
 * that the main thread may free it. Workers never touch sd-event,
 * connections or sessions.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/capture.h"
#include "daemon/chunk-ring.h"
#include "daemon/log.h"
#include "daemon/spool.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"

#define EPOLL_BATCH 16
/* Splices per wake-up before other streams of the CPU get their turn. */
#define SPLICES_PER_TURN 8
/* A rotation drains what the kernel holds, but not for ever on a busy CPU. */
#define ROTATE_SPLICES_MAX 64
#define ROTATE_READS_MAX 64

struct capture_stream {
	unsigned cpu;
	int trace_fd;
	int stats_fd;
	int pipe_fd[2];
	size_t pipe_size;
	int spool_fd;
	struct chunk_ring *ring;
	int notify_fd;
	uint32_t subbuf_size;
	uint32_t chunk_bytes; /* a whole number of sub-buffers */
	uint32_t batch_bytes; /* a whole number of chunks */
	bool zstd;
	int level;

	uint64_t notify_bytes;

	/* Worker-only while the stream is in the pool. */
	bool dead;          /* an error stopped reading */
	uint64_t next_notify;
	uint8_t *pending;   /* zstd or ring: sub-buffers not stored yet, up to batch_bytes */
	size_t n_pending;

	_Atomic uint64_t bytes_raw;
	_Atomic uint64_t bytes_stored;
	_Atomic uint64_t chunks;
	_Atomic int error;
	_Atomic bool finished;
	/* The last cut; written before cut_generation is released. */
	uint64_t cut_bytes_stored;
	uint64_t cut_chunks;
	_Atomic uint32_t cut_generation;
};

enum cmd_op { CMD_ADD, CMD_ROTATE, CMD_FINISH, CMD_TEST_STALL };

struct cmd {
	enum cmd_op op;
	struct capture_stream *stream;
	int spool_fd; /* CMD_ROTATE: the next spool */
};

struct capture_worker {
	unsigned cpu;
	pthread_t thread;
	bool started;
	int epoll_fd;
	int wake_fd;

	/* CLOCK_MONOTONIC usec of the worker's last turn: it takes one at least every heartbeat. */
	_Atomic uint64_t beat_usec;

	pthread_mutex_t lock; /* protects queue and stop */
	struct cmd *queue;
	size_t n_queue;
	size_t cap_queue;
	bool stop;

	/* Worker-thread only. */
	struct compressor *zc;
	uint8_t *raw;
	size_t raw_cap;
	uint8_t *out;
	size_t out_cap;
};

struct capture_pool {
	unsigned n_cpus;
	struct capture_worker *workers;
};

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
		.next_notify = c->notify_bytes,
	};
	if (c->subbuf_size == 0 || c->subbuf_size > CAPTURE_PIPE_BYTES) {
		capture_stream_free(s);
		return -EINVAL;
	}
	s->chunk_bytes = MAX(1u, CHUNK_TARGET_BYTES / c->subbuf_size) * c->subbuf_size;
	s->batch_bytes = MAX(1u, CAPTURE_BATCH_BYTES / s->chunk_bytes) * s->chunk_bytes;
	if (s->zstd || s->ring) {
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
	s->pipe_size = (size_t)size / c->subbuf_size * c->subbuf_size;
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
		.error = atomic_load_explicit(&s->error, memory_order_relaxed),
		.finished = atomic_load_explicit(&s->finished, memory_order_acquire),
	};
}

static void notify(struct capture_stream *s)
{
	uint64_t one = 1;

	(void)!write(s->notify_fd, &one, sizeof(one));
}

/* Counts bytes and chunks that reached the spool; tells the session every notify_bytes. */
static void account_stored(struct capture_stream *s, uint64_t bytes, uint64_t chunks)
{
	uint64_t total;

	total = atomic_fetch_add_explicit(&s->bytes_stored, bytes, memory_order_relaxed) + bytes;
	if (chunks)
		atomic_fetch_add_explicit(&s->chunks, chunks, memory_order_relaxed);
	if (s->notify_bytes && total >= s->next_notify) {
		s->next_notify = total + s->notify_bytes;
		notify(s);
	}
}

/* Into the flight recorder's ring: a chunk record (or raw sub-buffers) and its time span. */
static int push_chunk(struct capture_stream *s, const uint8_t *record, size_t n,
		      const uint8_t *raw, size_t n_raw)
{
	struct chunk *c = chunk_new(n);

	if (!c)
		return -ENOMEM;
	memcpy(c->data, record, n);
	c->raw_size = (uint32_t)n_raw;
	c->first_ts = get_le64(raw);
	c->last_ts = get_le64(raw + n_raw - s->subbuf_size);
	return chunk_ring_push(s->ring, c);
}

/*
 * Stores the stream's pending sub-buffers chunk by chunk: each is framed as
 * a v7 chunk record (zstd) or left raw (ring without compression), then
 * appended to the spool or pushed to the ring.
 */
static int flush_pending(struct capture_worker *w, struct capture_stream *s)
{
	for (size_t off = 0; off < s->n_pending; off += s->chunk_bytes) {
		size_t len = MIN((size_t)s->chunk_bytes, s->n_pending - off), n = len;
		const uint8_t *raw = s->pending + off, *record = raw;
		int r;

		if (s->zstd) {
			r = chunk_record_encode(w->zc, s->level, raw, len, w->out, w->out_cap, &n);
			if (r < 0)
				return r;
			record = w->out;
		}
		r = s->ring ? push_chunk(s, record, n, raw, len) : loop_write(s->spool_fd, record, n);
		if (r < 0)
			return r;
		account_stored(s, n, 1);
	}
	s->n_pending = 0;
	return 0;
}

/*
 * Moves @n bytes of whole sub-buffers from the stream's pipe to its spool.
 * zstd: straight into the pending batch, compressed each time it is full
 * (a wake-up may bring only a few sub-buffers; see CAPTURE_BATCH_BYTES).
 * none: spliced on, never copied.
 */
static int store_from_pipe(struct capture_worker *w, struct capture_stream *s, size_t n)
{
	int r;

	if (s->zstd || s->ring) {
		for (size_t left = n; left > 0;) {
			size_t want = MIN(left, (size_t)s->batch_bytes - s->n_pending);

			r = loop_read_exact(s->pipe_fd[0], s->pending + s->n_pending, want);
			if (r < 0)
				return r;
			s->n_pending += want;
			left -= want;
			if (s->n_pending == s->batch_bytes) {
				r = flush_pending(w, s);
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
			atomic_fetch_add_explicit(&s->bytes_raw, whole, memory_order_relaxed);
			account_stored(s, whole, 0);
			return r;
		}
		left -= (size_t)k;
		io_count_written((uint64_t)k);
	}
	atomic_fetch_add_explicit(&s->bytes_raw, n, memory_order_relaxed);
	account_stored(s, n, 0);
	return 0;
}

/*
 * Splices full sub-buffers until the kernel has none left (returns 0) or
 * the turn is over (returns 1).
 */
static int drain_full_pages(struct capture_worker *w, struct capture_stream *s, unsigned max_turns)
{
	for (unsigned i = 0; max_turns == 0 || i < max_turns; i++) {
		ssize_t n = splice(s->trace_fd, NULL, s->pipe_fd[1], NULL, s->pipe_size,
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
static int drain_partial_pages(struct capture_worker *w, struct capture_stream *s,
			       unsigned max_reads)
{
	unsigned reads = 0;
	ssize_t k = 0;
	int r;

	if (s->zstd || s->ring) {
		while (reads++ < max_reads) {
			if (s->n_pending + s->subbuf_size > s->batch_bytes) {
				r = flush_pending(w, s);
				if (r < 0)
					return r;
			}
			k = read_partial(s, s->pending + s->n_pending);
			if (k <= 0)
				break;
			s->n_pending += s->subbuf_size;
			atomic_fetch_add_explicit(&s->bytes_raw, s->subbuf_size,
						  memory_order_relaxed);
		}
		return k < 0 ? (int)k : flush_pending(w, s);
	}
	while (reads++ < max_reads && (k = read_partial(s, w->raw)) > 0) {
		r = loop_write(s->spool_fd, w->raw, s->subbuf_size);
		if (r < 0)
			return r;
		atomic_fetch_add_explicit(&s->bytes_raw, s->subbuf_size, memory_order_relaxed);
		account_stored(s, s->subbuf_size, 0);
	}
	return k < 0 ? (int)k : 0;
}

/* The kernel's count of events handed to readers on this CPU so far. */
static uint64_t read_events(struct capture_stream *s)
{
	char buf[1024];
	const char *p;
	ssize_t n;

	if (s->stats_fd < 0)
		return UINT64_MAX;
	n = pread(s->stats_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	p = strstr(buf, "read events:");
	return p ? strtoull(p + strlen("read events:"), NULL, 10) : UINT64_MAX;
}

/*
 * A spool begins with its header: what the kernel had handed out on this
 * CPU before this spool took over. Called by the worker at the exact cut,
 * so everything consumed later is in this spool (unless lost in flight,
 * which is what recovery checks with it).
 */
static int write_spool_header(struct capture_stream *s, int spool_fd)
{
	return spool_write_header(spool_fd, read_events(s));
}

/*
 * Stops reading a stream after an error (a full spool file system, say) and
 * tells its session at once. What the spool holds stays valid: the
 * counters only ever cover complete chunk records.
 */
static void stream_fail(struct capture_worker *w, struct capture_stream *s, int error)
{
	int expected = 0;

	atomic_compare_exchange_strong(&s->error, &expected, error);
	log_error_errno(error, "CPU %u: capture stopped: %m", s->cpu);
	epoll_ctl(w->epoll_fd, EPOLL_CTL_DEL, s->trace_fd, NULL);
	s->dead = true;
	notify(s);
}

/*
 * Cuts the stream: what the kernel holds now (it wakes us only when its
 * buffer is half full, so at a low rate that can be everything since the
 * last cut) and what is pending go to the current spool, then the next
 * spool takes over.
 */
static void stream_rotate(struct capture_worker *w, struct capture_stream *s, int spool_fd)
{
	int r;

	if (!s->dead) {
		r = drain_full_pages(w, s, ROTATE_SPLICES_MAX);
		if (r >= 0)
			r = drain_partial_pages(w, s, ROTATE_READS_MAX);
		if (r < 0)
			stream_fail(w, s, r);
	}
	s->cut_bytes_stored = atomic_load_explicit(&s->bytes_stored, memory_order_relaxed);
	s->cut_chunks = atomic_load_explicit(&s->chunks, memory_order_relaxed);
	if (!s->ring) {
		if (!s->dead) {
			r = write_spool_header(s, spool_fd);
			if (r < 0)
				stream_fail(w, s, r);
		}
		s->spool_fd = spool_fd;
	}
	atomic_fetch_add_explicit(&s->cut_generation, 1, memory_order_release);
	notify(s);
}

static void stream_finish(struct capture_worker *w, struct capture_stream *s)
{
	int r = 0;

	if (!s->dead) {
		epoll_ctl(w->epoll_fd, EPOLL_CTL_DEL, s->trace_fd, NULL);
		r = drain_full_pages(w, s, /* max_turns= */ 0);
		if (r >= 0)
			r = drain_partial_pages(w, s, UINT_MAX);
		if (r < 0)
			stream_fail(w, s, r);
	}
	atomic_store_explicit(&s->finished, true, memory_order_release);
	notify(s);
}

static bool process_commands(struct capture_worker *w)
{
	struct cmd *queue;
	size_t n;
	bool stop;

	pthread_mutex_lock(&w->lock);
	queue = w->queue;
	n = w->n_queue;
	stop = w->stop;
	w->queue = NULL;
	w->n_queue = w->cap_queue = 0;
	pthread_mutex_unlock(&w->lock);

	for (size_t i = 0; i < n; i++) {
		struct capture_stream *s = queue[i].stream;

		if (queue[i].op == CMD_ADD) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
			int r = s->ring ? 0 : write_spool_header(s, s->spool_fd);

			if (r < 0)
				stream_fail(w, s, r);
			else if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, s->trace_fd, &ev) < 0)
				stream_fail(w, s, negative_errno());
		} else if (queue[i].op == CMD_ROTATE) {
			stream_rotate(w, s, queue[i].spool_fd);
		} else if (queue[i].op == CMD_TEST_STALL) {
			log_warning("CPU %u: test hook: this capture worker stops making progress",
				    w->cpu);
			for (;;)
				pause(); /* every signal is blocked here: for ever */
		} else {
			stream_finish(w, s);
		}
	}
	free(queue);
	return stop;
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void *worker_main(void *userdata)
{
	struct capture_worker *w = userdata;
	struct epoll_event evs[EPOLL_BATCH];

	for (;;) {
		bool commands = false;
		int n;

		atomic_store_explicit(&w->beat_usec, monotonic_usec(), memory_order_relaxed);
		n = epoll_wait(w->epoll_fd, evs, EPOLL_BATCH, CAPTURE_HEARTBEAT_MS);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error_errno(negative_errno(), "CPU %u: epoll_wait failed: %m", w->cpu);
			break;
		}
		/* Data first, commands last: a stream finished below is never seen again. */
		for (int i = 0; i < n; i++) {
			struct capture_stream *s = evs[i].data.ptr;
			int r;

			if (!s) {
				uint64_t v;

				(void)!read(w->wake_fd, &v, sizeof(v));
				commands = true;
				continue;
			}
			if (s->dead)
				continue;
			r = drain_full_pages(w, s, SPLICES_PER_TURN);
			if (r < 0)
				stream_fail(w, s, r);
		}
		if (commands && process_commands(w))
			break;
	}
	return NULL;
}

static int worker_queue(struct capture_worker *w, enum cmd_op op, struct capture_stream *s,
			int spool_fd)
{
	uint64_t one = 1;

	pthread_mutex_lock(&w->lock);
	if (w->n_queue == w->cap_queue) {
		size_t cap = MAX(w->cap_queue * 2, (size_t)8);
		struct cmd *q = realloc(w->queue, cap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&w->lock);
			return -ENOMEM;
		}
		w->queue = q;
		w->cap_queue = cap;
	}
	w->queue[w->n_queue++] = (struct cmd){ .op = op, .stream = s, .spool_fd = spool_fd };
	pthread_mutex_unlock(&w->lock);
	if (write(w->wake_fd, &one, sizeof(one)) < 0)
		return negative_errno();
	return 0;
}

static void worker_deinit(struct capture_worker *w)
{
	if (w->started) {
		uint64_t one = 1;

		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_mutex_unlock(&w->lock);
		(void)!write(w->wake_fd, &one, sizeof(one));
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	w->epoll_fd = safe_close(w->epoll_fd);
	w->wake_fd = safe_close(w->wake_fd);
	free(w->queue);
	w->queue = NULL;
	w->zc = compressor_free(w->zc);
	free(w->raw);
	free(w->out);
	w->raw = w->out = NULL;
	pthread_mutex_destroy(&w->lock);
}

static int worker_init(struct capture_worker *w, unsigned cpu)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	sigset_t all, saved;
	int r;

	*w = (struct capture_worker){ .cpu = cpu, .epoll_fd = -EBADF, .wake_fd = -EBADF,
				      .beat_usec = monotonic_usec() };
	pthread_mutex_init(&w->lock, NULL);
	w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->epoll_fd < 0 || w->wake_fd < 0)
		return negative_errno();
	if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->wake_fd, &ev) < 0)
		return negative_errno();
	r = compressor_new(&w->zc);
	if (r < 0)
		return r;
	/* One sub-buffer of the largest size, for the final drain in "none" mode. */
	w->raw_cap = SUBBUF_KB_MAX * 1024u;
	w->raw = malloc(w->raw_cap);
	w->out_cap = chunk_record_bound(MAX(CHUNK_TARGET_BYTES, SUBBUF_KB_MAX * 1024u));
	w->out = malloc(w->out_cap);
	if (!w->raw || !w->out)
		return -ENOMEM;

	/* Signals belong to the main thread's event loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	r = -pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r < 0)
		return r;
	w->started = true;
	return 0;
}

/**
 * capture_pool_new() - start one worker thread per CPU.
 * @n_cpus: number of CPUs (possible CPUs, so per_cpu/cpuN of each exists)
 * @ret: the pool
 *
 * Return: 0 or -errno.
 */
int capture_pool_new(unsigned n_cpus, struct capture_pool **ret)
{
	struct capture_pool *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->workers = calloc(n_cpus, sizeof(*p->workers));
	if (!p->workers) {
		free(p);
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < n_cpus; cpu++) {
		p->n_cpus = cpu + 1;
		r = worker_init(&p->workers[cpu], cpu);
		if (r < 0) {
			capture_pool_free(p);
			return r;
		}
	}
	*ret = p;
	return 0;
}

/**
 * capture_pool_free() - stop and join every worker.
 * @p: pool or NULL
 *
 * Streams still in a worker are abandoned (not drained); the caller
 * finishes its sessions first.
 *
 * Return: NULL.
 */
struct capture_pool *capture_pool_free(struct capture_pool *p)
{
	if (!p)
		return NULL;
	for (unsigned i = 0; i < p->n_cpus; i++)
		worker_deinit(&p->workers[i]);
	free(p->workers);
	free(p);
	return NULL;
}

/**
 * capture_pool_stalled() - is a worker stuck?
 * @p: pool
 * @max_age_usec: how long a worker may go without a turn
 * @ret_cpu: the CPU of the worker stuck longest
 * @ret_age_usec: since when
 *
 * An idle worker still takes a turn every CAPTURE_HEARTBEAT_MS; one that
 * does not is blocked (a system call that never returns, a deadlock).
 *
 * Return: true if some worker went longer than @max_age_usec without a turn.
 */
bool capture_pool_stalled(const struct capture_pool *p, uint64_t max_age_usec, unsigned *ret_cpu,
			  uint64_t *ret_age_usec)
{
	uint64_t now = monotonic_usec(), oldest = 0;
	unsigned cpu = 0;

	for (unsigned i = 0; i < p->n_cpus; i++) {
		uint64_t beat = atomic_load_explicit(&p->workers[i].beat_usec, memory_order_relaxed);
		uint64_t age = now > beat ? now - beat : 0;

		if (age > oldest) {
			oldest = age;
			cpu = i;
		}
	}
	*ret_cpu = cpu;
	*ret_age_usec = oldest;
	return oldest > max_age_usec;
}

/**
 * capture_pool_test_stall() - test hook: the worker of @cpu blocks for ever.
 * @p: pool
 * @cpu: which worker
 *
 * Only for tests of the watchdog (FTRACED_TEST_HOOKS); the daemon cannot
 * shut down cleanly afterwards.
 *
 * Return: 0 or -errno.
 */
int capture_pool_test_stall(struct capture_pool *p, unsigned cpu)
{
	if (cpu >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[cpu], CMD_TEST_STALL, NULL, -EBADF);
}

unsigned capture_pool_cpus(const struct capture_pool *p)
{
	return p->n_cpus;
}

/**
 * capture_pool_add() - hand a stream to its CPU's worker, which starts reading.
 * @p: pool
 * @s: stream, now owned by the worker until finished
 *
 * Return: 0, -EINVAL for a CPU without worker, or -ENOMEM.
 */
int capture_pool_add(struct capture_pool *p, struct capture_stream *s)
{
	if (s->cpu >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[s->cpu], CMD_ADD, s, -EBADF);
}

/**
 * capture_pool_finish() - ask for a final drain; the stream's notify fd fires when done.
 * @p: pool
 * @s: a stream previously added
 *
 * Call after tracing was turned off, so the drain reaches the end.
 *
 * Return: 0, or -errno if the request could not be queued.
 */
int capture_pool_finish(struct capture_pool *p, struct capture_stream *s)
{
	if (s->cpu >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[s->cpu], CMD_FINISH, s, -EBADF);
}

/**
 * capture_pool_rotate() - cut a stream and continue into another spool.
 * @p: pool
 * @s: a stream in the pool
 * @spool_fd: the next spool (borrowed, as the first one)
 *
 * The cut is published through capture_stream_cut() and the stream's
 * notify fd fires. Capture continues throughout.
 *
 * Return: 0, or -errno if the request could not be queued.
 */
int capture_pool_rotate(struct capture_pool *p, struct capture_stream *s, int spool_fd)
{
	if (s->cpu >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[s->cpu], CMD_ROTATE, s, spool_fd);
}

/**
 * capture_pool_flush() - bring a flight recorder's ring up to date, without a cut.
 * @p: pool
 * @s: a stream with a ring, in the pool
 *
 * The worker drains what the kernel holds and pushes what is pending; it
 * then publishes a cut (capture_stream_cut()) and fires the notify fd, as
 * for a rotation.
 *
 * Return: 0, or -errno if the request could not be queued.
 */
int capture_pool_flush(struct capture_pool *p, struct capture_stream *s)
{
	if (s->cpu >= p->n_cpus || !s->ring)
		return -EINVAL;
	return worker_queue(&p->workers[s->cpu], CMD_ROTATE, s, -EBADF);
}
