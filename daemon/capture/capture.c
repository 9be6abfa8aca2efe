// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Capture workers: one thread per CPU, shared by every session. A worker
 * waits in its own epoll on the trace_pipe_raw fd of each stream (one
 * stream = one session on that CPU) plus a wake-up eventfd, so the number
 * of threads is bounded by the CPU count and an idle worker sleeps. What
 * a stream does with the data is capture-stream.c's. A worker holding a
 * pending batch wakes once it is CAPTURE_FRESH_USEC old, to store it: what
 * it took from the kernel is in a spool within that time at any rate.
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
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture-stream.h"
#include "daemon/capture/capture.h"
#include "daemon/base/log.h"
#include "lib/time-util.h"

#define EPOLL_BATCH 16
/* Bytes moved per wake-up before other streams of the CPU get their turn. */
#define BYTES_PER_TURN (8u * 1024u * 1024u)


enum cmd_op { CMD_ADD, CMD_ROTATE, CMD_READ, CMD_FINISH, CMD_TEST_STALL };

struct cmd {
	enum cmd_op op;
	struct capture_stream *stream;
	int spool_fd; /* CMD_ROTATE: the next spool */
	uint64_t spool_id; /* ... and its trace id */
};

struct capture_worker {
	unsigned cpu;
	pthread_t thread;
	bool started;
	int epoll_fd;
	int wake_fd;

	/* CLOCK_MONOTONIC usec when the worker began its current turn; 0 while it waits. */
	_Atomic uint64_t busy_since_usec;

	pthread_mutex_t lock; /* protects queue and stop */
	struct cmd *queue;
	size_t n_queue;
	size_t cap_queue;
	bool stop;

	/*
	 * Worker-thread only: its buffers and zstd context, held while it
	 * holds a stream. A CPU no session captures costs nothing but its
	 * thread (on a 64-CPU server, the compressors' workspaces took 4 MB
	 * after a record had ended).
	 */
	struct capture_scratch scratch;
	unsigned n_streams;
	/* Worker-thread only: the streams it holds, whose pending batches it keeps fresh. */
	struct capture_stream **held;
	size_t n_held;
	size_t cap_held;
	/* Worker-thread only: the streams held at each -r priority, and the one in force. */
	unsigned n_at_priority[FTRACED_RT_PRIORITY_MAX + 1];
	unsigned rt_priority;
	cpu_set_t affinity; /* where it may run when not real-time: as it started */
};

struct capture_pool {
	unsigned n_cpus;
	struct capture_worker *workers;
};

/* The worker stops polling a stream (failed, or finishing); harmless if it already did. */
static void unwatch(struct capture_worker *w, struct capture_stream *s)
{
	(void)epoll_ctl(w->epoll_fd, EPOLL_CTL_DEL, capture_stream_trace_fd(s), NULL);
}

/*
 * Real-time workers stay on their own CPU: woken by its ring, a worker
 * then preempts the very tasks filling it, which cannot write while it
 * compresses. Unpinned, it would preempt another CPU's writers while its
 * own kept filling a small ring (measured: 64 KiB rings lost up to 4%).
 * Normal workers go anywhere. A CPU that is offline cannot be pinned to:
 * the worker then runs unpinned.
 */
static void pin_to_cpu(struct capture_worker *w, bool pin)
{
	cpu_set_t set;
	int r;

	if (pin) {
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
	} else {
		set = w->affinity;
	}
	r = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r < 0)
		log_debug_errno(r, "CPU %u: cannot %s the capture worker: %m", w->cpu,
				pin ? "pin" : "unpin");
}

/*
 * The worker runs SCHED_FIFO at the highest priority a stream it holds
 * asked for (-r), pinned to its CPU, and SCHED_OTHER when none does: it
 * preempts the tasks filling its buffers, so a small ring is drained
 * before it overflows.
 */
static void hold_priority(struct capture_worker *w, unsigned priority, int delta)
{
	struct sched_param param = {};
	unsigned want = 0;
	int r;

	if (priority == 0)
		return;
	w->n_at_priority[priority] += delta;
	for (unsigned p = FTRACED_RT_PRIORITY_MAX; p > 0 && !want; p--)
		if (w->n_at_priority[p])
			want = p;
	if (want == w->rt_priority)
		return;
	param.sched_priority = (int)want;
	r = -pthread_setschedparam(pthread_self(), want ? SCHED_FIFO : SCHED_OTHER, &param);
	if (r < 0) {
		log_warning_errno(r, "CPU %u: cannot switch the capture worker to %s %u: %m", w->cpu,
				  want ? "SCHED_FIFO" : "SCHED_OTHER", want);
		return;
	}
	log_debug("CPU %u: capture worker now %s %u", w->cpu, want ? "SCHED_FIFO" : "SCHED_OTHER",
		  want);
	if (!want != !w->rt_priority)
		pin_to_cpu(w, want > 0);
	w->rt_priority = want;
}

