// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flight recorder: a session that keeps recent history instead of
 * writing it, and writes it on demand (a snapshot) while recording goes
 * on.
 *
 * With the memory backend the capture workers push compressed chunks into
 * a ring per CPU (chunk-ring.c, in the session's stream set) that evicts
 * the oldest; a snapshot asks every worker to flush, then takes
 * references to what the rings hold and publishes them as a file of its
 * own. With the kernel backend the instance's ring runs in overwrite mode
 * and nothing reads it; a snapshot swaps the ring with the kernel's
 * snapshot buffer (CONFIG_TRACER_SNAPSHOT, allocated with the ring) and
 * drains that through temporary streams and rings while tracing goes on.
 * Where the kernel has no snapshot buffer, it pauses tracing, drains the
 * ring itself, and resumes. Triggers (trigger.c) ask for snapshots by
 * themselves, optionally after a post time.
 *
 * A snapshot job is served once its data is in the rings: memory
 * backend, after the workers' flush it asked for (or at once when the
 * session is stopped); kernel backend, after the drain that follows the
 * request. Main thread only, through the session's event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/capture.h"
#include "daemon/chunk-ring.h"
#include "daemon/flight.h"
#include "daemon/kallsyms.h"
#include "daemon/log.h"
#include "daemon/recovery.h"
#include "daemon/session-internal.h"
#include "daemon/spool.h"
#include "daemon/trigger.h"
#include "lib/ctl-proto.h"
#include "lib/time-util.h"

#define SNAPSHOTS_DIR "snapshots"
/* A job that waits for the final drain of a stop rather than a flush. */
#define FLUSH_AFTER_STOP UINT32_MAX

/* A snapshot asked for, waiting for the workers' flush or the kernel drain. */
struct snapshot_job {
	void *waiter;
	int out_fd;
	bool trim;
	uint32_t flush;               /* served once this flush (or drain) is complete */
	struct trigger_slot *trigger;
};

/* A trigger of a flight session, and its post timer. */
struct trigger_slot {
	struct session *session;
	struct trigger *trigger;
	sd_event_source *post; /* armed between firing and its snapshot */
};

struct flight {
	int snap_dir_fd;              /* STATE_DIR/sessions/<name>/snapshots */
	struct snapshot_job *jobs;
	size_t n_jobs;
	uint32_t flush_requested;     /* flushes (memory) or drains (kernel) begun */
	uint32_t flush_done;          /* kernel: drains complete */
	bool swap;                    /* kernel: snapshots swap the ring with the snapshot buffer */
	bool draining;                /* kernel: streams draining the ring (or snapshot buffer) */
	bool drain_again;             /* kernel: jobs came in during a drain */
	uint64_t drain_start_usec;
	struct trigger_slot *triggers;
	unsigned n_triggers;
	uint32_t n_snapshots;         /* written */
	uint64_t n_failed;            /* snapshots that could not be written */
	uint32_t next_snapshot_seq;
	char note[256];               /* what the user should know about the backend */
	struct spool history;         /* kernel: a recipe, for recovery after a crash ... */
	int *copies;                  /* ... and while drained snapshots are unwritten, per CPU
				       * a copy of what the drain took from the kernel's ring */
	unsigned n_copies;
	unsigned n_unpublished;       /* kernel: snapshots handed to the publisher, not done */
};

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata);
static void drop_copies(struct flight *f);

static bool kernel_backend(const struct session *s)
{
	return s->config.backend == FTRACED_FLIGHT_KERNEL;
}

/**
 * flight_free() - triggers, queued jobs and the snapshots directory go.
 * @f: flight state or NULL
 *
 * Return: NULL.
 */
struct flight *flight_free(struct flight *f)
{
	if (!f)
		return NULL;
	for (unsigned k = 0; f->triggers && k < f->n_triggers; k++) {
		sd_event_source_disable_unref(f->triggers[k].post);
		trigger_free(f->triggers[k].trigger);
	}
	free(f->triggers);
	for (size_t i = 0; i < f->n_jobs; i++)
		safe_close(f->jobs[i].out_fd);
	free(f->jobs);
	safe_close(f->snap_dir_fd);
	for (unsigned cpu = 0; f->copies && cpu < f->n_copies; cpu++)
		safe_close(f->copies[cpu]);
	free(f->copies);
	spool_remove(&f->history); /* the session and its instance go: nothing to recover */
	free(f);
	return NULL;
}

