// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One capture session: its lifecycle and, for continuous sessions, its
 * rotation.
 *
 *   record:      CREATED -start-> RUNNING -stop-> STOPPING -drained->
 *                ASSEMBLING -file written-> DONE (or FAILED)
 *   continuous:  CREATED -start-> RUNNING -stop-> STOPPING -drained->
 *                STOPPED -start-> RUNNING ...; destroy from any state ends
 *                in DONE once every segment is on disk
 *   flight:      as continuous; snapshots are taken while RUNNING (recording
 *                goes on) or STOPPED (the history is kept until destroy)
 *
 * A session owns its configuration (session-config.c), its tracefs
 * instance, one capture stream per CPU (stream-set.c, lent to the capture
 * workers while running), its segments (segment.c): the open one
 * receiving data and the next one during a rotation, a publisher
 * (publish.c) that turns closed segments and snapshots into files, and an
 * eventfd on which workers and assemblers report back. A record is one
 * segment published into the client's fd. A continuous session rotates to
 * a new segment by size or time without stopping capture: the workers cut
 * each CPU's stream at a chunk boundary, so every event lands in exactly
 * one segment. A flight recorder's history and snapshots are flight.c's.
 *
 * Requests are checked for meaning here and in session-config.c (events
 * exist, sizes within bounds.h, clock and filter accepted by the kernel);
 * nothing is started when a request is invalid, and the instance is
 * destroyed on every failure path by ownership.
 *
 * Main thread only; the only other threads are the workers and the
 * segments' assemblers, which report through the eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/flight/flight.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/kernel/probe.h"
#include "daemon/recovery/recovery.h"
#include "daemon/kernel/ring-alloc.h"
#include "daemon/session/session-internal.h"
#include "daemon/store/spool.h"
#include "lib/ctl-proto.h"
#include "lib/time-util.h"

static const char *const state_names[_SESSION_STATE_MAX] = {
	[SESSION_ALLOCATING] = "allocating",
	[SESSION_CREATED] = "created",
	[SESSION_RUNNING] = "running",
	[SESSION_STOPPING] = "stopping",
	[SESSION_ASSEMBLING] = "assembling",
	[SESSION_STOPPED] = "stopped",
	[SESSION_DONE] = "done",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(enum session_state st)
{
	return st < _SESSION_STATE_MAX ? state_names[st] : "unknown";
}

/**
 * session_wake() - have the event loop look at the session.
 * @s: session
 */
void session_wake(struct session *s)
{
	uint64_t one = 1;

	(void)!write(s->event_fd, &one, sizeof(one));
}

/**
 * session_stopped() - the session's mode ended its stop (or a pause it made): STOPPED.
 * @s: session
 */
void session_stopped(struct session *s)
{
	s->state = SESSION_STOPPED;
}

/**
 * session_set_error() - fail the session (the first error wins).
 * @s: session
 * @error: -errno
 * @fmt: the message for the client and status
 */
void session_set_error(struct session *s, int error, const char *fmt, ...)
{
	va_list ap;

	if (s->error != 0)
		return;
	s->error = error;
	va_start(ap, fmt);
	vsnprintf(s->error_message, sizeof(s->error_message), fmt, ap);
	va_end(ap);
}

/* The session is done with its instance: the owner removes it (or keeps trying to). */
static void retire_instance(struct session *s)
{
	/*
	 * Removed on a thread, but here and now for one that never ran (no ring
	 * worth a thread, and a refused request should leave nothing behind by
	 * the time its client hears of it) and for one with probes (they can
	 * only go once their events are gone from the instance, and go before
	 * the client is answered).
	 */
	if (s->instance && s->env.retire_instance)
		s->env.retire_instance(TAKE_PTR(s->instance), s->start_usec == 0 || s->probes,
				       s->env.userdata);
	s->probes = probe_set_free(s->probes);
	s->instance = instance_free(s->instance);
	/* The top level's settings go back once nothing of the session changes them. */
	s->lease = instance_lease_release(s->lease);
}

/**
 * session_free() - release everything; the instance and spools are removed.
 * @s: session or NULL
 *
 * Waits for assembler threads if any run (the manager only frees sessions
 * that are done, so this does not block in practice).
 *
 * Return: NULL.
 */
struct session *session_free(struct session *s)
{
	if (!s)
		return NULL;
	sd_event_source_disable_unref(s->timer_source);
	sd_event_source_disable_unref(s->segment_timer);
	session_disarm_check(s);
	session_forget_symbols(s);
	sd_event_source_disable_unref(s->event_source);
	/* The instance is the thread's until it is done (a large ring: seconds). */
	s->ring_alloc = ring_alloc_free(s->ring_alloc);
	/* A stream still inside a worker cannot be freed; the pool is going away then. */
	stream_set_release(&s->cpus, s->state == SESSION_ALLOCATING ||
			   s->state == SESSION_CREATED || s->state == SESSION_STOPPED);
	s->flight = flight_free(s->flight);
	publisher_done(&s->publisher);
	segment_free(s->current);
	segment_free(s->next);
	retire_instance(s);
	stream_set_done(&s->cpus);
	metadata_done(&s->imeta);
	event_list_done(&s->events);
	free(s->skipped);
	session_config_done(&s->config);
	safe_close(s->out_fd);
	safe_close(s->dir_fd);
	safe_close(s->event_fd);
	free(s);
	return NULL;
}

/**
 * session_stream_params() - how this session's streams capture.
 * @s: session with its instance
 * @ret: the parameters
 */
void session_stream_params(const struct session *s, struct stream_params *ret)
{
	uint64_t step = session_segment_limit(s) / s->cpus.n_cpus / SEGMENT_SIZE_CHECKS;

	*ret = (struct stream_params){
		.notify_fd = s->event_fd,
		.subbuf_size = s->imeta.subbuf_size,
		.zstd = s->config.zstd,
		.level = s->config.level,
		.notify_bytes = s->config.mode == FTRACED_MODE_CONTINUOUS ?
				MIN(MAX(step, (uint64_t)1), PROGRESS_NOTIFY_BYTES) : PROGRESS_NOTIFY_BYTES,
		.progress = s->env.written,
		.rt_priority = s->config.rt_priority,
		.wake_bytes = s->wake_bytes,
		.spool_region_bytes = s->segment_env.in_place ?
			spool_in_place_region(s->cpus.n_cpus) : 0,
	};
}

static void on_published(const struct publish_outcome *o, void *userdata);
static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata);

