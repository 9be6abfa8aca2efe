// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's run: starting it (a segment open, the streams handed to the
 * workers, tracing on), stopping it (tracing off, a final drain asked of
 * every worker), a failed stream's early stop, and the end of the drain
 * (the last segment closed and handed to the publisher). session.c calls
 * these from its requests and its event loop. Main thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/capture.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/flight.h"
#include "daemon/session/session-internal.h"
#include "lib/time-util.h"

/*
 * -s: every read_interval_us, each CPU's worker reads what the kernel holds,
 * partial sub-buffers too, so that no event waits longer in the ring than
 * that for the watermark's wake-up (which stays: a busy CPU is read sooner).
 */
static int on_read_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;
	int r;

	for (unsigned cpu = 0; cpu < s->cpus.n_cpus && s->cpus.cpus[cpu].stream; cpu++) {
		r = capture_pool_read(s->env.pool, s->cpus.cpus[cpu].stream);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot ask CPU %u to be read (-s): %m",
					  s->name, cpu);
	}
	r = sd_event_source_set_time_relative(source, s->config.read_interval_us);
	return r < 0 ? r : sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

static void arm_read_timer(struct session *s)
{
	int r;

	if (s->config.read_interval_us == 0)
		return;
	r = sd_event_add_time_relative(s->env.event, &s->read_timer, CLOCK_MONOTONIC,
				       s->config.read_interval_us, 0, on_read_timer, s);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot arm the read interval (-s); CPUs are "
				  "read at the watermark only: %m", s->name);
}

/**
 * session_set_proc_maps() - --proc-map: the processes' maps, sent with the record's STOP.
 * @s: a record with --proc-map
 * @texts: PROCMAPS texts, one per process (trace-cmd's format; the client
 *         reads them, with rights the daemon does not keep)
 * @n: how many
 *
 * Kept for the last file, which is assembled after the stop.
 *
 * Return: 0, -EINVAL if the session did not ask for them, -EALREADY if it
 * is stopping already (its last file may be under way), or -ENOMEM.
 */
int session_set_proc_maps(struct session *s, const char *const *texts, unsigned n)
{
	int r;

	if (!s->config.proc_map || s->config.mode != FTRACED_MODE_RECORD)
		return -EINVAL;
	if (s->state != SESSION_RUNNING)
		return -EALREADY;
	proc_maps_done(&s->procmaps);
	for (unsigned k = 0; k < n; k++) {
		r = proc_maps_add(&s->procmaps, texts[k]);
		if (r < 0)
			return r;
	}
	return 0;
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
	arm_read_timer(s);
	/* The symbols the files will need, read now rather than after the stop. */
	session_keep_symbols(s, /* starting= */ true);
	return 0;
}

/* A failed start: nothing was handed to the workers, so everything can go. */
static int start_failed(struct session *s, int r)
{
	stream_set_release(&s->cpus, true);
	stream_set_rings_free(&s->cpus);
	s->current = segment_free(s->current);
	return r;
}

/*
 * record -m: each CPU's chunks go into a ring that keeps the newest
 * keep_size bytes (chunk headers counted, so the data is less), evicting
 * the oldest whole chunks, as a memory flight recorder's history does. No
 * spool: disk and memory stay bounded however long the record runs. The
 * file is a snapshot of the rings at the stop (session_all_drained()).
 * A crash loses what the rings held, as it does a flight recorder's.
 */
static int open_keep_segment(struct session *s)
{
	char stamp[32], target[PUBLISH_NAME_MAX + FTRACED_NAME_MAX + 16];
	char origin[FTRACED_NAME_MAX + 128];
	int r;

	r = stream_set_rings_new(&s->cpus, s->config.keep_size);
	if (r < 0)
		return r;
	publish_utc_stamp(stamp, sizeof(stamp));
	snprintf(target, sizeof(target), "%s-%s.dat", s->name, stamp);
	r = segment_new_snapshot(&s->segment_env, s->next_seq++, target,
				 &(struct snapshot_window){}, &s->current);
	if (r < 0) {
		stream_set_rings_free(&s->cpus);
		return r;
	}
	snprintf(origin, sizeof(origin), "ftraced-origin: session '%s' (record, the most recent "
		 "%" PRIu64 " KiB per CPU)\nftraced-cause: ftracectl record by uid %u\n", s->name,
		 s->config.keep_size / 1024, (unsigned)s->owner);
	if (segment_set_origin(s->current, origin) < 0)
		log_warning("Session '%s': out of memory saying the file's origin in it", s->name);
	return 0;
}