/* STATE_DIR/sessions/<name>/snapshots, created in the session's directory. */
static int open_snapshot_dir(struct session *s, struct flight *f)
{
	if (mkdirat(s->dir_fd, SNAPSHOTS_DIR, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	f->snap_dir_fd = openat(s->dir_fd, SNAPSHOTS_DIR,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return f->snap_dir_fd < 0 ? negative_errno() : 0;
}

/*
 * Kernel backend: the history lives in the instance's ring, and a crash
 * of the daemon leaves it there. A recipe with no spool data tells the
 * next start (recovery.c) to drain that ring into a snapshot,
 * "<name>-<created>-history-recovered.dat", before the instance goes.
 */
static int keep_history_recipe(struct session *s, struct flight *f)
{
	char stamp[32], target[sizeof(SESSIONS_DIR) + 2 * FTRACED_NAME_MAX + 64];
	int r;

	session_utc_stamp(stamp, sizeof(stamp));
	snprintf(target, sizeof(target), SESSIONS_DIR "/%s/" SNAPSHOTS_DIR "/%s-%s-history.dat",
		 s->name, s->name, stamp);
	r = spool_create(&f->history, s->segment_env.state_dir_fd, spool_new_id(), 0);
	if (r < 0)
		return r;
	r = recovery_write_recipe(f->history.dir_fd, &(struct recipe){
		.target = target,
		.date = s->date,
		.gap = s->gap_in_next_file ? s->gap : NULL,
		.instance = instance_name(s->instance),
		.zstd = s->config.zstd,
		.level = s->config.level,
		.n_cpus = s->cpus.n_cpus,
		.events = &s->events,
		.imeta = &s->imeta,
		.kernel_history = true,
	});
	if (r < 0)
		spool_remove(&f->history);
	return r;
}

/**
 * flight_new() - the flight recorder's part of a new session.
 * @s: a flight session with its instance and directory
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Sets the kernel side (overwrite mode for the kernel backend), the
 * snapshots directory and every trigger's own instance.
 *
 * Return: 0, or -errno with @error set.
 */
int flight_new(struct session *s, char *error, size_t n_error)
{
	struct flight *f;
	int r;

	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	f->snap_dir_fd = -EBADF;
	f->history.dir_fd = -EBADF;
	s->flight = f;
	if (kernel_backend(s)) {
		r = instance_set_overwrite(s->instance, true);
		if (r < 0) {
			snprintf(error, n_error, "cannot set the ring buffer to overwrite mode: %s",
				 strerror(-r));
			return r;
		}
		f->swap = instance_has_snapshot(s->instance);
		if (f->swap)
			snprintf(f->note, sizeof(f->note), "kernel backend: each snapshot swaps the "
				 "ring with the kernel's snapshot buffer; tracing never pauses");
		else
			snprintf(f->note, sizeof(f->note), "kernel backend: each snapshot pauses "
				 "tracing while the ring is drained (this kernel has no snapshot "
				 "buffer)");
	}
	r = open_snapshot_dir(s, f);
	if (r < 0) {
		snprintf(error, n_error, "cannot create the snapshots directory: %s", strerror(-r));
		return r;
	}
	if (kernel_backend(s)) {
		r = keep_history_recipe(s, f);
		if (r < 0) {
			snprintf(error, n_error, "cannot write the recovery recipe of the history: %s",
				 strerror(-r));
			return r;
		}
	}
	f->triggers = calloc(MAX(s->config.n_triggers, 1u), sizeof(*f->triggers));
	if (!f->triggers) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	for (unsigned k = 0; k < s->config.n_triggers; k++) {
		struct trigger_slot *slot = &f->triggers[k];
		struct trigger_env env = {
			.event = s->env.event,
			.instance_tag = s->env.instance_tag,
			/* Apart from every session's own id: bit 40 up. */
			.instance_id = (UINT64_C(1) << 40) | ((uint64_t)s->id << 8) | k,
			.clock = s->config.clock,
			.n_cpus = s->cpus.n_cpus,
			.fire = on_trigger_fire,
			.userdata = slot,
		};

		slot->session = s;
		r = trigger_new(&env, s->config.triggers[k], &slot->trigger, error, n_error);
		if (r < 0)
			return r;
		f->n_triggers++;
	}
	return 0;
}

/**
 * flight_swaps() - does this session's ring need a snapshot buffer beside it?
 * @s: session
 *
 * Return: true for a kernel-backend flight recorder on a kernel that has one.
 */
bool flight_swaps(const struct session *s)
{
	return s->flight && s->flight->swap;
}

/**
 * flight_snapshot_dir() - where snapshots without a client file go.
 * @f: flight state
 *
 * Return: the directory's fd (borrowed).
 */
int flight_snapshot_dir(const struct flight *f)
{
	return f->snap_dir_fd;
}

/**
 * flight_start() - start recording history (a new start is a new history).
 * @s: a CREATED or STOPPED flight session
 *
 * Return: 0, or -errno with the session's error set.
 */
int flight_start(struct session *s)
{
	struct flight *f = s->flight;
	struct stream_params params;
	char error[256];
	int r;

	f->flush_requested = f->flush_done = 0;
	f->drain_again = false;
	if (!kernel_backend(s)) {
		if (!s->cpus.cpus[0].ring &&
		    stream_set_rings_new(&s->cpus, s->config.flight_size / s->cpus.n_cpus) < 0) {
			session_set_error(s, -ENOMEM, "out of memory");
			return -ENOMEM;
		}
		/* No gap may hide inside a history. */
		for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
			chunk_ring_clear(s->cpus.cpus[cpu].ring);
		session_stream_params(s, &params);
		r = stream_set_open(&s->cpus, s->instance, &params, NULL, error, sizeof(error));
		if (r < 0) {
			session_set_error(s, r, "%s", error);
			stream_set_release(&s->cpus, true);
			return r;
		}
	}
	r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ true, /* text= */ false);
	if (r < 0) {
		session_set_error(s, r, "cannot read the ring buffer statistics: %s", strerror(-r));
		stream_set_release(&s->cpus, true);
		return r;
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		s->cpus.cpus[cpu].lost_base = s->cpus.cpus[cpu].start.overrun;
		s->cpus.cpus[cpu].seen = s->cpus.cpus[cpu].start;
	}
	s->warning[0] = '\0';
	r = session_begin_running(s);
	if (r < 0)
		return r;
	for (unsigned k = 0; k < f->n_triggers; k++) {
		r = trigger_arm(f->triggers[k].trigger);
		if (r < 0) {
			char result[128];

			snprintf(result, sizeof(result), "not armed: %s", strerror(-r));
			trigger_set_result(f->triggers[k].trigger, result);
			log_warning_errno(r, "Session '%s': cannot arm a trigger, ignoring: %m",
					  s->name);
		}
	}
	log_info("Session '%s' started on instance '%s' (flight recorder, %s backend, %zu events)",
		 s->name, instance_name(s->instance), kernel_backend(s) ? "kernel" : "memory",
		 s->events.n);
	return 0;
}

static void snapshot_failed(struct session *s, void *waiter, struct trigger_slot *trigger,
			    int error)
{
	char result[128];

	s->flight->n_failed++;
	log_error_errno(error, "Session '%s': snapshot failed: %m", s->name);
	if (trigger) {
		snprintf(result, sizeof(result), "snapshot failed: %s", strerror(-error));
		trigger_set_result(trigger->trigger, result);
	}
	if (waiter)
		s->env.on_snapshot(s, waiter, error, NULL, 0, NULL, s->env.userdata);
}

/* Takes what the rings hold now and starts writing it as a snapshot file. */
static void write_snapshot(struct session *s, struct snapshot_job *job)
{
	char stamp[32], target[PUBLISH_NAME_MAX + sizeof(SESSIONS_DIR) + FTRACED_NAME_MAX + 24];
	struct flight *f = s->flight;
	struct publish_ticket ticket = { .snapshot = true, .waiter = job->waiter,
					 .cookie = job->trigger };
	uint32_t seq = ++f->next_snapshot_seq;
	struct segment *seg;
	int r;

	session_utc_stamp(stamp, sizeof(stamp));
	snprintf(target, sizeof(target), SESSIONS_DIR "/%s/" SNAPSHOTS_DIR "/%s-%s-%06" PRIu32
		 ".dat", s->name, s->name, stamp, seq);
	r = segment_new_snapshot(&s->segment_env, seq, target, job->trim, &seg);
	if (r < 0) {
		snapshot_failed(s, job->waiter, job->trigger, r);
		return;
	}
	/* With a swap, the statistics of the buffer drained were read before it. */
	r = f->swap ? 0 : stream_set_read_stats(&s->cpus, s->instance, /* start= */ false,
						 /* text= */ true);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct chunk_list l = {};
		bool older_lost;

		r = chunk_ring_collect(cs->ring, &l);
		if (r < 0) {
			segment_free(seg);
			snapshot_failed(s, job->waiter, job->trigger, r);
			return;
		}
		/* Memory: evicted from our ring; kernel: overwritten in the kernel's. */
		older_lost = kernel_backend(s) ? cs->cut.overrun > cs->lost_base : l.evicted;
		segment_close_cpu(seg, cpu, 0, 0, &cs->cut, TAKE_PTR(cs->cut_text));
		segment_set_chunks(seg, cpu, &l, older_lost);
	}
	r = publisher_add(&s->publisher, seg, TAKE_FD(job->out_fd), &ticket);
	if (r < 0)
		snapshot_failed(s, job->waiter, job->trigger, r);
	else
		f->n_unpublished++;
}

/* Memory backend: is the flush this job waits for done? */
static bool job_ready(struct session *s, const struct snapshot_job *job)
{
	if (s->state == SESSION_STOPPED || s->state == SESSION_CREATED)
		return true;
	if (job->flush == FLUSH_AFTER_STOP)
		return false;
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		if (!s->cpus.cpus[cpu].stream)
			return true;
	return stream_set_cut_reached(&s->cpus, job->flush);
}

/* Writes every job whose data is ready; the job leaves the queue first. */
static void serve_jobs(struct session *s)
{
	struct flight *f = s->flight;

	for (size_t i = 0; i < f->n_jobs;) {
		struct snapshot_job job = f->jobs[i];
		bool ready = kernel_backend(s) ? job.flush <= f->flush_done : job_ready(s, &job);

		if (!ready) {
			i++;
			continue;
		}
		memmove(&f->jobs[i], &f->jobs[i + 1], (f->n_jobs - i - 1) * sizeof(job));
		f->n_jobs--;
		write_snapshot(s, &job);
		safe_close(job.out_fd);
	}
}

/*
 * Kernel backend: a drain empties the kernel's ring, so what it takes is
 * also written to the history's spool, "cpuN", until the snapshots made of
 * it are written: a crash in between leaves it for recovery (recovery.c),
 * followed by what the ring still holds. Its header has the counters the
 * drain began with (paused: exact; after a swap the drained buffer's are
 * not readable). Drains whose snapshots are still being written append.
 * Without copies (an error) the snapshot goes on, as before.
 */
static void open_copies(struct session *s, struct flight *f)
{
	unsigned n = s->cpus.n_cpus;

	if (f->copies)
		return;
	f->copies = malloc(n * sizeof(*f->copies));
	if (!f->copies)
		return;
	for (unsigned cpu = 0; cpu < n; cpu++) {
		struct spool_start start = SPOOL_START_UNKNOWN;
		struct cpu_counters c;
		char name[32];
		int r;

		snprintf(name, sizeof(name), "cpu%u", cpu);
		f->copies[cpu] = openat(f->history.dir_fd, name, O_RDWR | O_CREAT | O_TRUNC |
					O_CLOEXEC | O_NOFOLLOW, 0600);
		r = f->copies[cpu] < 0 ? negative_errno() : 0;
		if (r >= 0 && !f->swap && instance_read_cpu_stats(s->instance, cpu, &c, NULL) >= 0)
			start = (struct spool_start){ c.read, c.overrun, c.dropped };
		if (r >= 0)
			r = spool_write_header(f->copies[cpu], &start, NULL);
		if (r < 0) {
			log_warning_errno(r, "Session '%s': cannot keep a copy of the drain for "
					  "recovery, draining without: %m", s->name);
			f->n_copies = cpu + 1;
			drop_copies(f);
			return;
		}
	}
	f->n_copies = n;
}

/* Every snapshot of the drains is written: their copies go. */
static void drop_copies(struct flight *f)
{
	for (unsigned cpu = 0; f->copies && cpu < f->n_copies; cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "cpu%u", cpu);
		unlinkat(f->history.dir_fd, name, 0);
		safe_close(f->copies[cpu]);
	}
	free(f->copies);
	f->copies = NULL;
	f->n_copies = 0;
}