/**
 * session_new() - validate a RECORD or CREATE request and prepare its session.
 * @env: event loop, capture pool, state directory and callbacks
 * @id: internal id (names the instance)
 * @name: the session's name (RECORD: made up by the manager)
 * @owner: uid of the requesting client
 * @req: the parsed request
 * @out_fd: RECORD: the output file, taken over (closed on failure); else -EBADF
 * @ret: the session, ALLOCATING (tracing off): env.on_ready follows once its ring is
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set; nothing is left in the kernel.
 */
int session_new(const struct session_env *env, uint32_t id, const char *name, uid_t owner,
		const struct ctl_request *req, int out_fd, struct session **ret, char *error,
		size_t n_error)
{
	_cleanup_(session_freep) struct session *s = NULL;
	unsigned n_cpus = capture_pool_cpus(env->pool);
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		safe_close(out_fd);
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	s->env = *env;
	s->out_fd = out_fd;
	s->dir_fd = -EBADF;
	s->event_fd = -EBADF;
	s->id = id;
	s->owner = owner;
	s->next_seq = 1;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->publisher = (struct publisher){
		.runner = env->runner,
		.session = s->name,
		.dir_fd = -EBADF,
		.retention = &s->config.retention,
		.done = on_published,
		.userdata = s,
	};

	r = session_setup_config(s, req, n_cpus, error, n_error);
	if (r < 0)
		return r;

	s->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->event_fd < 0) {
		snprintf(error, n_error, "eventfd: %s", strerror(errno));
		return negative_errno();
	}
	r = sd_event_add_io(env->event, &s->event_source, s->event_fd, EPOLLIN, on_event_fd, s);
	if (r < 0) {
		snprintf(error, n_error, "event loop: %s", strerror(-r));
		return r;
	}

	r = session_configure_instance(s, error, n_error);
	if (r < 0)
		return r;
	r = session_setup_files(s, error, n_error);
	if (r < 0)
		return r;
	if (s->config.mode == FTRACED_MODE_FLIGHT) {
		r = session_new_flight(s, error, n_error);
		if (r < 0)
			return r;
	}
	publisher_retention(&s->publisher);

	/* Last: from here the instance is the allocating thread's until it is done. */
	r = ring_alloc_start(s->instance, s->config.buffer_kb, flight_swaps(s->flight), s->event_fd,
			     &s->ring_alloc);
	if (r < 0) {
		snprintf(error, n_error, "cannot start allocating the ring buffer: %s",
			 strerror(-r));
		return r;
	}
	s->state = SESSION_ALLOCATING;
	*ret = TAKE_PTR(s);
	return 0;
}

