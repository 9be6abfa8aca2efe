// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What other processes do to a running session's instance: tracefs is
 * shared, and root (or anyone the tracefs mount lets in) can turn tracing
 * off in our instance, disable one of its events, clear its buffer or
 * change a setting that decides what is recorded (the clock, the CPU
 * mask, a filter, an option). None of it shows in the kernel's loss
 * counters, so a capture would claim "no events lost" after losing them.
 * The checks compare the instance with the baseline taken at the start
 * (instance-watch.c), read tracing_on and set_event, and each CPU's
 * counters (its worker's, capture-stream.c, where it is read); each
 * finding is logged once, shown by status (WARNING), written into the
 * files' CPUSTAT texts and reported by the client. A running session
 * checks when one of those files is written (inotify), so an idle session
 * never wakes; where that cannot be set up, every INTERFERENCE_CHECK_USEC
 * instead. Main thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/flight/flight.h"
#include "daemon/base/log.h"
#include "daemon/session/session-internal.h"

/* Records what another process did to the instance, once per kind, for status, log and files. */
static void interfered(struct session *s, const char *what)
{
	size_t n = strlen(s->warning);

	if (strstr(s->warning, what))
		return;
	log_warning("Session '%s': %s", s->name, what);
	snprintf(s->warning + n, sizeof(s->warning) - n, "%s%s", n ? "; " : "", what);
}

/*
 * What session_check() does with what the watch found. @c->control: one of
 * tracing_on, set_event or an enable file may have been written since the
 * last check, so they are read (set_event by a walk through every event
 * the kernel has); a CPU no worker reads has its counters compared (its
 * worker watches them otherwise, session_note_clears()).
 */
static void check(struct session *s, const struct instance_changes *c)
{
	char disabled[FTRACED_EVENT_SPEC_MAX + FTRACED_NAME_MAX + 2], what[256];
	bool off = false;

	if (s->state != SESSION_RUNNING || !s->instance)
		return;
	if (c->changed[0])
		interfered(s, c->changed);
	/* A kernel-backend drain turns tracing off itself. */
	if (flight_draining(s->flight))
		return;
	disabled[0] = '\0';
	if (c->control &&
	    instance_check(s->instance, &s->events, &off, disabled, sizeof(disabled)) < 0)
		return;
	if (off) {
		interfered(s, "tracing was turned off in the instance by another process (turned "
			   "on again; events in between were not recorded)");
		(void)instance_set_tracing(s->instance, true);
	}
	if (disabled[0]) {
		snprintf(what, sizeof(what), "event %s was disabled by another process", disabled);
		interfered(s, what);
	}
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct cpu_counters now;
		uint64_t gone, lost = 0;

		/* A CPU being read: its worker watches the counters (session_note_clears()). */
		if (cs->stream)
			continue;
		if (instance_read_cpu_stats(s->instance, cpu, &now, NULL) < 0)
			continue;
		/*
		 * Events leave the buffer by being read or overwritten; a clear
		 * resets the counters, or makes entries vanish without either.
		 */
		if (now.read < cs->seen.read || now.overrun < cs->seen.overrun) {
			lost = MAX(cs->seen.entries, (uint64_t)1);
		} else {
			gone = (now.read - cs->seen.read) + (now.overrun - cs->seen.overrun);
			if (now.entries + gone < cs->seen.entries)
				lost = cs->seen.entries - now.entries - gone;
		}
		if (lost > 0) {
			snprintf(what, sizeof(what), "the buffer of CPU %u was cleared by another "
				 "process (about %" PRIu64 " unread events lost)", cpu, lost);
			interfered(s, what);
		}
		cs->seen = now;
	}
}

/*
 * Another process removed the instance (rmdir: tracefs refuses it only
 * while a file of it is open, so a session not capturing, stopped or
 * waiting, is exposed): nothing more can be recorded in it and a start
 * would fail on it. The session ends with that as its error, once; a
 * running one stops (what its workers took is kept). Return: true if gone.
 */
static bool check_removed(struct session *s)
{
	if (!s->instance || instance_exists(s->instance))
		return false;
	if (s->error == 0) {
		session_set_error(s, -ENOENT, "its tracefs instance '%s' was removed by another "
				  "process: the session cannot record any more (destroy it, or "
				  "create it again)", instance_name(s->instance));
		log_warning("Session '%s': %s", s->name, s->error_message);
	}
	if (s->state == SESSION_RUNNING)
		session_request_stop(s);
	return true;
}

/**
 * session_note_clears() - report the clears a CPU's worker saw in the kernel's counters.
 * @s: session
 * @cpu: CPU
 * @c: its stream's counters now
 */
