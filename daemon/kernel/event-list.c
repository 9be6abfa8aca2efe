// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Event specifications as trace-cmd users type them turned into the list
 * of concrete events the kernel has:
 *
 *   all                    every event
 *   SYSTEM                 every event of a system ("sched")
 *   SYSTEM:EVENT           one event; either part may be a glob ("syscalls:sys_enter_*")
 *   EVENT                  an event by its name alone ("sched_switch"), if one system has it
 *
 * A word without a colon names systems first and events only if no system
 * matches, as trace-cmd does. Names are only ever taken from the kernel's
 * own listing (struct event_catalog): a spec that matches nothing is an
 * error naming the spec, and nothing built from client text reaches a
 * tracefs path unchecked. The list is bounded by the bytes of its names,
 * not by a count: every event a kernel has must fit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/probe.h"

#include "daemon/kernel/event-list.h"

struct catalog_system {
	char *name;
	char **events;   /* sorted; NULL until the system is first looked into */
	size_t n_events;
};

struct event_catalog {
	int events_fd;   /* tracefs's events/ */
	size_t n_systems;
	struct catalog_system *systems; /* sorted by name */
};

static int cmp_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void strings_free(char **v, size_t n)
{
	for (size_t k = 0; v && k < n; k++)
		free(v[k]);
	free(v);
}

/*
 * The subdirectories of @dir_fd, sorted: systems in events/, events in a
 * system's directory. Files (enable, filter, header_page) are not names;
 * nor are the directory's own entries, nor names over @name_max.
 */
static int list_subdirs(int dir_fd, size_t name_max, char ***ret, size_t *ret_n)
{
	size_t n = 0, n_allocated = 0;
	struct dirent *de;
	char **v = NULL;
	int fd, r = 0;
	DIR *d;

	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		r = negative_errno();
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		struct stat st;
		bool is_dir;

		/* A name longer than a request can carry could never be asked for by name. */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strlen(de->d_name) > name_max)
			continue;
		if (de->d_type == DT_UNKNOWN)
			is_dir = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				 S_ISDIR(st.st_mode);
		else
			is_dir = de->d_type == DT_DIR;
		if (!is_dir)
			continue;
		if (n == n_allocated) {
			char **nv = reallocarray(v, n_allocated ? n_allocated * 2 : 64, sizeof(*v));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
			n_allocated = n_allocated ? n_allocated * 2 : 64;
		}
		v[n] = strdup(de->d_name);
		if (!v[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r < 0) {
		strings_free(v, n);
		return r;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), cmp_string);
	*ret = v;
	*ret_n = n;
	return 0;
}

/**
 * event_catalog_new() - the kernel's event systems, their events read as needed.
 * @tracing_dir: tracefs mount, or NULL for the default
 * @ret: the catalog
 *
 * "ftrace" is a system here although it has no enable file (libtracefs
 * leaves it out): its events cannot be enabled, but their formats (print
 * for markers) are real.
 *
 * Return: 0 or -errno.
 */