/*
 * record -m at the end of the drain: what each CPU's ring holds becomes
 * the file's data, the CPU statistics saying how much older data was
 * dropped (ftraced-evicted-bytes, raw sub-buffer bytes); the rings go, the
 * chunks now the segment's, and their totals stay for status.
 */
static int collect_kept(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct chunk_ring_stats st;
		struct chunk_list l = {};
		char *text = NULL;
		int r;

		chunk_ring_stats(cs->ring, &st);
		r = chunk_ring_collect(cs->ring, &l);
		if (r < 0)
			return r;
		s->kept_raw += l.raw_bytes;
		s->kept_bytes += l.bytes;
		s->evicted_raw += st.evicted_raw_bytes;
		segment_set_chunks(s->current, cpu, &l, st.evicted_chunks > 0);
		if (st.evicted_chunks > 0 &&
		    asprintf(&text, "%sftraced-evicted-bytes: %" PRIu64 "\n",
			     cs->cut_text ?: "", st.evicted_raw_bytes) >= 0) {
			free(cs->cut_text);
			cs->cut_text = text;
		}
	}
	return 0;
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
	r = s->config.keep_size ? open_keep_segment(s) : session_open_segment(s, &s->current);
	if (r < 0) {
		session_set_error(s, r, s->config.keep_size ? "cannot keep -m's data: %s" :
				  "cannot create spool files in the state directory: %s",
				  strerror(-r));
		return r;
	}
	/* A file on disk is written as the capture goes, so that the stop only finishes it. */
	if (s->config.mode == FTRACED_MODE_RECORD && s->config.zstd && s->out_fd >= 0 &&
	    !s->config.keep_size) {
		r = segment_mirror_into(s->current, s->out_fd);
		if (r < 0)
			log_debug_errno(r, "Session '%s': the output is written at the stop, from "
					"the spool: %m", s->name);
	}
	session_stream_params(s, &params);
	/* Without a segment's spools, the streams push into the CPUs' rings. */
	r = stream_set_open(&s->cpus, s->instance, &params,
			    s->config.keep_size ? NULL : s->current, error, sizeof(error));
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
	s->read_timer = sd_event_source_disable_unref(s->read_timer);
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

/* A stream failed while running: stop everything, keep what was captured. */
void session_check_streams(struct session *s)
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
void session_all_drained(struct session *s)
{
	int r;

	session_check_streams(s);
	r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ false, /* text= */ true);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	if (s->flight) {
		flight_drained(s->flight);
		return;
	}
	r = s->config.keep_size ? collect_kept(s) : 0;
	if (r < 0)
		session_set_error(s, r, "cannot collect -m's data: %s", strerror(-r));
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
	stream_set_rings_free(&s->cpus); /* record -m: its chunks are the segment's now */
	if (s->config.mode == FTRACED_MODE_RECORD) {
		/*
		 * The instance goes once the file is written (segment_published()):
		 * removing it takes the kernel tens of milliseconds with tracefs's
		 * event lock held, and the assembler reads event formats under
		 * that lock.
		 */
		if (s->error < 0) {
			session_retire_instance(s);
			s->current = segment_free(s->current);
			s->state = SESSION_FAILED;
			return;
		}
		s->state = SESSION_ASSEMBLING;
	} else {
		s->state = SESSION_STOPPED;
	}
	/* A rotation asked for before the stop gets the last segment: it ends later still. */
	session_rotations_close(s, segment_seq(s->current));
	session_publish_segment(s, TAKE_PTR(s->current));
	if (s->config.mode == FTRACED_MODE_RECORD && s->publisher.n_items == 0) {
		session_retire_instance(s);
		s->state = SESSION_FAILED;
	}
}