void session_note_clears(struct session *s, unsigned cpu, const struct capture_counters *c)
{
	struct cpu_stream *cs = &s->cpus.cpus[cpu];
	char what[160];

	if (c->clears <= cs->clears_seen)
		return;
	snprintf(what, sizeof(what), "the buffer of CPU %u was cleared by another process "
		 "(about %" PRIu64 " unread events lost)", cpu, c->cleared - cs->cleared_seen);
	interfered(s, what);
	cs->clears_seen = c->clears;
	cs->cleared_seen = c->cleared;
}

/**
 * session_check() - notice what another process did to a running session's instance.
 * @s: session
 *
 * Tracing turned off (turned on again), an event disabled, a setting
 * changed since the start (the clock, the CPU mask, a filter, an option,
 * the buffer's size, ...), a CPU's buffer cleared: each is logged, shown
 * by status and written into the files' CPUSTAT, so no summary claims "no
 * loss" then. Called on the instance's writes (or every
 * INTERFERENCE_CHECK_USEC), for status, at every rotation and at stop.
 * With the watch, a write by another process has queued its event before
 * that process's write() returned: none pending means the instance is as
 * the last check found it, and only the counters are compared.
 */
void session_check(struct session *s)
{
	struct instance_changes c = { .control = !s->watch };

	if (check_removed(s))
		return;
	if (s->watch)
		instance_watch_read(s->watch, &c);
	check(s, &c);
}

static int on_check_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);
	int r;

	session_check(s);
	r = sd_event_source_set_time_relative(source, INTERFERENCE_CHECK_USEC);
	return r < 0 ? r : sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

static int on_instance_written(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);

	session_check(s);
	return 0;
}

/**
 * session_arm_check() - the instance's baseline; checks whenever it is written to.
 * @s: a session that just started running
 *
 * Without inotify on its files, every INTERFERENCE_CHECK_USEC instead.
 */
void session_arm_check(struct session *s)
{
	int r, watch_error = -ENOMEM;

	session_disarm_check(s);
	r = instance_watch_new(s->instance, &s->events, s->cpus.n_cpus, flight_swaps(s->flight),
			       &s->watch, &watch_error);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot take the instance's settings to check "
				  "them against later, checking tracing and events only: %m",
				  s->name);
	if (s->watch && watch_error >= 0) {
		r = sd_event_add_io(s->env.event, &s->check_watch, instance_watch_fd(s->watch),
				    EPOLLIN, on_instance_written, s);
		if (r >= 0)
			return;
		watch_error = r;
	}
	log_debug_errno(watch_error, "Session '%s': cannot watch the instance (%m), checking it "
			"every %u s instead", s->name,
			(unsigned)(INTERFERENCE_CHECK_USEC / 1000000));
	r = sd_event_add_time_relative(s->env.event, &s->check_timer, CLOCK_MONOTONIC,
				       INTERFERENCE_CHECK_USEC, INTERFERENCE_CHECK_USEC / 4,
				       on_check_timer, s);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot arm the instance check, proceeding "
				  "anyway: %m", s->name);
}

/**
 * session_disarm_check() - no more checks but the explicit ones (status, rotation, stop).
 * @s: session
 */
void session_disarm_check(struct session *s)
{
	s->check_timer = sd_event_source_disable_unref(s->check_timer);
	s->check_watch = sd_event_source_disable_unref(s->check_watch);
	s->watch = instance_watch_free(s->watch);
}

/**
 * session_cpustat_text() - a CPU's CPUSTAT text with what ftraced knows of its losses.
 * @s: session
 * @discarded: events of this CPU that ftraced could not store
 * @text: the kernel's stats text (taken over; may be NULL)
 *
 * So the file says what status said: readers see it in the CPU statistics.
 * A gap (the daemon was away) goes into the first file after it only.
 *
 * Return: the text to store.
 */
char *session_cpustat_text(const struct session *s, uint64_t discarded, char *text)
{
	char lost[64] = "", warning[sizeof(s->warning) + 32] = "", gap[sizeof(s->gap) + 32] = "";
	char *out;

	if (!s->warning[0] && discarded == 0 && !s->gap_in_next_file)
		return text;
	if (discarded > 0)
		snprintf(lost, sizeof(lost), "ftraced-discarded: %" PRIu64 "\n", discarded);
	if (s->warning[0])
		snprintf(warning, sizeof(warning), "ftraced-warning: %s\n", s->warning);
	if (s->gap_in_next_file)
		snprintf(gap, sizeof(gap), "ftraced-gap: %s\n", s->gap);
	if (asprintf(&out, "%s%s%s%s", text ?: "", lost, warning, gap) < 0)
		return text;
	free(text);
	return out;
}