int event_catalog_new(const char *tracing_dir, struct event_catalog **ret)
{
	_cleanup_(event_catalog_freep) struct event_catalog *c = NULL;
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0;
	int r;

	if (!tracing_dir)
		tracing_dir = tracefs_tracing_dir();
	if (!tracing_dir)
		return -ENOENT;
	if ((size_t)snprintf(path, sizeof(path), "%s/events", tracing_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->events_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->events_fd < 0)
		return negative_errno();
	r = list_subdirs(c->events_fd, FTRACED_NAME_MAX, &names, &n);
	if (r < 0)
		return r;
	c->systems = calloc(n ? n : 1, sizeof(*c->systems));
	if (!c->systems) {
		strings_free(names, n);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		c->systems[k].name = names[k];
	free(names);
	c->n_systems = n;
	*ret = TAKE_PTR(c);
	return 0;
}

struct event_catalog *event_catalog_free(struct event_catalog *c)
{
	if (!c)
		return NULL;
	for (size_t k = 0; k < c->n_systems; k++) {
		free(c->systems[k].name);
		strings_free(c->systems[k].events, c->systems[k].n_events);
	}
	free(c->systems);
	if (c->events_fd >= 0)
		close(c->events_fd);
	free(c);
	return NULL;
}

/* A system's events, read from its directory the first time they are asked for. */
static int system_events(struct event_catalog *c, struct catalog_system *s)
{
	int fd, r;

	if (s->events)
		return 0;
	fd = openat(c->events_fd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	r = list_subdirs(fd, FTRACED_EVENT_SPEC_MAX, &s->events, &s->n_events);
	close(fd);
	if (r >= 0 && !s->events)
		s->events = calloc(1, sizeof(*s->events)); /* read, and empty */
	return r < 0 ? r : s->events ? 0 : -ENOMEM;
}

/**
 * event_catalog_walk() - every event the kernel lists, system by system, in name order.
 * @c: catalog
 * @fn: called with each; a negative return stops the walk
 * @userdata: for @fn
 *
 * Return: 0, or what @fn or a read returned.
 */
int event_catalog_walk(struct event_catalog *c,
		       int (*fn)(const char *system, const char *event, void *userdata),
		       void *userdata)
{
	for (size_t k = 0; k < c->n_systems; k++) {
		struct catalog_system *s = &c->systems[k];
		int r = system_events(c, s);

		for (size_t e = 0; r >= 0 && e < s->n_events; e++)
			r = fn(s->name, s->events[e], userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static bool name_matches(const char *pattern, const char *name)
{
	return is_glob(pattern) ? fnmatch(pattern, name, 0) == 0 : strcmp(pattern, name) == 0;
}

/**
 * event_spec_split() - split an exact "system:event", "system:*" or "system".
 * @spec: the spec
 * @system: receives the system name
 * @n_system: its size
 * @event: receives the event name, "*" for all
 * @n_event: its size
 *
 * For what names one event and nothing else (a trigger's); sessions take
 * globs and bare names through event_list_expand().
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

static bool offered(const char *const *list, const char *event)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], event) == 0)
			return true;
	return false;
}

/*
 * Appends one event; event_list_expand() sorts, merges and checks the
 * bound after each spec, so what one spec adds at most is what the kernel has.
 */
static int list_add(struct event_list *l, const char *system, const char *event,
		    const char *filter)
{
	size_t n_sys = strlen(system), n_ev = strlen(event);
	struct event_id *e;
	char *names;

	if (l->n == l->n_allocated) {
		size_t n = l->n_allocated ? l->n_allocated * 2 : 16;

		e = reallocarray(l->events, n, sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->events = e;
		l->n_allocated = n;
	}
	names = malloc(n_sys + n_ev + 2);
	if (!names)
		return -ENOMEM;
	memcpy(names, system, n_sys + 1);
	memcpy(names + n_sys + 1, event, n_ev + 1);
	l->events[l->n++] = (struct event_id){
		.system = names,
		.event = names + n_sys + 1,
		.filter = filter,
	};
	l->n_bytes += n_sys + n_ev + 2;
	return 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct event_id *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	return c ?: strcmp(x->event, y->event);
}

/*
 * Sorted by system, each event once, keeping the filter one of its copies
 * had; -EEXIST if two copies had different filters.
 */
static int sort_and_merge(struct event_list *l)
{
	size_t out = 0;
	int r = 0;

	if (l->n == 0)
		return 0;
	qsort(l->events, l->n, sizeof(*l->events), cmp_event);
	for (size_t k = 1; k < l->n; k++) {
		struct event_id *kept = &l->events[out], *e = &l->events[k];

		if (cmp_event(kept, e) != 0) {
			l->events[++out] = *e;
			continue;
		}
		if (kept->filter && e->filter && strcmp(kept->filter, e->filter) != 0)
			r = -EEXIST;
		kept->filter = kept->filter ?: e->filter;
		l->n_bytes -= strlen(e->system) + strlen(e->event) + 2;
		free((char *)e->system);
	}
	l->n = out + 1;
	return r;
}

/* What one spec matched so far. */
struct match {
	size_t n_added;
	size_t n_refused;   /* ftrace events this session cannot deliver */
	size_t n_systems;   /* systems that had a matching event */
	int error;
};

/*
 * The events of @s whose names match @pattern. An ftrace event is added
 * only if the session delivers it, or if @exact names it and it is
 * delivered by name only.
 */
static void match_system(struct event_list *l, struct event_catalog *cat,
			 struct catalog_system *s, const char *pattern, const char *filter,
			 const struct ftrace_offer *ftrace, struct match *m)
{
	bool ftrace_system = strcmp(s->name, "ftrace") == 0, found = false;
	int r;

	r = system_events(cat, s);
	if (r < 0) {
		m->error = r;
		return;
	}
	for (size_t k = 0; k < s->n_events && m->error >= 0; k++) {
		const char *ev = s->events[k];

		if (!name_matches(pattern, ev))
			continue;
		found = true;
		if (ftrace_system && !offered(ftrace->events, ev) &&
		    !(!is_glob(pattern) && offered(ftrace->by_name, ev))) {
			m->n_refused++;
			continue;
		}
		m->error = list_add(l, s->name, ev, filter);
		if (m->error >= 0)
			m->n_added++;
	}
	if (found)
		m->n_systems++;
}

/* The systems that have an event named @event, for an ambiguous bare name. */
static void systems_with(struct event_catalog *cat, const char *event, char *buf, size_t n)
{
	size_t used = 0;

	if (n > 0)
		buf[0] = '\0';
	for (size_t k = 0; k < cat->n_systems && used < n; k++) {
		struct catalog_system *s = &cat->systems[k];

		if (system_events(cat, s) < 0 ||
		    !bsearch(&event, s->events, s->n_events, sizeof(*s->events), cmp_string))
			continue;
		used += (size_t)snprintf(buf + used, n - used, "%s%s:%s", used ? ", " : "",
					 s->name, event);
	}
}

/**
 * event_list_expand() - add the events one spec names to @l.
 * @l: the list, kept sorted and without duplicates
 * @cat: the kernel's events
 * @spec: what the user typed: all, SYSTEM, SYSTEM:EVENT (globs in either part) or EVENT
 * @filter: the spec's own filter, kept by each of its events; NULL: none
 * @ftrace: the ftrace events the session delivers
 * @n_bytes_max: most bytes the list's names may take ("system:event" and a NUL each)
 * @ambiguous: receives, for -ENOTUNIQ, the events a bare name could mean
 * @n_ambiguous: its size
 *
 * "ftrace", "ftrace:*" and globs name the ftrace events the session
 * delivers but those it delivers only by name; another ftrace event by
 * name is refused.
 *
 * Return: 0; -EINVAL for a malformed spec; -ENOENT if nothing matches;
 * -ENOTUNIQ for an event name several systems have; -EOPNOTSUPP for ftrace
 * events the session cannot deliver; -EEXIST for an event given two
 * different filters; -E2BIG past @n_bytes_max; or -errno reading tracefs.
 */
int event_list_expand(struct event_list *l, struct event_catalog *cat, const char *spec,
		      const char *filter, const struct ftrace_offer *ftrace, size_t n_bytes_max,
		      char *ambiguous, size_t n_ambiguous)
{
	char system[FTRACED_NAME_MAX + 1], event[FTRACED_EVENT_SPEC_MAX + 1];
	const char *colon = strchr(spec, ':');
	struct match m = {};
	bool bare = false;
	int r;

	if (strcmp(spec, "all") == 0) {
		strcpy(system, "*");
		strcpy(event, "*");
	} else if (colon) {
		size_t n_sys = (size_t)(colon - spec);

		if (n_sys == 0 || n_sys >= sizeof(system) || colon[1] == '\0' ||
		    strchr(colon + 1, ':') || strlen(colon + 1) >= sizeof(event))
			return -EINVAL;
		memcpy(system, spec, n_sys);
		system[n_sys] = '\0';
		strcpy(event, colon + 1);
	} else {
		if (spec[0] == '\0' || strlen(spec) >= sizeof(system))
			return -EINVAL;
		strcpy(system, spec);
		strcpy(event, "*");
		bare = true;
	}

	for (size_t k = 0; k < cat->n_systems && m.error >= 0; k++) {
		const char *name = cat->systems[k].name;

		/*
		 * A glob never takes another session's probes, this daemon's or
		 * another's: they come and go with that session, and one gone
		 * before it is enabled or its format written would fail this one.
		 * A session's own group is named exactly.
		 */
		if (is_glob(system) && strncmp(name, PROBE_GROUP_PREFIX,
					       strlen(PROBE_GROUP_PREFIX)) == 0)
			continue;
		if (name_matches(system, name))
			match_system(l, cat, &cat->systems[k], event, filter, ftrace, &m);
	}
	/* No system by that name: an event by its name alone, in whichever system has it. */
	if (bare && m.n_added == 0 && m.n_refused == 0 && m.error >= 0) {
		for (size_t k = 0; k < cat->n_systems && m.error >= 0; k++)
			match_system(l, cat, &cat->systems[k], spec, filter, ftrace, &m);
		if (m.error >= 0 && !is_glob(spec) && m.n_systems > 1) {
			systems_with(cat, spec, ambiguous, n_ambiguous);
			m.error = -ENOTUNIQ;
		}
	}
	if (m.error >= 0 && m.n_added == 0)
		m.error = m.n_refused > 0 ? -EOPNOTSUPP : -ENOENT;
	r = sort_and_merge(l);
	if (m.error >= 0 && r >= 0 && l->n_bytes > n_bytes_max)
		r = -E2BIG;
	return m.error < 0 ? m.error : r;
}

/**
 * event_list_remove() - leave out of @l every event @gone has (trace-cmd's -v).
 * @l: a list, sorted (as event_list_expand() leaves it)
 * @gone: another, sorted
 *
 * Return: how many events were left out.
 */
size_t event_list_remove(struct event_list *l, const struct event_list *gone)
{
	size_t out = 0, n_removed = 0;

	for (size_t k = 0; k < l->n; k++) {
		struct event_id *e = &l->events[k];

		if (gone->n > 0 && bsearch(e, gone->events, gone->n, sizeof(*gone->events),
					   cmp_event)) {
			l->n_bytes -= strlen(e->system) + strlen(e->event) + 2;
			free((char *)e->system);
			n_removed++;
			continue;
		}
		l->events[out++] = *e;
	}
	l->n = out;
	return n_removed;
}

/**
 * event_list_set_trigger() - give the events of @l that @these has a trigger (-R).
 * @l: a list, sorted
 * @these: the events one spec gave, sorted
 * @trigger: kept by the caller while @l is used
 *
 * Return: how many were given it, or -EEXIST if one already had another.
 */
int event_list_set_trigger(struct event_list *l, const struct event_list *these,
			   const char *trigger)
{
	int n = 0;

	for (size_t k = 0; k < these->n; k++) {
		struct event_id *e = l->n ? bsearch(&these->events[k], l->events, l->n,
						    sizeof(*l->events), cmp_event) : NULL;

		if (!e)
			continue; /* left out by -v */
		if (e->trigger && strcmp(e->trigger, trigger) != 0)
			return -EEXIST;
		e->trigger = trigger;
		n++;
	}
	return n;
}

void event_list_done(struct event_list *l)
{
	for (size_t k = 0; k < l->n; k++)
		free((char *)l->events[k].system);
	free(l->events);
	*l = (struct event_list){};
}