/*
 * The ring is allocated, or could not be: the session is CREATED (or
 * FAILED) and its owner hears of it, unless a destroy came meanwhile.
 * Return: true if the session may be gone (env.on_ready or on_done ran).
 */
static bool allocation_over(struct session *s)
{
	int r;

	if (!s->ring_alloc || !ring_alloc_finished(s->ring_alloc, &r))
		return false;
	s->ring_alloc = ring_alloc_free(s->ring_alloc);
	s->state = SESSION_CREATED;
	if (r < 0) {
		session_set_error(s, r, "cannot set buffer size %u KiB per CPU: %s",
				  s->config.buffer_kb, strerror(-r));
		s->state = SESSION_FAILED;
	}
	log_debug("Session '%s': ring buffer of %u KiB per CPU %s", s->name, s->config.buffer_kb,
		  r < 0 ? "refused" : "allocated");
	if (s->destroy_requested) {
		s->state = SESSION_DONE;
		s->env.on_done(s, s->env.userdata);
		return true;
	}
	s->env.on_ready(s, r, s->env.userdata);
	return true;
}

/**
 * session_begin_running() - RUNNING: the streams (if any) go to the workers, tracing on.
 * @s: a session with its streams open
 *
 * Return: 0, or -errno after a stop was begun (the session's error says why).
 */
int session_begin_running(struct session *s)
{
	int r;

	s->error = 0;
	s->cut_short = 0;
	s->stopped_reported = false;
	s->state = SESSION_RUNNING;
	s->start_usec = monotonic_usec();
	session_arm_check(s);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus && s->cpus.cpus[cpu].stream; cpu++) {
		r = capture_pool_add(s->env.pool, s->cpus.cpus[cpu].stream);
		if (r < 0) {
			/* Streams already added are drained and released through the normal stop. */
			session_set_error(s, r, "cannot start capture on CPU %u", cpu);
			session_stop(s);
			return r;
		}
	}
	r = instance_set_tracing(s->instance, true);
	if (r < 0) {
		session_set_error(s, r, "cannot turn tracing on: %s", strerror(-r));
		session_stop(s);
		return r;
	}
	/* The symbols the files will need, read now rather than after the stop. */
	session_keep_symbols(s, /* starting= */ true);
	return 0;
}

/* A failed start: nothing was handed to the workers, so everything can go. */
static int start_failed(struct session *s, int r)
{
	stream_set_release(&s->cpus, true);
	s->current = segment_free(s->current);
	return r;
}

/**
 * session_start() - open a segment, hand the streams to the workers, trace.
 * @s: a CREATED or STOPPED session
 *
 * Return: 0, -EBUSY if it is not startable, or -errno (a record session is
 * then FAILED and must be freed).
 */
