// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What other processes do to a running session's instance: tracefs is
 * shared, and root (or anyone the tracefs mount lets in) can turn tracing
 * off in our instance, disable one of its events or clear its buffer. None
 * of it shows in the kernel's loss counters, so a capture would claim "no
 * events lost" after losing them. The checks read tracing_on, set_event and
 * each CPU's stats; each finding is logged once, shown by status (WARNING),
 * written into the files' CPUSTAT texts and reported by the client.
 * A running session checks when one of the files that does these is
 * written (inotify, instance_watch()), so an idle session never wakes;
 * where that cannot be set up, every INTERFERENCE_CHECK_USEC instead.
 * Main thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/flight.h"
#include "daemon/log.h"
#include "daemon/session-internal.h"

/* Records what another process did to the instance, once per kind, for status, log and files. */
static void interfered(struct session *s, const char *what)
{
	size_t n = strlen(s->warning);

	if (strstr(s->warning, what))
		return;
	log_warning("Session '%s': %s", s->name, what);
	snprintf(s->warning + n, sizeof(s->warning) - n, "%s%s", n ? "; " : "", what);
}

/* Reads the watch's pending events; true if there were any (or it cannot tell). */
static bool drain_watch(sd_event_source *watch)
{
	/* Room for a burst of events, each a struct inotify_event without a name. */
	uint64_t buf[256];
	int fd = sd_event_source_get_io_fd(watch);
	bool any = false;
	ssize_t n;

	if (fd < 0)
		return true;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		any = true;
	return any || (n < 0 && errno != EAGAIN);
}

/*
 * What session_check() does. @written: one of tracing_on, set_event or an
 * enable file may have been written since the last check, so they are read
 * (set_event by a walk through every event the kernel has); the CPUs'
 * counters are always compared, as a clear by any means shows there.
 */
static void check(struct session *s, bool written)
{
	char disabled[FTRACED_EVENT_SPEC_MAX + FTRACED_NAME_MAX + 2], what[256];
	bool off = false;

	/* A kernel-backend drain turns tracing off itself. */
	if (s->state != SESSION_RUNNING || !s->instance || flight_draining(s))
		return;
	disabled[0] = '\0';
	if (written &&
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

/**
 * session_check() - notice what another process did to a running session's instance.
 * @s: session
 *
 * Tracing turned off (turned on again), an event disabled, a CPU's buffer
 * cleared (its counters went back): each is logged, shown by status and
 * written into the files' CPUSTAT, so no summary claims "no loss" then.
 * Called on the instance's writes (or every INTERFERENCE_CHECK_USEC), for
 * status, at every rotation and at stop. With the watch, a write by
 * another process has queued its event before that process's write()
 * returned: none pending means tracing_on and the enable files are as the
 * last check found them, and only the counters are compared.
 */
void session_check(struct session *s)
{
	check(s, !s->check_watch || drain_watch(s->check_watch));
}

static int on_check_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);
	int r;

	check(s, true);
	r = sd_event_source_set_time_relative(source, INTERFERENCE_CHECK_USEC);
	return r < 0 ? r : sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

static int on_instance_written(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);

	drain_watch(source);
	check(userdata, true);
	return 0;
}

/* Checks whenever another process writes one of the instance's files. */
static int arm_watch(struct session *s)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	r = instance_watch(s->instance, &s->events, s->cpus.n_cpus, &fd);
	if (r < 0)
		return r;
	r = sd_event_add_io(s->env.event, &s->check_watch, fd, EPOLLIN, on_instance_written, s);
	if (r < 0)
		return r;
	r = sd_event_source_set_io_fd_own(s->check_watch, true);
	if (r < 0) {
		s->check_watch = sd_event_source_disable_unref(s->check_watch);
		return r;
	}
	TAKE_FD(fd);
	return 0;
}

/**
 * session_arm_check() - check the instance whenever it is written to, while running.
 * @s: a session that just started running
 *
 * Without inotify on its files, every INTERFERENCE_CHECK_USEC instead.
 */
void session_arm_check(struct session *s)
{
	int r;

	session_disarm_check(s);
	r = arm_watch(s);
	if (r >= 0)
		return;
	log_debug_errno(r, "Session '%s': cannot watch the instance (%m), checking it every "
			"%u s instead", s->name, (unsigned)(INTERFERENCE_CHECK_USEC / 1000000));
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