static void drop_copies_when_written(struct flight *f)
{
	if (!f->draining && f->n_unpublished == 0)
		drop_copies(f);
}

/* Kernel backend: tracing off, and temporary streams drain the ring into temporary rings. */
static int kernel_drain_begin(struct session *s)
{
	struct flight *f = s->flight;
	struct stream_params params;
	char error[256];
	int r;

	r = stream_set_rings_new(&s->cpus, UINT64_MAX);
	if (r < 0)
		return r;
	f->drain_start_usec = monotonic_usec();
	if (f->swap) {
		/* The counters of the buffer about to be drained: after the swap they are its. */
		r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ false, /* text= */ true);
		if (r < 0)
			log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
					  s->name);
		r = instance_snapshot_swap(s->instance);
		if (r < 0) {
			log_error_errno(r, "Session '%s': cannot swap the snapshot buffer: %m", s->name);
			stream_set_rings_free(&s->cpus);
			return r;
		}
	} else if (s->state == SESSION_RUNNING) {
		r = instance_set_tracing(s->instance, false);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot pause tracing, draining anyway: %m",
					  s->name);
	}
	session_stream_params(s, &params);
	params.snapshot_raw = f->swap;
	if (f->history.dir_fd >= 0) {
		open_copies(s, f);
		params.copy_fds = f->copies;
	}
	r = stream_set_open(&s->cpus, s->instance, &params, NULL, error, sizeof(error));
	if (r < 0) {
		log_error("Session '%s': %s", s->name, error);
		stream_set_release(&s->cpus, true);
		stream_set_rings_free(&s->cpus);
		if (s->state == SESSION_RUNNING && !f->swap)
			instance_set_tracing(s->instance, true);
		return r;
	}
	f->draining = true;
	f->flush_requested++;
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];

		r = capture_pool_add(s->env.pool, cs->stream);
		if (r >= 0)
			r = capture_pool_finish(s->env.pool, cs->stream);
		if (r < 0) {
			/* Queued streams finish anyway; the drain ends with what it has. */
			log_error_errno(r, "Session '%s': cannot drain CPU %u: %m", s->name, cpu);
			cs->stream = capture_stream_free(cs->stream);
		}
	}
	return 0;
}