int session_start(struct session *s)
{
	struct stream_params params;
	char error[256];
	int r;

	if (s->state != SESSION_CREATED && s->state != SESSION_STOPPED)
		return -EBUSY;
	if (s->destroy_requested)
		return -ESHUTDOWN;
	s->warning[0] = '\0';
	if (s->flight)
		return flight_start(s->flight);
	/*
	 * Started again: what a stop cut short left in the ring (a full file
	 * system) was counted as lost with that run, and goes with it.
	 */
	if (s->state == SESSION_STOPPED) {
		r = instance_clear(s->instance);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot empty the ring of the last run, "
					  "its rest goes into this one: %m", s->name);
	}
	r = session_open_segment(s, &s->current);
	if (r < 0) {
		session_set_error(s, r, "cannot create spool files in the state directory: %s",
				  strerror(-r));
		return r;
	}
	/* A file on disk is written as the capture goes, so that the stop only finishes it. */
	if (s->config.mode == FTRACED_MODE_RECORD && s->config.zstd && s->out_fd >= 0) {
		r = segment_mirror_into(s->current, s->out_fd);
		if (r < 0)
			log_debug_errno(r, "Session '%s': the output is written at the stop, from "
					"the spool: %m", s->name);
	}
	session_stream_params(s, &params);
	r = stream_set_open(&s->cpus, s->instance, &params, s->current, error, sizeof(error));
	if (r < 0) {
		session_set_error(s, r, "%s", error);
		return start_failed(s, r);
	}
	r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ true, /* text= */ true);
	if (r < 0) {
		session_set_error(s, r, "cannot read the ring buffer statistics: %s", strerror(-r));
		return start_failed(s, r);
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		segment_set_start(s->current, cpu, &s->cpus.cpus[cpu].start,
				  s->cpus.cpus[cpu].cut_text);
		s->cpus.cpus[cpu].seen = s->cpus.cpus[cpu].start;
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		s->cpus.cpus[cpu].discarded = 0;
	r = session_begin_running(s);
	if (r < 0)
		return r;
	if (s->config.duration_ms > 0) {
		r = session_add_timer(s, &s->timer_source, s->config.duration_ms * 1000);
		if (r < 0) {
			session_set_error(s, r, "cannot arm the duration timer: %s", strerror(-r));
			session_stop(s);
			return r;
		}
	}
	session_arm_segment_timer(s);
	log_info("Session '%s' started on instance '%s' (%zu events, %s, sub-buffer %u bytes)",
		 s->name, instance_name(s->instance), s->events.n,
		 s->config.zstd ? "zstd" : "none", s->imeta.subbuf_size);
	return 0;
}

/**
 * session_stop() - turn tracing off and ask every worker for a final drain.
 * @s: session
 *
 * Completion is asynchronous: a record moves on to ASSEMBLING and calls
 * env.on_done when its file is written; a continuous session becomes
 * STOPPED and calls env.on_stopped once its last segment is on disk.
 *
 * Return: 0, or -EALREADY if it is not running.
 */
int session_stop(struct session *s)
{
	int r;

	if (s->state != SESSION_RUNNING)
		return -EALREADY;
	session_check(s);
	session_disarm_check(s);
	session_forget_symbols(s);
	s->state = SESSION_STOPPING;
	s->stop_usec = monotonic_usec();
	s->timer_source = sd_event_source_disable_unref(s->timer_source);
	s->segment_timer = sd_event_source_disable_unref(s->segment_timer);
	if (s->flight)
		flight_stop_triggers(s->flight);
	r = instance_set_tracing(s->instance, false);
	if (r < 0)
		log_warning_errno(r, "Session '%s': turning tracing off failed, draining anyway: %m",
				  s->name);
	if (s->flight && flight_stop(s->flight)) {
		session_wake(s); /* the stop is reported from the event loop */
		return 0;
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		r = capture_pool_finish(s->env.pool, s->cpus.cpus[cpu].stream);
		if (r < 0)
			return log_error_errno(r, "Session '%s': cannot finish CPU %u: %m", s->name,
					       cpu);
	}
	return 0;
}

static bool maybe_done(struct session *s);

/**
 * session_recovered_file() - where a failed record's capture was rebuilt.
 * @s: session
 *
 * Return: its path in the state directory, or NULL.
 */
const char *session_recovered_file(const struct session *s)
{
	return s->recovered[0] ? s->recovered : NULL;
}

/**
 * session_set_gap() - a time the session did not capture, for status and its next file.
 * @s: session
 * @note: what happened, with the times
 */
void session_set_gap(struct session *s, const char *note)
{
	snprintf(s->gap, sizeof(s->gap), "%s", note);
	s->gap_in_next_file = true;
}

/**
 * session_destroy() - stop if needed; env.on_done follows once all files are on disk.
 * @s: session
 */
void session_destroy(struct session *s)
{
	s->destroy_requested = true;
	session_stop(s);
	maybe_done(s);
}

/*
 * A record's output could not be written (a full disk, a FIFO nobody
 * reads): what was captured is rebuilt at once from the kept spool into
 * STATE_DIR/recovered/, and the client's message names that file.
 */
