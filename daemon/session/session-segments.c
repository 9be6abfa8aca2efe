// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's segments and timers: naming and opening the next segment,
 * rotating a continuous session into it (every worker cuts its stream at
 * the same moment), handing closed segments to the publisher, the
 * clients waiting for a rotation (answered once its segment is on disk),
 * and the segment-time and duration timers. Changes no session state: the duration
 * and a failed rotation ask the event loop for a stop (session_request_stop()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/session/session-internal.h"
#include "lib/time-util.h"

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);

	if (source == s->segment_timer) {
		session_rotate(s);
		return 0;
	}
	log_info("Session '%s': duration reached, stopping", s->name);
	session_request_stop(s);
	return 0;
}

/*
 * A timer @usec from now. sd_event_add_time_relative() counts from the
 * start of the loop iteration, which a slow kernel write before it (a
 * large ring's allocation) may have left seconds behind: -d 2s would end
 * the capture at once.
 */
int session_add_timer(struct session *s, sd_event_source **ret, uint64_t usec)
{
	return sd_event_add_time(s->env.event, ret, CLOCK_MONOTONIC, monotonic_usec() + usec,
				 TIMER_ACCURACY_USEC, on_timer, s);
}

void session_arm_segment_timer(struct session *s)
{
	int r;

	s->segment_timer = sd_event_source_disable_unref(s->segment_timer);
	if (s->config.segment_time_ms == 0)
		return;
	r = session_add_timer(s, &s->segment_timer, s->config.segment_time_ms * 1000);
	if (r < 0)
		log_error_errno(r, "Session '%s': cannot arm the segment timer: %m", s->name);
}

/*
 * Opens the next segment, naming its file now (the recipe needs it):
 * continuous: sessions/<name>/<name>-<UTC start, ms>-<seq>.dat, which ls sorts
 * in time order; a record's only goes to recovered/ if the daemon dies.
 */
int session_open_segment(struct session *s, struct segment **ret)
{
	char stamp[32], target[PUBLISH_NAME_MAX + sizeof(SESSIONS_DIR) + FTRACED_NAME_MAX + 8];
	char origin[FTRACED_NAME_MAX + 128];
	uint32_t seq = s->next_seq++;
	int r;

	publish_utc_stamp(stamp, sizeof(stamp));
	if (s->config.mode == FTRACED_MODE_CONTINUOUS) {
		snprintf(target, sizeof(target), SESSIONS_DIR "/%s/%s-%s-%06" PRIu32 ".dat", s->name,
			 s->name, stamp, seq);
		snprintf(origin, sizeof(origin), "ftraced-origin: session '%s' (continuous), "
			 "segment %" PRIu32 "\n", s->name, seq);
	} else {
		snprintf(target, sizeof(target), "recovered/%s-%s.dat", s->name, stamp);
		snprintf(origin, sizeof(origin), "ftraced-origin: session '%s' (record)\n"
			 "ftraced-cause: ftracectl record by uid %u\n", s->name, (unsigned)s->owner);
	}
	/* Only the first file after a gap says it, in its recipe too (a crash recovers it). */
	r = segment_new(&s->segment_env, seq, target,
			s->gap_in_next_file && ret == &s->current ? s->gap : NULL, ret);
	if (r >= 0 && segment_set_origin(*ret, origin) < 0)
		log_warning("Session '%s': out of memory saying the file's origin in it", s->name);
	return r;
}

/* Hands a closed segment to the publisher: the client's fd (record) or the session's directory. */
void session_publish_segment(struct session *s, struct segment *seg)
{
	struct publish_ticket ticket = {};
	uint32_t seq = segment_seq(seg);
	int r;

	r = publisher_add(&s->publisher, seg, TAKE_FD(s->out_fd), &ticket);
	if (r < 0) {
		session_set_error(s, r, "cannot start writing a segment: %s", strerror(-r));
		session_rotations_answer(s, seq, r, NULL, 0);
	}
}

/**
 * session_rotations_close() - the rotations waited for close segment @seq.
 * @s: session
 * @seq: the segment now closing (a rotation began, or the session stopped)
 *
 * Every client whose rotation had not begun is answered when that segment
 * is on disk: it holds everything up to now, which is after its request.
 */