/*
 * Swap: the snapshot buffer is drained while tracing went on. Clearing it
 * resets its counters, so the ring it becomes at the next swap counts
 * from 0: its counters going "back" then is no interference.
 */
static void swap_done(struct session *s)
{
	int r;

	r = instance_snapshot_clear(s->instance);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot clear the snapshot buffer: %m", s->name);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		s->cpus.cpus[cpu].seen = (struct cpu_counters){};
	log_info("Session '%s': snapshot by swap, drained in %.1f ms while tracing went on",
		 s->name, (double)(monotonic_usec() - s->flight->drain_start_usec) / 1000);
}

/* No snapshot buffer: the ring itself was drained; tracing resumes where it ran. */
static void pause_done(struct session *s)
{
	struct flight *f = s->flight;
	int r;

	if (s->state == SESSION_RUNNING) {
		r = instance_set_tracing(s->instance, true);
		if (r < 0) {
			session_set_error(s, r, "cannot resume tracing after a snapshot: %s",
					  strerror(-r));
			s->state = SESSION_STOPPED;
		}
	}
	snprintf(f->note, sizeof(f->note), "kernel backend: no snapshot buffer to swap on this "
		 "kernel, so tracing was paused for %.1f ms while the ring was drained",
		 (double)(monotonic_usec() - f->drain_start_usec) / 1000);
	log_info("Session '%s': %s", s->name, f->note);
}

