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
 * ring itself, and resumes (that drain is flight-kernel.c). Triggers
 * (trigger.c) ask for snapshots by themselves, optionally after a post
 * time. It sees its session only through the host (session-mode.h).
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

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/kernel/event-list.h"
#include "daemon/flight/flight.h"
#include "daemon/flight/flight-internal.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/output/publish.h"
#include "daemon/recovery/recovered-file.h"
#include "daemon/output/segment.h"
#include "daemon/output/session-config.h"
#include "daemon/output/session-mode.h"
#include "daemon/store/spool.h"
#include "daemon/output/stream-set.h"
#include "daemon/flight/trigger.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"
#include "lib/time-util.h"
#include "lib/wall-clock.h"

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata);

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
	flight_keep_remove(f);
	for (size_t i = 0; i < f->n_jobs; i++)
		safe_close(f->jobs[i].out_fd);
	free(f->jobs);
	safe_close(f->snap_dir_fd);
	for (unsigned cpu = 0; f->copies && cpu < f->n_copies; cpu++)
		safe_close(f->copies[cpu]);
	free(f->copies);
	if (f->keep_history)
		spool_close(&f->history); /* a persistent history goes on: the next start drains it */
	else
		spool_remove(&f->history); /* the session and its instance go: nothing to recover */
	free(f);
	return NULL;
}

