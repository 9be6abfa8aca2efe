// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Event specifications as users type them ("sched:sched_switch",
 * "sched:*", "sched") turned into the list of concrete events the kernel
 * has. Names are only ever taken from the kernel's own listing: a spec
 * that matches nothing is an error naming the spec, and nothing built from
 * client text reaches a tracefs path unchecked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tracefs.h>

#include "daemon/event-list.h"
#include "ftraced/macro.h"

/**
 * event_spec_split() - split "system:event", "system:*" or "system".
 * @spec: the spec
 * @system: receives the system name
 * @n_system: its size
 * @event: receives the event name, "*" for all
 * @n_event: its size
 *
 * Return: 0, or -EINVAL for an empty or overlong part.
 */
int event_spec_split(const char *spec, char *system, size_t n_system, char *event, size_t n_event)
{
	const char *colon = strchr(spec, ':');
	size_t n_sys = colon ? (size_t)(colon - spec) : strlen(spec);
	const char *ev = colon ? colon + 1 : "*";

	if (n_sys == 0 || n_sys >= n_system || *ev == '\0' || strlen(ev) >= n_event)
		return -EINVAL;
	if (strchr(ev, ':') || memchr(spec, '*', n_sys))
		return -EINVAL;
	memcpy(system, spec, n_sys);
	system[n_sys] = '\0';
	strcpy(event, ev);
	return 0;
}

/*
 * Whether the kernel lists a directory @system under events/: the kernel's
 * system list is the whitelist, which also keeps names like ".." away from
 * any path. One directory read: tracefs_event_systems() also stats every
 * system and its enable file, about 0.9 ms for 100 systems, and a session
 * asks once per spec. "ftrace" counts here, though it has no enable file
 * and libtracefs leaves it out: it cannot be enabled, but its formats
 * (print for markers) are real.
 *
 * Return: 1, 0, or -errno if events/ cannot be read.
 */
static int system_listed(const char *tracing_dir, const char *system)
{
	char path[PATH_MAX];
	struct dirent *de;
	int found = 0;
	DIR *d;

	/* The directory's own entries are directories too. */
	if (strcmp(system, ".") == 0 || strcmp(system, "..") == 0)
		return 0;
	if (!tracing_dir)
		tracing_dir = tracefs_tracing_dir();
	if (!tracing_dir)
		return -ENOENT;
	if ((size_t)snprintf(path, sizeof(path), "%s/events", tracing_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while (!found && (de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, system) != 0)
			continue;
		/* enable, header_page and header_event are files, not systems. */
		if (de->d_type == DT_UNKNOWN)
			found = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				S_ISDIR(st.st_mode);
		else
			found = de->d_type == DT_DIR;
	}
	closedir(d);
	return found;
}

static bool list_contains(char **list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* Adds one event, or gives one already there its filter; -EEXIST for a second, different one. */
static int list_add(struct event_list *l, const char *system, const char *event,
		    const char *filter, size_t n_max)
{
	struct event_id *e;

	for (size_t i = 0; i < l->n; i++) {
		e = &l->events[i];
		if (strcmp(e->system, system) != 0 || strcmp(e->event, event) != 0)
			continue;
		if (filter && e->filter && strcmp(filter, e->filter) != 0)
			return -EEXIST;
		e->filter = e->filter ?: filter;
		return 0;
	}
	if (l->n >= n_max)
		return -E2BIG;
	if (strlen(system) >= sizeof(e->system) || strlen(event) >= sizeof(e->event))
		return -ENAMETOOLONG;
	e = realloc(l->events, (l->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	l->events = e;
	e = &l->events[l->n++];
	strcpy(e->system, system);
	strcpy(e->event, event);
	e->filter = filter;
	return 0;
}

/*
 * The ftrace system's events are written by the kernel's tracers, not
 * enabled like tracepoints: only those the session's own instance produces
 * (@deliverable: its marker files, its tracer, its stacks) may be asked
 * for; any other would record nothing, silently.
 */
static bool ftrace_event_deliverable(const char *const *deliverable, const char *event)
{
	for (size_t i = 0; deliverable && deliverable[i]; i++)
		if (strcmp(deliverable[i], event) == 0)
			return true;
	return false;
}

static int cmp_event(const void *a, const void *b)
{
	const struct event_id *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	return c ?: strcmp(x->event, y->event);
}

/**
 * event_list_expand() - add the events one spec names to @l.
 * @l: the list, kept sorted and without duplicates
 * @tracing_dir: tracefs mount, or NULL for the default
 * @spec: what the user typed
 * @filter: the spec's own filter, kept by each of its events; NULL: none
 * @ftrace: the ftrace events the session delivers
 * @n_max: most events the list may hold
 *
 * "ftrace" and "ftrace:*" name the ftrace events the session delivers
 * but those it delivers only by name; another ftrace event by name is
 * refused.
 *
 * Return: 0; -EINVAL for a malformed spec; -ENOENT if the system or event
 * does not exist; -EOPNOTSUPP for an ftrace event the session cannot
 * deliver; -EEXIST for an event given two different filters; -E2BIG if the
 * list would exceed @n_max.
 */
int event_list_expand(struct event_list *l, const char *tracing_dir, const char *spec,
		      const char *filter, const struct ftrace_offer *ftrace, size_t n_max)
{
	char system[FTRACED_NAME_MAX + 1], event[FTRACED_EVENT_SPEC_MAX + 1];
	char **events = NULL;
	int r;

	r = event_spec_split(spec, system, sizeof(system), event, sizeof(event));
	if (r < 0)
		return r;
	r = system_listed(tracing_dir, system);
	if (r <= 0)
		return r ?: -ENOENT;
	events = tracefs_system_events(tracing_dir, system);
	if (!events)
		return -ENOENT;
	r = 0;
	if (strcmp(event, "*") == 0) {
		for (size_t i = 0; events[i] && r >= 0; i++)
			if (strcmp(system, "ftrace") != 0 ||
			    ftrace_event_deliverable(ftrace->events, events[i]))
				r = list_add(l, system, events[i], filter, n_max);
	} else if (!list_contains(events, event)) {
		r = -ENOENT;
	} else if (strcmp(system, "ftrace") == 0 &&
		   !ftrace_event_deliverable(ftrace->events, event) &&
		   !ftrace_event_deliverable(ftrace->by_name, event)) {
		r = -EOPNOTSUPP;
	} else {
		r = list_add(l, system, event, filter, n_max);
	}
	if (r >= 0)
		qsort(l->events, l->n, sizeof(*l->events), cmp_event);
	tracefs_list_free(events);
	return r;
}

void event_list_done(struct event_list *l)
{
	free(l->events);
	*l = (struct event_list){};
}