static void record_failed(struct session *s, const struct publish_outcome *o)
{
	char rel[PATH_MAX], path[PATH_MAX];
	int r;

	r = recovery_recover_spool(s->env.state_dir_fd, segment_trace_id(o->segment),
				   s->env.kallsyms, rel, sizeof(rel));
	if (r >= 0 && publish_path(s->env.state_dir_fd, rel, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "%s", rel);
	if (r < 0) {
		log_error_errno(o->result, "Session '%s': writing the output failed (%m); its spool "
				"is kept for recovery at the next start", s->name);
		session_set_error(s, o->result, "writing the output file failed: %s; what was "
				  "captured stays in the state directory's spool and is recovered "
				  "when ftraced starts", strerror(-o->result));
		return;
	}
	log_error_errno(o->result, "Session '%s': writing the output failed (%m); what was "
			"captured is in '%s'", s->name, path);
	snprintf(s->recovered, sizeof(s->recovered), "%s", rel);
	session_set_error(s, o->result, "writing the output file failed: %s; what was captured "
			  "is in '%s'", strerror(-o->result), path);
}

/* A segment's file is written (or failed). */
static void segment_published(struct session *s, const struct publish_outcome *o)
{
	if (s->config.mode == FTRACED_MODE_RECORD) {
		/*
		 * Probes must go before the client hears back, and a leased top
		 * level must be as it was found. Any other instance
		 * goes when the session is freed, just after the answer: the removal
		 * thread (the kernel holds tracefs's lock for tens of milliseconds)
		 * started first took the CPU from the answer.
		 */
		if (s->probes || s->lease)
			retire_instance(s);
		if (o->result < 0)
			record_failed(s, o);
		else
			log_info("Session '%s': wrote %" PRIu64 " bytes in %.3f s after stop",
				 s->name, o->bytes,
				 (double)(monotonic_usec() - s->stop_usec) / 1e6);
		s->file_bytes = o->bytes;
		s->state = s->error < 0 ? SESSION_FAILED : SESSION_DONE;
		return;
	}
	if (o->result < 0) {
		/* The publisher kept the spool: what was captured is recovered. */
		log_error_errno(o->result, "Session '%s': writing '%s' failed, keeping its spool: %m",
				s->name, o->name);
		if (s->cut_short == 0) {
			s->cut_short = o->result;
			snprintf(s->cut_message, sizeof(s->cut_message),
				 "writing segment %06" PRIu32 " failed: %s", segment_seq(o->segment),
				 strerror(-o->result));
		}
		if (s->state == SESSION_RUNNING)
			session_stop(s);
		return;
	}
	log_info("Session '%s': segment '%s' complete (%" PRIu64 " bytes)", s->name, o->name,
		 o->bytes);
}

static void on_published(const struct publish_outcome *o, void *userdata)
{
	struct session *s = userdata;

	if (o->ticket.snapshot)
		flight_published(s->flight, o);
	else
		segment_published(s, o);
}

/* A stream failed while running: stop everything, keep what was captured. */
static void check_streams(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct capture_counters c;

		if (!s->cpus.cpus[cpu].stream)
			continue;
		capture_stream_counters(s->cpus.cpus[cpu].stream, &c);
		session_note_clears(s, cpu, &c);
		if (c.error < 0 && s->cut_short == 0) {
			s->cut_short = c.error;
			snprintf(s->cut_message, sizeof(s->cut_message),
				 "capture stopped early: CPU %u: %s (spool in the state directory)",
				 cpu, strerror(-c.error));
		}
	}
	if (s->cut_short < 0 && s->state == SESSION_RUNNING) {
		log_error("Session '%s': %s; finishing with what was captured", s->name,
			  s->cut_message);
		session_stop(s);
	}
}

/* Every CPU is drained: close the last segment and release the streams. */
static void all_drained(struct session *s)
{
	int r;

	check_streams(s);
	r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ false, /* text= */ true);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	if (s->flight) {
		flight_drained(s->flight);
		return;
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct capture_counters c;

		capture_stream_counters(cs->stream, &c);
		/* A stream that failed left the rest of the kernel's buffer unread. */
		cs->discarded = c.discarded + (c.error < 0 ? cs->cut.entries : 0);
		if (cs->discarded > 0)
			log_error("Session '%s': CPU %u: %" PRIu64 " events could not be stored",
				  s->name, cpu, cs->discarded);
		segment_close_cpu(s->current, cpu, c.bytes_stored - cs->base_bytes,
				  c.chunks - cs->base_chunks, &cs->cut,
				  session_cpustat_text(s, cs->discarded, TAKE_PTR(cs->cut_text)));
	}
	s->gap_in_next_file = false;
	/* The trace_pipe_raw fds must close before the instance can go. */
	stream_set_release(&s->cpus, true);
	if (s->config.mode == FTRACED_MODE_RECORD) {
		/*
		 * The instance goes once the file is written (segment_published()):
		 * removing it takes the kernel tens of milliseconds with tracefs's
		 * event lock held, and the assembler reads event formats under
		 * that lock.
		 */
		if (s->error < 0) {
			retire_instance(s);
			s->current = segment_free(s->current);
			s->state = SESSION_FAILED;
			return;
		}
		s->state = SESSION_ASSEMBLING;
	} else {
		s->state = SESSION_STOPPED;
	}
	session_publish_segment(s, TAKE_PTR(s->current));
	if (s->config.mode == FTRACED_MODE_RECORD && s->publisher.n_items == 0) {
		retire_instance(s);
		s->state = SESSION_FAILED;
	}
}