/* Kernel backend: the drain is over; write the snapshots, then the next drain if asked. */
static void kernel_drain_end(struct session *s)
{
	struct flight *f = s->flight;
	int r;

	/* The drain's streams are temporary: the session's totals stay as they were. */
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		s->cpus.cpus[cpu].stream = capture_stream_free(s->cpus.cpus[cpu].stream);
	f->draining = false;
	f->flush_done = f->flush_requested;
	serve_jobs(s);
	drop_copies_when_written(f);
	/*
	 * What was overwritten so far is accounted for: the ring drained is
	 * empty now, or (swap) tracing goes on in the cleared buffer, from 0.
	 */
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		s->cpus.cpus[cpu].lost_base = f->swap ? 0 : s->cpus.cpus[cpu].cut.overrun;
	stream_set_rings_free(&s->cpus);
	if (f->swap)
		swap_done(s);
	else
		pause_done(s);
	if (s->state == SESSION_STOPPING)
		s->state = SESSION_STOPPED;
	if (f->drain_again) {
		f->drain_again = false;
		r = kernel_drain_begin(s);
		if (r < 0) {
			for (size_t i = 0; i < f->n_jobs; i++)
				f->jobs[i].flush = f->flush_done; /* written empty rather than lost */
			serve_jobs(s);
		}
	}
}