static int hold_stream(struct capture_worker *w, struct capture_stream *s)
{
	if (w->n_held == w->cap_held) {
		size_t cap = MAX(w->cap_held * 2, (size_t)4);
		struct capture_stream **held = reallocarray(w->held, cap, sizeof(*held));

		if (!held)
			return -ENOMEM;
		w->held = held;
		w->cap_held = cap;
	}
	w->held[w->n_held++] = s;
	return 0;
}

static void release_stream(struct capture_worker *w, struct capture_stream *s)
{
	for (size_t i = 0; i < w->n_held; i++)
		if (w->held[i] == s) {
			w->held[i] = w->held[--w->n_held];
			return;
		}
}

/*
 * Stores every pending batch that has waited CAPTURE_FRESH_USEC (see
 * capture_stream_freshen()). Return: when the next one is due, 0 if none
 * is pending.
 */
static uint64_t freshen_streams(struct capture_worker *w, uint64_t now)
{
	uint64_t deadline = 0;

	for (size_t i = 0; i < w->n_held; i++) {
		struct capture_stream *s = w->held[i];
		int r = capture_stream_freshen(s, &w->scratch, now, &deadline);

		if (r < 0) {
			capture_stream_fail(s, r);
			unwatch(w, s);
		}
	}
	return deadline;
}

/* epoll_wait()'s timeout until @deadline (0: none, wait for ever), rounded up to a ms. */
static int wait_timeout(uint64_t deadline)
{
	uint64_t now;

	if (deadline == 0)
		return -1;
	now = monotonic_usec();
	if (now >= deadline)
		return 0;
	return (int)MIN((deadline - now + 999) / 1000, (uint64_t)INT_MAX);
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
			int r = w->scratch.zc ? 0 : capture_scratch_init(&w->scratch);

			w->n_streams++;
			if (r < 0)
				capture_scratch_done(&w->scratch);
			else
				r = hold_stream(w, s);
			if (r >= 0)
				r = capture_stream_begin(s);
			hold_priority(w, capture_stream_rt_priority(s), +1);
			if (r < 0)
				capture_stream_fail(s, r);
			else if (!capture_stream_drain_only(s) &&
				 epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, capture_stream_trace_fd(s),
					   &ev) < 0)
				capture_stream_fail(s, negative_errno());
		} else if (queue[i].op == CMD_ROTATE) {
			capture_stream_rotate(s, &w->scratch, queue[i].spool_fd, queue[i].spool_id);
			if (capture_stream_dead(s))
				unwatch(w, s);
		} else if (queue[i].op == CMD_READ) {
			capture_stream_read_now(s, &w->scratch);
			if (capture_stream_dead(s))
				unwatch(w, s);
		} else if (queue[i].op == CMD_TEST_STALL) {
			log_warning("CPU %u: test hook: this capture worker stops making progress",
				    w->cpu);
			for (;;)
				pause(); /* every signal is blocked here: for ever */
		} else {
			unsigned priority = capture_stream_rt_priority(s);

			unwatch(w, s);
			release_stream(w, s);
			/* Once finished, the main thread may free it: not touched after. */
			capture_stream_finish(s, &w->scratch);
			hold_priority(w, priority, -1);
			if (--w->n_streams == 0)
				capture_scratch_done(&w->scratch);
		}
	}
	free(queue);
	return stop;
}