/**
 * session_snapshot() - write a flight recorder's history into a file; recording goes on.
 * @s: a flight session, running or stopped
 * @waiter: passed back to env.on_snapshot when the file is complete (may be NULL)
 * @out_fd: the client's file, taken over; -EBADF for a file in the snapshots directory
 * @trim: start every CPU at the latest time from which any CPU is complete
 * @since_us: keep only events from this wall-clock time on (µs since the epoch); 0: all
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0 (env.on_snapshot follows), or -errno with @error set.
 */
int session_snapshot(struct session *s, void *waiter, int out_fd, bool trim, uint64_t since_us,
		     char *error, size_t n_error)
{
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
	return flight_snapshot(s->flight, waiter, out_fd, trim, since_us, error, n_error);
}

/**
 * session_forget_waiter() - a client went away: its snapshots still complete, unreported.
 * @s: session
 * @waiter: what was passed to session_snapshot()
 */
void session_forget_waiter(struct session *s, void *waiter)
{
	flight_forget_waiter(s->flight, waiter);
	publisher_forget_waiter(&s->publisher, waiter);
}

/**
 * session_has_waiter() - is a snapshot of @waiter still in progress?
 * @s: session
 * @waiter: what was passed to session_snapshot()
 *
 * Return: true until its completion was reported.
 */
bool session_has_waiter(const struct session *s, const void *waiter)
{
	return flight_has_waiter(s->flight, waiter) || publisher_has_waiter(&s->publisher, waiter);
}

/*
 * Tells the owner about completions; env.on_done may free the session.
 * Return: true once the owner heard the session is done (it may be gone).
 */
static bool maybe_done(struct session *s)
{
	if (s->config.mode == FTRACED_MODE_RECORD) {
		if (s->state != SESSION_DONE && s->state != SESSION_FAILED)
			return false;
		s->env.on_done(s, s->env.userdata);
		return true;
	}
	if (s->state != SESSION_CREATED && s->state != SESSION_STOPPED)
		return false;
	if (s->publisher.n_items > 0 || flight_pending(s->flight) > 0)
		return false;
	if (s->destroy_requested) {
		s->state = SESSION_DONE;
		s->env.on_done(s, s->env.userdata);
		return true;
	}
	if (s->state == SESSION_STOPPED && !s->stopped_reported) {
		s->stopped_reported = true;
		if (s->env.on_stopped)
			s->env.on_stopped(s, s->env.userdata);
	}
	return false;
}

static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
	if (s->state == SESSION_ALLOCATING) {
		allocation_over(s); /* may free the session */
		return 0;
	}
	if (s->state == SESSION_RUNNING)
		check_streams(s);
	if (s->cut_generation != 0 && stream_set_cut_reached(&s->cpus, s->cut_generation))
		session_complete_rotation(s);
	if (s->state == SESSION_RUNNING && session_segment_limit(s) > 0 &&
	    stream_set_segment_bytes(&s->cpus) >= session_segment_limit(s))
		session_rotate(s);
	/*
	 * Data comes in: the symbols are refreshed on a thread ahead of their
	 * expiry, so the stop (or a snapshot, or a segment) finds
	 * them ready instead of reading them (~50 ms) on its own path.
	 */
	session_keep_symbols(s, /* starting= */ false);
	if (s->flight)
		flight_progress(s->flight);
	if (s->state == SESSION_STOPPING && s->cut_generation == 0 && !flight_draining(s->flight) &&
	    stream_set_finished(&s->cpus))
		all_drained(s);
	publisher_poll(&s->publisher);
	/* Whoever waits for a file is answered before its spool is removed. */
	if (!maybe_done(s))
		publisher_release(&s->publisher);
	return 0;
}