/**
 * flight_draining() - is a kernel-backend drain under way?
 * @s: session
 *
 * Return: true while temporary streams drain the kernel's ring.
 */
bool flight_draining(const struct session *s)
{
	return s->flight && s->flight->draining;
}

/**
 * flight_progress() - something changed: serve the snapshots that are ready.
 * @s: flight session
 */
void flight_progress(struct session *s)
{
	if (kernel_backend(s)) {
		if (s->flight->draining && stream_set_finished(&s->cpus))
			kernel_drain_end(s);
		return;
	}
	if (s->flight->n_jobs > 0)
		serve_jobs(s);
}

/**
 * flight_drained() - memory backend, every CPU finished at stop: the rings keep the history.
 * @s: flight session
 */
void flight_drained(struct session *s)
{
	stream_set_release(&s->cpus, true);
	s->state = SESSION_STOPPED;
	serve_jobs(s);
}

/**
 * flight_stop() - the kernel backend's stop: its history stays in the kernel's ring.
 * @s: flight session, tracing just turned off
 *
 * Return: true if the stop is complete (kernel backend); false if the
 * workers' final drain must follow (memory backend).
 */
bool flight_stop(struct session *s)
{
	if (!kernel_backend(s))
		return false;
	/* A drain under way ends on its own. */
	if (!s->flight->draining)
		s->state = SESSION_STOPPED;
	session_wake(s); /* the stop is reported from the event loop */
	return true;
}

/* Queues a snapshot; @out_fd is taken over. */
static int queue_snapshot(struct session *s, void *waiter, int out_fd, bool trim,
			  struct trigger_slot *trigger)
{
	struct snapshot_job job = { .waiter = waiter, .out_fd = out_fd, .trim = trim,
				    .trigger = trigger };
	struct flight *f = s->flight;
	struct snapshot_job *grown;
	int r;

	if (f->n_jobs >= SNAPSHOTS_PENDING_MAX) {
		safe_close(out_fd);
		return -EBUSY;
	}
	grown = realloc(f->jobs, (f->n_jobs + 1) * sizeof(*grown));
	if (!grown) {
		safe_close(out_fd);
		return -ENOMEM;
	}
	f->jobs = grown;
	if (kernel_backend(s)) {
		if (f->draining) {
			job.flush = f->flush_requested + 1;
			f->drain_again = true;
		} else {
			r = kernel_drain_begin(s);
			if (r < 0) {
				safe_close(out_fd);
				return r;
			}
			job.flush = f->flush_requested;
		}
	} else if (s->state == SESSION_RUNNING) {
		job.flush = ++f->flush_requested;
		for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
			r = capture_pool_flush(s->env.pool, s->cpus.cpus[cpu].stream);
			if (r < 0) {
				/* Served when the stream's next cut or the stop comes. */
				log_warning_errno(r, "Session '%s': cannot flush CPU %u: %m",
						  s->name, cpu);
				job.flush = FLUSH_AFTER_STOP;
			}
		}
	} else if (s->state == SESSION_STOPPING) {
		/* The final drain is queued already: everything is in the rings after it. */
		job.flush = FLUSH_AFTER_STOP;
	}
	f->jobs[f->n_jobs++] = job;
	/* Symbols too old for the file are read while the data is drained, not after. */
	kallsyms_prefetch(s->env.kallsyms, KALLSYMS_EXPIRED);
	session_wake(s);
	return 0;
}

static void trigger_snapshot(struct trigger_slot *slot)
{
	char result[128];
	int r;

	r = queue_snapshot(slot->session, NULL, -EBADF, false, slot);
	if (r < 0) {
		snprintf(result, sizeof(result), "no snapshot: %s", strerror(-r));
		trigger_set_result(slot->trigger, result);
	}
}

static int on_post_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct trigger_slot *slot = userdata;
	SESSION_LOG_CONTEXT(slot->session);

	slot->post = sd_event_source_disable_unref(slot->post);
	trigger_snapshot(slot);
	return 0;
}

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata)
{
	struct trigger_slot *slot = userdata;
	uint64_t post = trigger_spec(t)->post_ms;
	int r;

	if (slot->session->state != SESSION_RUNNING || slot->post)
		return;
	if (post > 0) {
		r = sd_event_add_time_relative(slot->session->env.event, &slot->post,
					       CLOCK_MONOTONIC, post * 1000, TIMER_ACCURACY_USEC,
					       on_post_timer, slot);
		if (r >= 0)
			return;
		log_warning_errno(r, "Session '%s': cannot wait before the snapshot, taking it "
				  "now: %m", slot->session->name);
	}
	trigger_snapshot(slot);
}