static void *worker_main(void *userdata)
{
	struct capture_worker *w = userdata;
	struct epoll_event evs[EPOLL_BATCH];
	uint64_t deadline = 0; /* when a pending batch must be stored; 0: none pending */

	if (pthread_getaffinity_np(pthread_self(), sizeof(w->affinity), &w->affinity) != 0)
		for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
			CPU_SET(cpu, &w->affinity);

	for (;;) {
		bool commands = false;
		uint64_t now;
		int n;

		/*
		 * A timeout only while a batch is pending, so it reaches its spool
		 * within CAPTURE_FRESH_USEC: an idle daemon does not wake (the
		 * watchdog asks how long a turn lasts).
		 */
		atomic_store_explicit(&w->busy_since_usec, 0, memory_order_relaxed);
		n = epoll_wait(w->epoll_fd, evs, EPOLL_BATCH, wait_timeout(deadline));
		now = monotonic_usec();
		atomic_store_explicit(&w->busy_since_usec, now, memory_order_relaxed);
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
			if (capture_stream_dead(s))
				continue;
			r = capture_stream_drain(s, &w->scratch, BYTES_PER_TURN);
			if (r < 0) {
				capture_stream_fail(s, r);
				unwatch(w, s);
			}
		}
		if (commands && process_commands(w))
			break;
		deadline = freshen_streams(w, now);
	}
	return NULL;
}

static int worker_queue(struct capture_worker *w, enum cmd_op op, struct capture_stream *s,
			int spool_fd, uint64_t spool_id)
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
	w->queue[w->n_queue++] = (struct cmd){ .op = op, .stream = s, .spool_fd = spool_fd,
						.spool_id = spool_id };
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
	w->held = mfree(w->held);
	w->n_held = w->cap_held = 0;
	capture_scratch_done(&w->scratch);
	pthread_mutex_destroy(&w->lock);
}

static int worker_init(struct capture_worker *w, unsigned cpu)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	sigset_t all, saved;
	int r;

	*w = (struct capture_worker){ .cpu = cpu, .epoll_fd = -EBADF, .wake_fd = -EBADF,
				      .busy_since_usec = 0 };
	pthread_mutex_init(&w->lock, NULL);
	w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->epoll_fd < 0 || w->wake_fd < 0)
		return negative_errno();
	if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->wake_fd, &ev) < 0)
		return negative_errno();

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
 * A worker waiting in epoll_wait() is idle, however long; one whose turn
 * (reading, compressing, writing, serving commands) lasts longer than
 * @max_age_usec is blocked (a system call that never returns, a deadlock).
 *
 * Return: true if some worker has been in one turn longer than @max_age_usec.
 */
bool capture_pool_stalled(const struct capture_pool *p, uint64_t max_age_usec, unsigned *ret_cpu,
			  uint64_t *ret_age_usec)
{
	uint64_t now = monotonic_usec(), oldest = 0;
	unsigned cpu = 0;

	for (unsigned i = 0; i < p->n_cpus; i++) {
		uint64_t busy = atomic_load_explicit(&p->workers[i].busy_since_usec,
						     memory_order_relaxed);
		uint64_t age = busy && now > busy ? now - busy : 0;

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
	return worker_queue(&p->workers[cpu], CMD_TEST_STALL, NULL, -EBADF, 0);
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
	if (capture_stream_cpu(s) >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[capture_stream_cpu(s)], CMD_ADD, s, -EBADF, 0);
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
	if (capture_stream_cpu(s) >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[capture_stream_cpu(s)], CMD_FINISH, s, -EBADF, 0);
}

/**
 * capture_pool_rotate() - cut a stream and continue into another spool.
 * @p: pool
 * @s: a stream in the pool
 * @spool_fd: the next spool (borrowed, as the first one)
 * @spool_id: its trace id (a hold names the spool its batch is for)
 *
 * The cut is published through capture_stream_cut() and the stream's
 * notify fd fires. Capture continues throughout.
 *
 * Return: 0, or -errno if the request could not be queued.
 */
int capture_pool_rotate(struct capture_pool *p, struct capture_stream *s, int spool_fd,
			uint64_t spool_id)
{
	if (capture_stream_cpu(s) >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[capture_stream_cpu(s)], CMD_ROTATE, s, spool_fd, spool_id);
}

/**
 * capture_pool_read() - have a stream read now, partial sub-buffers too (-s).
 * @p: pool
 * @s: a stream in the pool
 *
 * Return: 0, or -errno if the request could not be queued.
 */
int capture_pool_read(struct capture_pool *p, struct capture_stream *s)
{
	if (capture_stream_cpu(s) >= p->n_cpus)
		return -EINVAL;
	return worker_queue(&p->workers[capture_stream_cpu(s)], CMD_READ, s, -EBADF, 0);
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
	if (capture_stream_cpu(s) >= p->n_cpus || !capture_stream_has_ring(s))
		return -EINVAL;
	return worker_queue(&p->workers[capture_stream_cpu(s)], CMD_ROTATE, s, -EBADF, 0);
}