void session_rotations_close(struct session *s, uint32_t seq)
{
	for (size_t i = 0; i < s->n_rotations; i++)
		if (s->rotations[i].seq == 0)
			s->rotations[i].seq = seq;
}

/**
 * session_rotations_answer() - segment @seq is on disk (or failed): its waiters hear it.
 * @s: session
 * @seq: the segment; 0: the rotations that could not begin
 * @result: 0, or -errno
 * @path: the file's absolute path, or NULL
 * @bytes: its size
 */
void session_rotations_answer(struct session *s, uint32_t seq, int result, const char *path,
			      uint64_t bytes)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_rotations; i++) {
		struct rotation_waiter w = s->rotations[i];

		if (w.seq != seq) {
			s->rotations[kept++] = w;
			continue;
		}
		if (w.waiter && s->env.on_rotated)
			s->env.on_rotated(s, w.waiter, result, path, bytes, NULL, s->env.userdata);
	}
	s->n_rotations = kept;
}

/**
 * session_rotations_forget() - a client went away: its rotation goes on, unanswered.
 * @s: session
 * @waiter: what was passed to session_rotate_request()
 */
void session_rotations_forget(struct session *s, const void *waiter)
{
	for (size_t i = 0; i < s->n_rotations; i++)
		if (s->rotations[i].waiter == waiter)
			s->rotations[i].waiter = NULL;
}

/**
 * session_rotations_have() - does @waiter wait for a rotation?
 * @s: session
 * @waiter: what was passed to session_rotate_request()
 *
 * Return: true until it was answered.
 */
bool session_rotations_have(const struct session *s, const void *waiter)
{
	for (size_t i = 0; i < s->n_rotations; i++)
		if (s->rotations[i].waiter == waiter)
			return true;
	return false;
}

/* Asks every worker to cut its stream and continue into a new segment. */
void session_rotate(struct session *s)
{
	struct capture_cut cut;
	int r;

	if (s->state != SESSION_RUNNING || s->config.mode != FTRACED_MODE_CONTINUOUS ||
	    s->cut_generation != 0)
		return;
	r = session_open_segment(s, &s->next);
	if (r < 0) {
		log_error_errno(r, "Session '%s': cannot open the next segment, continuing in the "
				"current one: %m", s->name);
		session_rotations_answer(s, 0, r, NULL, 0);
		session_arm_segment_timer(s);
		return;
	}
	session_check(s);
	/* The same moment ends the current segment and begins the next one. */
	r = stream_set_read_stats(&s->cpus, s->instance, /* start= */ false, /* text= */ true);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		segment_set_start(s->next, cpu, &s->cpus.cpus[cpu].cut, s->cpus.cpus[cpu].cut_text);
	capture_stream_cut(s->cpus.cpus[0].stream, &cut);
	s->cut_generation = cut.generation + 1;
	session_rotations_close(s, segment_seq(s->current));
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		r = capture_pool_rotate(s->env.pool, s->cpus.cpus[cpu].stream,
					segment_spool_fd(s->next, cpu), segment_trace_id(s->next));
		if (r < 0) {
			/* Some CPUs may already write to the next segment: stop cleanly. */
			session_set_error(s, r, "cannot rotate CPU %u: %s", cpu, strerror(-r));
			session_request_stop(s);
			return;
		}
	}
}

/* Every worker switched: the current segment is complete up to the cut. */
void session_complete_rotation(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct capture_cut cut;

		capture_stream_cut(cs->stream, &cut);
		segment_close_cpu(s->current, cpu, cut.bytes_stored - cs->base_bytes,
				  cut.chunks - cs->base_chunks, &cs->cut,
				  session_cpustat_text(s, 0, TAKE_PTR(cs->cut_text)));
		cs->base_bytes = cut.bytes_stored;
		cs->base_chunks = cut.chunks;
	}
	s->gap_in_next_file = false;
	session_publish_segment(s, TAKE_PTR(s->current));
	s->current = TAKE_PTR(s->next);
	s->cut_generation = 0;
	if (s->state != SESSION_RUNNING)
		return;
	session_arm_segment_timer(s);
	/* A client asked while this rotation was under way: its own begins now. */
	for (size_t i = 0; i < s->n_rotations; i++)
		if (s->rotations[i].seq == 0) {
			session_rotate(s);
			break;
		}
}