/**
 * flight_stop_triggers() - at stop: no more firing; a snapshot waiting for its post time
 * is taken now.
 * @s: flight session
 */
void flight_stop_triggers(struct session *s)
{
	for (unsigned k = 0; k < s->flight->n_triggers; k++) {
		struct trigger_slot *slot = &s->flight->triggers[k];

		trigger_disarm(slot->trigger);
		if (slot->post) {
			slot->post = sd_event_source_disable_unref(slot->post);
			trigger_snapshot(slot);
		}
	}
}

/**
 * flight_published() - a snapshot file is in place (or failed): tell whoever asked.
 * @s: flight session
 * @o: the publisher's outcome for a snapshot ticket
 */
void flight_published(struct session *s, const struct publish_outcome *o)
{
	struct trigger_slot *trigger = o->ticket.cookie;
	const char *where = o->path ?: o->name;

	if (s->flight->n_unpublished > 0)
		s->flight->n_unpublished--;
	if (kernel_backend(s))
		drop_copies_when_written(s->flight);
	if (o->result < 0) {
		snapshot_failed(s, o->ticket.waiter, trigger, o->result);
		return;
	}
	s->flight->n_snapshots++;
	log_info("Session '%s': snapshot %s complete (%" PRIu64 " bytes)%s%s", s->name,
		 where ?: "into the client's file", o->bytes, trigger ? ", for trigger " : "",
		 trigger ? trigger_spec(trigger->trigger)->event : "");
	if (trigger)
		trigger_set_result(trigger->trigger, where ?: "written");
	if (o->ticket.waiter)
		s->env.on_snapshot(s, o->ticket.waiter, 0, where, o->bytes,
				   s->flight->note[0] ? s->flight->note : NULL, s->env.userdata);
}

/**
 * session_snapshot() - write a flight recorder's history into a file; recording goes on.
 * @s: a flight session, running or stopped
 * @waiter: passed back to env.on_snapshot when the file is complete (may be NULL)
 * @out_fd: the client's file, taken over; -EBADF for a file in the snapshots directory
 * @trim: start every CPU at the latest time from which any CPU is complete
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0 (env.on_snapshot follows), or -errno with @error set.
 */
int session_snapshot(struct session *s, void *waiter, int out_fd, bool trim, char *error,
		     size_t n_error)
{
	int r;

	if (!s->flight) {
		safe_close(out_fd);
		snprintf(error, n_error, "'%s' is not a flight recorder (create it with --mode "
			 "flight)", s->name);
		return -EINVAL;
	}
	if (s->state == SESSION_CREATED || s->state == SESSION_ALLOCATING ||
	    s->destroy_requested) {
		safe_close(out_fd);
		snprintf(error, n_error, "'%s' has no history: it was %s", s->name,
			 s->destroy_requested ? "destroyed" : "never started");
		return -ENODATA;
	}
	r = queue_snapshot(s, waiter, out_fd, trim, NULL);
	if (r == -EBUSY)
		snprintf(error, n_error, "'%s' has %u snapshots in progress already", s->name,
			 SNAPSHOTS_PENDING_MAX);
	else if (r < 0)
		snprintf(error, n_error, "cannot take a snapshot: %s", strerror(-r));
	return r;
}

/**
 * flight_pending() - snapshots asked for and not yet handed to the publisher.
 * @s: session
 *
 * Return: how many (0 for other modes).
 */
size_t flight_pending(const struct session *s)
{
	return s->flight ? s->flight->n_jobs : 0;
}

/**
 * flight_forget_waiter() - a client went away: its queued snapshots stay, unreported.
 * @s: session
 * @waiter: as given to session_snapshot()
 */
void flight_forget_waiter(struct session *s, const void *waiter)
{
	for (size_t i = 0; s->flight && i < s->flight->n_jobs; i++)
		if (s->flight->jobs[i].waiter == waiter)
			s->flight->jobs[i].waiter = NULL;
}

/**
 * flight_has_waiter() - is a snapshot of @waiter still queued?
 * @s: session
 * @waiter: as given to session_snapshot()
 *
 * Return: true while it waits for its flush or drain.
 */
bool flight_has_waiter(const struct session *s, const void *waiter)
{
	for (size_t i = 0; s->flight && i < s->flight->n_jobs; i++)
		if (s->flight->jobs[i].waiter == waiter)
			return true;
	return false;
}

