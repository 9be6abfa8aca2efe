// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What other processes do to a session's instance: an inotify watch on
 * the files through which they could interfere (instance_watch()), and the
 * check of what those files say now (instance_check()). The session
 * decides what to make of it (session-check.c). Main thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include <tracefs.h>

#include "daemon/event-list.h"
#include "daemon/instance-internal.h"

/* Watches one file of the instance for writes; @path is freed. */
static int watch_file(int fd, char *path)
{
	int r = path && inotify_add_watch(fd, path, IN_MODIFY) < 0 ? negative_errno() : 0;

	if (!path)
		r = -ENOMEM;
	free(path);
	return r;
}

/**
 * instance_watch() - an inotify fd that wakes when another process writes to the instance.
 * @i: instance
 * @events: the session's events
 * @n_cpus: CPUs whose per_cpu/cpuN/trace is watched
 * @ret_fd: the inotify fd (non-blocking, close-on-exec), for the caller to close
 *
 * What instance_check() and the CPU counters find is done by writing a
 * file: tracing_on, set_event, an enable file that switches one of the
 * session's events off (its own, its system's, events/enable), or trace
 * and per_cpu/cpuN/trace, which clear the buffer. tracefs writes go
 * through the VFS, which notifies inotify (also eventfs, on 6.18), so a
 * session can check when something happened instead of polling. System
 * directories are named from @events, whose names came from the kernel's
 * own event list.
 *
 * Return: 0, or -errno if a file could not be watched (the caller polls
 * instead; -ENOSPC: fs.inotify.max_user_watches is reached).
 */
int instance_watch(struct instance *i, const struct event_list *events, unsigned n_cpus,
		   int *ret_fd)
{
	static const char *const files[] = { "tracing_on", "set_event", "events/enable", "trace" };
	_cleanup_close_ int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	char rel[FTRACED_NAME_MAX + 32];
	int r = 0;

	if (fd < 0)
		return negative_errno();
	for (size_t k = 0; k < ELEMENTSOF(files) && r >= 0; k++)
		r = watch_file(fd, tracefs_instance_get_file(i->tfs, files[k]));
	for (unsigned cpu = 0; cpu < n_cpus && r >= 0; cpu++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/trace", cpu);
		r = watch_file(fd, tracefs_instance_get_file(i->tfs, rel));
	}
	for (size_t k = 0; k < events->n && r >= 0; k++) {
		const struct event_id *e = &events->events[k];

		/* ftrace:* events are written, not switched on (see instance_check()). */
		if (strcmp(e->system, "ftrace") == 0)
			continue;
		/* Sorted by system: its enable file once. */
		if (k == 0 || strcmp(e->system, events->events[k - 1].system) != 0) {
			snprintf(rel, sizeof(rel), "events/%s/enable", e->system);
			r = watch_file(fd, tracefs_instance_get_file(i->tfs, rel));
		}
		if (r >= 0)
			r = watch_file(fd, tracefs_event_get_file(i->tfs, e->system, e->event,
								  "enable"));
	}
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * instance_check() - has anyone else changed the instance under the session?
 * @i: a running session's instance
 * @events: the events the session enabled
 * @ret_tracing_off: tracing_on reads 0
 * @ret_disabled: receives the first enabled event that no longer is ("" if none)
 * @n_disabled: its size
 *
 * Two small reads (tracing_on and set_event), cheap enough for every
 * status request, rotation and stop; a session of every event the kernel
 * has looks each up in set_event's sorted lines.
 *
 * Return: 0 or -errno of a read.
 */
int instance_check(struct instance *i, const struct event_list *events, bool *ret_tracing_off,
		   char *ret_disabled, size_t n_disabled)
{
	_cleanup_free_ char *on = NULL, *set = NULL;
	_cleanup_free_ char **lines = NULL;
	size_t n_lines = 0;
	char *save = NULL;
	int r;

	r = instance_read(i, "tracing_on", &on, NULL);
	if (r < 0)
		return r;
	/* An empty set_event (every event switched off) may read as nothing at all. */
	if (instance_read(i, "set_event", &set, NULL) < 0)
		set = strdup("");
	if (!set)
		return -ENOMEM;
	*ret_tracing_off = on[0] == '0';
	ret_disabled[0] = '\0';
	/* set_event's lines, sorted: each of the session's events is looked up in them. */
	for (char *p = set; *p; p++)
		n_lines += *p == '\n';
	lines = calloc(n_lines + 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	n_lines = 0;
	for (char *p = strtok_r(set, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		lines[n_lines++] = p;
	qsort(lines, n_lines, sizeof(*lines), cmp_line);
	for (size_t k = 0; k < events->n; k++) {
		const struct event_id *e = &events->events[k];
		char line[FTRACED_NAME_MAX + FTRACED_EVENT_SPEC_MAX + 2];
		const char *key = line;

		/* ftrace:* events are not enabled: they are written, not switched on. */
		if (strcmp(e->system, "ftrace") == 0)
			continue;
		snprintf(line, sizeof(line), "%s:%s", e->system, e->event);
		if (!bsearch(&key, lines, n_lines, sizeof(*lines), cmp_line)) {
			snprintf(ret_disabled, n_disabled, "%s", line);
			break;
		}
	}
	return 0;
}