/* STATE_DIR/sessions/<name>/snapshots, created in the session's directory. */
static int open_snapshot_dir(struct flight *f)
{
	if (mkdirat(f->host.dir_fd, SNAPSHOTS_DIR, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	f->snap_dir_fd = openat(f->host.dir_fd, SNAPSHOTS_DIR,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return f->snap_dir_fd < 0 ? negative_errno() : 0;
}

/**
 * flight_new() - the flight recorder's part of a new session.
 * @host: the session's parts, with its instance and directory (copied; what
 *        it points to is borrowed for the flight's life)
 * @ret: receives the flight state, also on failure (flight_free() it)
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Sets the kernel side (overwrite mode for the kernel backend), the
 * snapshots directory and every trigger's own instance.
 *
 * Return: 0, or -errno with @error set.
 */
int flight_new(const struct mode_host *host, struct flight **ret, char *error, size_t n_error)
{
	struct flight *f;
	int r;

	*ret = f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	f->host = *host;
	f->has_date = wall_date_parse(host->date, &f->date_us);
	f->snap_dir_fd = -EBADF;
	f->history.dir_fd = -EBADF;
	if (flight_kernel_backend(f)) {
		r = instance_set_overwrite(f->host.instance, true);
		if (r < 0) {
			snprintf(error, n_error, "cannot set the ring buffer to overwrite mode: %s",
				 strerror(-r));
			return r;
		}
		f->swap = instance_has_snapshot(f->host.instance);
		if (f->swap)
			snprintf(f->note, sizeof(f->note), "kernel backend: each snapshot swaps the "
				 "ring with the kernel's snapshot buffer; tracing never pauses");
		else if (f->host.config->backend == FTRACED_FLIGHT_PERSISTENT)
			snprintf(f->note, sizeof(f->note), "persistent backend: the history is in "
				 "boot-mapped instance '%s', which a crash and warm reboot keep; each "
				 "snapshot pauses tracing while the ring is drained, and a ring that "
				 "was read is not kept across the next reboot by 6.12",
				 instance_name(f->host.instance));
		else
			snprintf(f->note, sizeof(f->note), "kernel backend: each snapshot pauses "
				 "tracing while the ring is drained (this kernel has no snapshot "
				 "buffer)");
	}
	r = open_snapshot_dir(f);
	if (r >= 0)
		recovered_file_newest(f->snap_dir_fd, f->recovered, sizeof(f->recovered));
	if (r < 0) {
		snprintf(error, n_error, "cannot create the snapshots directory: %s", strerror(-r));
		return r;
	}
	if (flight_kernel_backend(f)) {
		r = flight_keep_history_recipe(f);
		if (r < 0) {
			snprintf(error, n_error, "cannot write the recovery recipe of the history: %s",
				 strerror(-r));
			return r;
		}
	}
	f->triggers = calloc(MAX(f->host.config->n_triggers, 1u), sizeof(*f->triggers));
	if (!f->triggers) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	for (unsigned k = 0; k < f->host.config->n_triggers; k++) {
		struct trigger_slot *slot = &f->triggers[k];
		struct trigger_env env = {
			.event = f->host.event,
			.instance_tag = f->host.instance_tag,
			/* Apart from every session's own id: bit 40 up. */
			.instance_id = (UINT64_C(1) << 40) | ((uint64_t)f->host.id << 8) | k,
			.clock = f->host.config->clock,
			.date = f->host.date,
			.n_cpus = f->host.cpus->n_cpus,
			.fire = on_trigger_fire,
			.userdata = slot,
		};

		slot->flight = f;
		r = trigger_new(&env, f->host.config->triggers[k], &slot->trigger, error, n_error);
		if (r < 0)
			return r;
		f->n_triggers++;
	}
	return 0;
}

/**
 * flight_swaps() - does this session's ring need a snapshot buffer beside it?
 * @f: flight state or NULL
 *
 * Return: true for a kernel-backend flight recorder on a kernel that has one.
 */
bool flight_swaps(const struct flight *f)
{
	return f && f->swap;
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
 * @f: flight state of a CREATED or STOPPED session
 *
 * Return: 0, or -errno with the session's error set.
 */
int flight_start(struct flight *f)
{
	struct stream_params params;
	char error[256];
	int r;

	f->flush_requested = f->flush_done = 0;
	f->drain_again = false;
	/*
	 * A boot-mapped ring may hold what no recovery could write (a kernel
	 * upgraded since, no recipe): not this history, and not to be mixed in.
	 * Unless it is this boot's, which a restarted daemon resumes, once.
	 */
	if (f->host.config->backend == FTRACED_FLIGHT_PERSISTENT && !f->resume) {
		r = instance_clear(f->host.instance);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot empty boot-mapped instance '%s' "
					  "before arming it: %m", f->host.name,
					  instance_name(f->host.instance));
	}
	f->resume = false; /* a later start is a new history */
	if (!flight_kernel_backend(f)) {
		if (!f->host.cpus->cpus[0].ring) {
			if (stream_set_rings_new(f->host.cpus, f->host.config->flight_size /
								f->host.cpus->n_cpus) < 0) {
				flight_fail(f, -ENOMEM, "out of memory");
				return -ENOMEM;
			}
			flight_keep_rings(f, f->resume_kept);
		} else {
			/* No gap may hide inside a history, but the one a restart made. */
			for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
				chunk_ring_clear(f->host.cpus->cpus[cpu].ring);
		}
		f->resume_kept = false;
		f->host.ops->stream_params(f->host.session, &params);
		r = stream_set_open(f->host.cpus, f->host.instance, &params, NULL, error, sizeof(error));
		if (r < 0) {
			flight_fail(f, r, "%s", error);
			stream_set_release(f->host.cpus, true);
			return r;
		}
	}
	r = stream_set_read_stats(f->host.cpus, f->host.instance, /* start= */ true, /* text= */ false);
	if (r < 0) {
		flight_fail(f, r, "cannot read the ring buffer statistics: %s", strerror(-r));
		stream_set_release(f->host.cpus, true);
		return r;
	}
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
		f->host.cpus->cpus[cpu].lost_base = f->host.cpus->cpus[cpu].start.overrun;
		f->host.cpus->cpus[cpu].seen = f->host.cpus->cpus[cpu].start;
	}
	/* Read once: realtime minus the age would move by the two reads' distance each time. */
	f->start_wall_usec = realtime_usec();
	r = f->host.ops->begin_running(f->host.session);
	if (r < 0)
		return r;
	for (unsigned k = 0; k < f->n_triggers; k++) {
		r = trigger_arm(f->triggers[k].trigger);
		if (r < 0) {
			char result[128];

			snprintf(result, sizeof(result), "not armed: %s", strerror(-r));
			trigger_set_result(f->triggers[k].trigger, result);
			log_warning_errno(r, "Session '%s': cannot arm a trigger, ignoring: %m",
					  f->host.name);
		}
	}
	log_info("Session '%s' started on instance '%s' (flight recorder, %s backend, %zu events)",
		 f->host.name, instance_name(f->host.instance),
		 ctl_flight_backend_name(f->host.config->backend),
		 f->host.events->n);
	return 0;
}


/**
 * flight_draining() - is a kernel-backend drain under way?
 * @f: flight state or NULL
 *
 * Return: true while temporary streams drain the kernel's ring.
 */
bool flight_draining(const struct flight *f)
{
	return f && f->draining;
}

/**
 * flight_progress() - something changed: serve the snapshots that are ready.
 * @f: flight state
 */
void flight_progress(struct flight *f)
{
	if (flight_kernel_backend(f)) {
		if (f->draining && stream_set_finished(f->host.cpus))
			flight_kernel_drain_end(f);
		return;
	}
	if (f->n_jobs > 0)
		flight_serve_jobs(f);
}

/**
 * flight_drained() - memory backend, every CPU finished at stop: the rings keep the history.
 * @f: flight state
 *
 * The session is stopped after this.
 */
void flight_drained(struct flight *f)
{
	stream_set_release(f->host.cpus, true);
	flight_stopped(f);
	flight_serve_jobs(f);
}

/**
 * flight_stop() - the kernel backend's stop: its history stays in the kernel's ring.
 * @f: flight state, tracing just turned off
 *
 * Return: true if the stop is complete (kernel backend); false if the
 * workers' final drain must follow (memory backend).
 */
bool flight_stop(struct flight *f)
{
	if (!flight_kernel_backend(f))
		return false;
	/* A drain under way ends on its own. */
	if (!f->draining)
		flight_stopped(f);
	f->host.ops->wake(f->host.session); /* the stop is reported from the event loop */
	return true;
}

/*
 * Why a snapshot is taken, said in the history itself at that moment: a
 * line in the session's own ring (ftrace:print), which trace-cmd report
 * shows among the events. Best effort: the file says it too.
 */
static void mark_cause(struct flight *f, const char *cause)
{
	char line[TRIGGER_CAUSE_MAX + 16];
	int r;

	if (!f->host.instance)
		return; /* no tracefs (a unit test's host) */
	snprintf(line, sizeof(line), "ftraced: %s", cause);
	r = instance_write_marker(f->host.instance, line);
	if (r < 0)
		log_debug_errno(r, "Session '%s': cannot mark the snapshot's cause in the ring: %m",
				f->host.name);
}

/* Queues a snapshot; @out_fd is taken over. */
static int queue_snapshot(struct flight *f, void *waiter, int out_fd,
			  const struct snapshot_window *window, struct trigger_slot *trigger,
			  const char *cause)
{
	struct snapshot_job job = { .waiter = waiter, .out_fd = out_fd, .window = *window,
				    .trigger = trigger };
	struct snapshot_job *grown;
	int r;

	snprintf(job.cause, sizeof(job.cause), "%s", cause);
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
	if (flight_kernel_backend(f)) {
		if (f->draining) {
			job.flush = f->flush_requested + 1;
			f->drain_again = true;
		} else {
			r = flight_kernel_drain_begin(f);
			if (r < 0) {
				safe_close(out_fd);
				return r;
			}
			job.flush = f->flush_requested;
		}
	} else if (flight_phase(f) == MODE_RUNNING) {
		job.flush = ++f->flush_requested;
		for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
			r = capture_pool_flush(f->host.pool, f->host.cpus->cpus[cpu].stream);
			if (r < 0) {
				/* Served when the stream's next cut or the stop comes. */
				log_warning_errno(r, "Session '%s': cannot flush CPU %u: %m",
						  f->host.name, cpu);
				job.flush = FLUSH_AFTER_STOP;
			}
		}
	} else if (flight_phase(f) == MODE_STOPPING) {
		/* The final drain is queued already: everything is in the rings after it. */
		job.flush = FLUSH_AFTER_STOP;
	}
	f->jobs[f->n_jobs++] = job;
	/* Symbols too old for the file are read while the data is drained, not after. */
	kallsyms_prefetch(f->host.kallsyms, KALLSYMS_EXPIRED);
	f->host.ops->wake(f->host.session);
	return 0;
}

static void trigger_snapshot(struct trigger_slot *slot)
{
	uint64_t pre = trigger_spec(slot->trigger)->pre_ms * 1000000;
	struct snapshot_window window = {};
	char result[128];
	int r;

	/* pre=: from that long before the event (on the trace clock both instances share). */
	if (pre > 0 && slot->fired_ts > pre)
		window.since_ts = slot->fired_ts - pre;
	r = queue_snapshot(slot->flight, NULL, -EBADF, &window, slot, slot->cause);
	if (r < 0) {
		snprintf(result, sizeof(result), "no snapshot: %s", strerror(-r));
		trigger_set_result(slot->trigger, result);
	}
}

static int on_post_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct trigger_slot *slot = userdata;
	LOG_CONTEXT(slot->flight->host.name, instance_name(slot->flight->host.instance));

	slot->post = sd_event_source_disable_unref(slot->post);
	trigger_snapshot(slot);
	return 0;
}

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata)
{
	struct trigger_slot *slot = userdata;
	uint64_t post = trigger_spec(t)->post_ms;
	int r;

	if (flight_phase(slot->flight) != MODE_RUNNING || slot->post)
		return;
	slot->fired_ts = ts;
	snprintf(slot->cause, sizeof(slot->cause), "%s", trigger_cause(t));
	mark_cause(slot->flight, slot->cause);
	if (post > 0) {
		r = sd_event_add_time_relative(slot->flight->host.event, &slot->post,
					       CLOCK_MONOTONIC, post * 1000, TIMER_ACCURACY_USEC,
					       on_post_timer, slot);
		if (r >= 0)
			return;
		log_warning_errno(r, "Session '%s': cannot wait before the snapshot, taking it "
				  "now: %m", slot->flight->host.name);
	}
	trigger_snapshot(slot);
}