/*
 * Raw bytes a memory-backend history holds outside its ring: taken by the
 * workers and not yet in a chunk, or still in the kernel's ring. A snapshot
 * flushes both into the file.
 */
static uint64_t not_yet_in_ring(struct session *s)
{
	uint64_t sum = 0;

	if (s->state != SESSION_RUNNING)
		return 0;
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct capture_counters c = {};
		struct chunk_ring_stats st = {};
		struct cpu_counters k = {};

		if (cs->stream)
			capture_stream_counters(cs->stream, &c);
		if (cs->ring)
			chunk_ring_stats(cs->ring, &st);
		if (c.bytes_raw > st.raw_bytes + st.evicted_raw_bytes)
			sum += c.bytes_raw - st.raw_bytes - st.evicted_raw_bytes;
		if (s->instance && instance_read_cpu_stats(s->instance, cpu, &k, NULL) >= 0)
			sum += k.bytes;
	}
	return sum;
}

/**
 * flight_describe() - the flight recorder's part of a session record.
 * @s: flight session
 * @b: reply being built
 *
 * The history reaches back to the latest time from which every CPU that
 * lost older data is complete, or to the start when none did; clocks are in
 * ns. Its raw bytes count what is still on the way to the ring too.
 */
void flight_describe(struct session *s, struct ctl_builder *b)
{
	uint64_t bytes = 0, raw = 0, evicted = 0, newest = 0, complete = 0;
	char line[FTRACED_MESSAGE_MAX], dir[PATH_MAX];
	struct flight *f = s->flight;

	ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, s->config.backend);
	if (!kernel_backend(s)) {
		ctl_put_u64(b, FTRACED_ATTR_FLIGHT_SIZE, s->config.flight_size);
		for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
			struct chunk_ring_stats st;

			if (!s->cpus.cpus[cpu].ring)
				continue;
			chunk_ring_stats(s->cpus.cpus[cpu].ring, &st);
			bytes += st.bytes;
			raw += st.raw_bytes;
			evicted += st.evicted_raw_bytes;
			if (st.chunks == 0)
				continue;
			newest = MAX(newest, st.last_ts);
			if (st.evicted_chunks > 0)
				complete = MAX(complete, st.first_ts);
		}
		raw += not_yet_in_ring(s);
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_BYTES, bytes);
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_RAW_BYTES, raw);
		ctl_put_u64(b, FTRACED_ATTR_EVICTED_RAW_BYTES, evicted);
		/*
		 * Nothing evicted: everything since the start is held, in the ring,
		 * a worker's batch or the kernel's ring (a slow session's first
		 * chunk may take minutes to fill). Else, what every CPU has whole.
		 */
		if (complete)
			ctl_put_u64(b, FTRACED_ATTR_HISTORY_MS, newest > complete ?
				    (newest - complete) / 1000000 : 0);
		else if (s->state == SESSION_RUNNING)
			ctl_put_u64(b, FTRACED_ATTR_HISTORY_MS,
				    (monotonic_usec() - s->start_usec) / 1000);
	}
	ctl_put_u32(b, FTRACED_ATTR_SNAPSHOTS, f->n_snapshots);
	ctl_put_u32(b, FTRACED_ATTR_SEGMENTS_KEPT, s->publisher.usage.n_files);
	ctl_put_u64(b, FTRACED_ATTR_DISK_BYTES, s->publisher.usage.bytes);
	if (f->snap_dir_fd >= 0 && publish_path(f->snap_dir_fd, "", dir, sizeof(dir)) >= 0)
		ctl_put_string(b, FTRACED_ATTR_DIRECTORY, dir);
	for (unsigned k = 0; k < f->n_triggers; k++) {
		trigger_describe(f->triggers[k].trigger, line, sizeof(line));
		ctl_put_string(b, FTRACED_ATTR_TRIGGER_STATUS, line);
	}
}

/**
 * flight_note() - what the user should know about the backend (session-status.c says it).
 * @s: flight session
 *
 * Return: the note, "" if none.
 */
const char *flight_note(const struct session *s)
{
	return s->flight->note;
}

/* A flight recorder's part of the session's counters: its snapshots and triggers. */
void flight_counters(const struct session *s, struct ftraced_session_counters *c)
{
	const struct flight *f = s->flight;

	c->files_failed = f->n_failed;
	for (unsigned k = 0; k < f->n_triggers; k++)
		trigger_add_counts(f->triggers[k].trigger, &c->triggers_fired,
				   &c->triggers_suppressed);
}
