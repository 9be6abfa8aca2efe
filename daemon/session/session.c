// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One capture session: its creation, its requests, its event loop and its
 * end; the run itself is session-run.c's, the segments and rotation
 * session-segments.c's (the order of the family: session-internal.h).
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
#include "lib/ctl/ctl-proto.h"
#include "lib/time-util.h"

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
	sd_event_source_disable_unref(s->read_timer);
	proc_maps_done(&s->procmaps);
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
	session_retire_instance(s);
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
 * @ret_kernel_refused: on failure, whether it was the kernel that refused (may be NULL)
 *
 * Return: 0, or -errno with @error set; nothing is left in the kernel.
 */
int session_new(const struct session_env *env, uint32_t id, const char *name, uid_t owner,
		const struct ctl_request *req, int out_fd, struct session **ret, char *error,
		size_t n_error, bool *ret_kernel_refused)
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
	if (r < 0) {
		if (ret_kernel_refused)
			*ret_kernel_refused = s->kernel_refused;
		return r;
	}
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

/**
 * session_check_request() - would session_new() accept this CREATE request?
 * @env: as for session_new()
 * @owner: uid the session would belong to
 * @req: the parsed request
 * @error: receives what is wrong
 * @n_error: its size
 *
 * Its options and events are checked against this kernel, and nothing is
 * made: a reload checks every session file this way before it changes
 * anything. What only making it can tell (memory, the instance, the disk)
 * is left to session_new().
 *
 * Return: 0, or -errno with @error set.
 */
int session_check_request(const struct session_env *env, uid_t owner,
			  const struct ctl_request *req, char *error, size_t n_error)
{
	_cleanup_(session_freep) struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	s->env = *env;
	s->out_fd = s->dir_fd = s->event_fd = -EBADF;
	s->publisher.dir_fd = -EBADF;
	s->owner = owner;
	snprintf(s->name, sizeof(s->name), "%s", req->session);
	return session_check_config(s, req, capture_pool_cpus(env->pool), error, n_error);
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
			session_retire_instance(s);
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
	session_rotations_answer(s, segment_seq(o->segment), o->result, o->path, o->bytes);
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

/**
 * session_snapshot() - write a flight recorder's history into a file; recording goes on.
 * @s: a flight session, running or stopped
 * @waiter: passed back to env.on_snapshot when the file is complete (may be NULL)
 * @out_fd: the client's file, taken over; -EBADF for a file in the snapshots directory
 * @trim: start every CPU at the latest time from which any CPU is complete
 * @since_us: keep only events from this wall-clock time on (µs since the epoch); 0: all
 * @cause: who asked for it, said in the history and in the file
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0 (env.on_snapshot follows), or -errno with @error set.
 */
int session_snapshot(struct session *s, void *waiter, int out_fd, bool trim, uint64_t since_us,
		     const char *cause, char *error, size_t n_error)
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
	return flight_snapshot(s->flight, waiter, out_fd, trim, since_us, cause, error, n_error);
}

/**
 * session_rotate_request() - close a running continuous session's open segment now.
 * @s: session
 * @waiter: passed back to env.on_rotated once the closed segment is on disk
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * The rotation is the one the segment size and time trigger: every worker
 * cuts its stream (draining the kernel's partial pages) and goes on into
 * the next segment, so the closed one holds every event up to the cut and
 * capture never pauses. While another rotation is under way, this one
 * begins when it completes. A stop meanwhile answers with the last segment.
 *
 * Return: 0 (env.on_rotated follows), or -errno with @error set.
 */
int session_rotate_request(struct session *s, void *waiter, char *error, size_t n_error)
{
	if (s->config.mode != FTRACED_MODE_CONTINUOUS) {
		snprintf(error, n_error, "'%s' is %s: only a continuous session has segments to "
			 "rotate", s->name, s->config.mode == FTRACED_MODE_FLIGHT ?
			 "a flight recorder (ftracectl snapshot writes its history)" :
			 "an on-demand record");
		return -EINVAL;
	}
	if (s->state != SESSION_RUNNING) {
		snprintf(error, n_error, "'%s' is %s, not running: its segments are all closed "
			 "(ftracectl start it first)", s->name, session_state_to_string(s->state));
		return -EINVAL;
	}
	if (s->n_rotations >= ROTATIONS_PENDING_MAX) {
		snprintf(error, n_error, "'%s' has %u rotations waiting already", s->name,
			 ROTATIONS_PENDING_MAX);
		return -EBUSY;
	}
	s->rotations[s->n_rotations++] = (struct rotation_waiter){ .waiter = waiter };
	/* Any client in the group can ask, as often as it likes: said, not flooded. */
	log_ratelimit_info("Session '%s': rotation requested", s->name);
	session_rotate(s); /* or, if one is under way, once it completes */
	return 0;
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
	session_rotations_forget(s, waiter);
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
	return flight_has_waiter(s->flight, waiter) || publisher_has_waiter(&s->publisher, waiter) ||
	       session_rotations_have(s, waiter);
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
		session_check_streams(s);
	if (s->stop_requested) {
		s->stop_requested = false;
		session_stop(s);
	}
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
		session_all_drained(s);
	publisher_poll(&s->publisher);
	/* Whoever waits for a file is answered before its spool is removed. */
	if (!maybe_done(s))
		publisher_release(&s->publisher);
	return 0;
}

/**
 * session_resume_history() - its next start takes up the history the daemon's run before kept.
 * @s: session; only a memory flight recorder has one (flight-keep.c)
 */
void session_resume_history(struct session *s)
{
	flight_resume_kept(s->flight);
}

/**
 * session_leave_history() - the daemon exits: the history it kept stays for the next start.
 * @s: session; only a memory flight recorder has one
 */
void session_leave_history(struct session *s)
{
	flight_leave_kept(s->flight);
}

/**
 * session_leave_armed() - the daemon exits: a persistent flight recorder keeps recording.
 * @s: session
 *
 * Its boot-mapped instance stays as it is, tracing, and its recipe stays:
 * the next start (after a restart, or after a crash and reboot) writes
 * what the ring then holds into a file. Other sessions are left to the
 * caller.
 *
 * Return: NULL once @s is freed so; @s if it is not such a session.
 */
struct session *session_leave_armed(struct session *s)
{
	if (!s->flight || s->state != SESSION_RUNNING || !flight_leave_armed(s->flight))
		return s;
	log_info("Session '%s': left recording in boot-mapped instance '%s'; the next start "
		 "writes its history", s->name, instance_name(s->instance));
	s->instance = instance_abandon(s->instance);
	return session_free(s);
}
