// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's symbols, kept fresh for a running session's files. A file
 * with events takes a copy younger than its lifetime (kallsyms.c); with an
 * older one, the file's writer reads the symbols itself: ~50 ms of CPU on
 * the stop's path (30 ms target), a snapshot's or a segment's. So while a
 * session has captured anything, the copy is refreshed ahead, on a thread,
 * KALLSYMS_REFRESH_LEAD_USEC before it expires.
 *
 * The workers' reports (their first stored chunk, then every
 * PROGRESS_NOTIFY_BYTES) are one occasion; a one-shot timer at that time
 * is the other, for a slow session whose workers wake only once a CPU has
 * a batch, and it is what makes a lead of seconds enough. A look that
 * finds nothing captured yet (the file would take a copy of any age) looks
 * once more, halfway to the expiry, then waits for the workers: a session
 * whose events never fire wakes the daemon at most twice.
 *
 * Main thread only.
 */
#include <stdint.h>

#include "daemon/base/bounds.h"
#include "daemon/base/event-timer.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/session/session-internal.h"
#include "ftraced/macro.h"
#include "lib/time-util.h"

/* A look may come this much late (neighbouring wake-ups merge): well within the lead. */
#define SYMBOLS_LOOK_ACCURACY_USEC (UINT64_C(1000) * 1000)

static int on_symbols_look(sd_event_source *source, uint64_t usec, void *userdata);

/* Has the instance taken any event since capture began (read, still held or overwritten)? */
static bool captured_any(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		const struct cpu_counters *start = &s->cpus.cpus[cpu].start;
		struct cpu_counters now;

		if (instance_read_cpu_stats(s->instance, cpu, &now, NULL) < 0)
			return true; /* cannot tell: keep the copy fresh */
		if (now.entries > 0 || now.read != start->read || now.overrun != start->overrun)
			return true;
	}
	return false;
}

/*
 * The next look at @at (UINT64_MAX: none). Every report of the workers asks
 * again, mostly for the time already set.
 */
static void arm_look(struct session *s, uint64_t at)
{
	int r;

	if (at == UINT64_MAX) {
		s->symbols_look = sd_event_source_disable_unref(s->symbols_look);
		return;
	}
	if (s->symbols_look) {
		r = event_timer_set(s->symbols_look, at);
	} else {
		r = sd_event_add_time(s->env.event, &s->symbols_look, CLOCK_MONOTONIC, at,
				      SYMBOLS_LOOK_ACCURACY_USEC, on_symbols_look, s);
	}
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot arm the symbols' refresh, a stop may "
				  "read them itself: %m", s->name);
}

static int on_symbols_look(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;
	SESSION_LOG_CONTEXT(s);
	uint64_t expiring = kallsyms_stale_at(s->env.kallsyms, KALLSYMS_EXPIRING), last_look;

	if (s->state != SESSION_RUNNING)
		return 0;
	if (captured_any(s)) {
		arm_look(s, kallsyms_prefetch(s->env.kallsyms, KALLSYMS_EXPIRING));
		return 0;
	}
	/* Halfway from there to its expiry (0 without a copy: no more looks). */
	last_look = expiring + (kallsyms_stale_at(s->env.kallsyms, KALLSYMS_EXPIRED) - expiring) / 2;
	if (last_look > usec + SYMBOLS_LOOK_ACCURACY_USEC)
		arm_look(s, last_look);
	return 0;
}

/**
 * session_keep_symbols() - refresh the symbols now if due, and look again when they will be.
 * @s: a running session
 * @starting: the session starts: only a copy past its whole lifetime is read now
 *            (a short capture's file takes the rest)
 *
 * Called when the session starts running and on every report of its workers.
 */
void session_keep_symbols(struct session *s, bool starting)
{
	if (s->state != SESSION_RUNNING)
		return;
	if (starting) {
		/* A copy already due gets a look once events have had a moment. */
		kallsyms_prefetch(s->env.kallsyms, KALLSYMS_EXPIRED);
		arm_look(s, MAX(kallsyms_stale_at(s->env.kallsyms, KALLSYMS_EXPIRING),
				monotonic_usec() + KALLSYMS_PREFETCH_RETRY_USEC));
	} else {
		arm_look(s, kallsyms_prefetch(s->env.kallsyms, KALLSYMS_EXPIRING));
	}
}

/**
 * session_forget_symbols() - no more looks: the session stopped (or goes).
 * @s: session
 */
void session_forget_symbols(struct session *s)
{
	s->symbols_look = sd_event_source_disable_unref(s->symbols_look);
}