/**
 * flight_stop_triggers() - at stop: no more firing; a snapshot waiting for its post time
 * is taken now.
 * @f: flight state
 */
void flight_stop_triggers(struct flight *f)
{
	for (unsigned k = 0; k < f->n_triggers; k++) {
		struct trigger_slot *slot = &f->triggers[k];

		trigger_disarm(slot->trigger);
		if (slot->post) {
			slot->post = sd_event_source_disable_unref(slot->post);
			trigger_snapshot(slot);
		}
	}
}

/**
 * flight_published() - a snapshot file is in place (or failed): tell whoever asked.
 * @f: flight state
 * @o: the publisher's outcome for a snapshot ticket
 */
void flight_published(struct flight *f, const struct publish_outcome *o)
{
	struct trigger_slot *trigger = o->ticket.cookie;
	const char *where = o->path ?: o->name;

	if (f->n_unpublished > 0)
		f->n_unpublished--;
	if (flight_kernel_backend(f))
		flight_drop_copies_when_written(f);
	if (o->result < 0) {
		flight_snapshot_failed(f, o->ticket.waiter, trigger, o->result);
		return;
	}
	f->n_snapshots++;
	f->last_snapshot_us = realtime_usec();
	snprintf(f->last_snapshot, sizeof(f->last_snapshot), "%s", where ?: "");
	log_info("Session '%s': snapshot %s complete (%" PRIu64 " bytes)%s%s", f->host.name,
		 where ?: "into the client's file", o->bytes, trigger ? ", for trigger " : "",
		 trigger ? trigger_spec(trigger->trigger)->event : "");
	if (trigger)
		trigger_set_result(trigger->trigger, where ?: "written");
	if (o->ticket.waiter)
		f->host.ops->snapshot_done(f->host.session, o->ticket.waiter, 0, where, o->bytes,
					   f->note[0] ? f->note : NULL);
}

/**
 * flight_snapshot() - write the history into a file; recording goes on.
 * @f: flight state of a session that ran
 * @waiter: passed back to the host's snapshot_done when the file is complete (may be NULL)
 * @out_fd: the client's file, taken over; -EBADF for a file in the snapshots directory
 * @trim: start every CPU at the latest time from which any CPU is complete
 * @since_us: keep only events from this wall-clock time on (µs since the epoch); 0: all
 * @cause: who asked for it, said in the history and in the file
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0 (snapshot_done follows), or -errno with @error set.
 */
int flight_snapshot(struct flight *f, void *waiter, int out_fd, bool trim, uint64_t since_us,
		    const char *cause, char *error, size_t n_error)
{
	struct snapshot_window window = { .trim = trim };
	int r;

	if (since_us > 0) {
		/* The session's wall-clock anchor places the time on the trace clock. */
		if (!f->has_date) {
			safe_close(out_fd);
			snprintf(error, n_error, "'%s' records with clock %s, which has no "
				 "wall-clock anchor: --since cannot be placed on it", f->host.name,
				 f->host.config->clock ?: "local");
			return -EINVAL;
		}
		if ((long long)since_us > f->date_us)
			window.since_ts = (since_us - (uint64_t)f->date_us) * 1000;
	}
	mark_cause(f, cause);
	r = queue_snapshot(f, waiter, out_fd, &window, NULL, cause);
	if (r == -EBUSY)
		snprintf(error, n_error, "'%s' has %u snapshots in progress already", f->host.name,
			 SNAPSHOTS_PENDING_MAX);
	else if (r < 0)
		snprintf(error, n_error, "cannot take a snapshot: %s", strerror(-r));
	return r;
}

/**
 * flight_pending() - snapshots asked for and not yet handed to the publisher.
 * @f: flight state or NULL
 *
 * Return: how many (0 for other modes).
 */
size_t flight_pending(const struct flight *f)
{
	return f ? f->n_jobs : 0;
}

/**
 * flight_forget_waiter() - a client went away: its queued snapshots stay, unreported.
 * @f: flight state or NULL
 * @waiter: as given to flight_snapshot()
 */
void flight_forget_waiter(struct flight *f, const void *waiter)
{
	for (size_t i = 0; f && i < f->n_jobs; i++)
		if (f->jobs[i].waiter == waiter)
			f->jobs[i].waiter = NULL;
}

/**
 * flight_has_waiter() - is a snapshot of @waiter still queued?
 * @f: flight state or NULL
 * @waiter: as given to flight_snapshot()
 *
 * Return: true while it waits for its flush or drain.
 */
bool flight_has_waiter(const struct flight *f, const void *waiter)
{
	for (size_t i = 0; f && i < f->n_jobs; i++)
		if (f->jobs[i].waiter == waiter)
			return true;
	return false;
}
